// Comparison and boolean logic over boolean and integer parameters.
import { countNodes, gen, newCtx, prods, ret, size, type Node, type Param } from '../grammar/index.js';
import { chain, defineFamily, skill, type Candidate } from '../kit.js';
import { drawSpan, ranges, type Level } from '../levels.js';
import { knob, ladder } from '../ladder.js';
import type { Rng } from '../../core/rng.js';

const F = 'logic';

export const logicSkills = [
  skill(F, 'and', 'conjunction', 'Boolean && of two values.', [], 0),
  skill(F, 'or', 'disjunction', 'Boolean || of two values.', [], 0),
  skill(F, 'not', 'negation', 'Boolean ! of a value.', [], 0),
  skill(
    F,
    'nested',
    'nested boolean expressions',
    'Evaluates several boolean operators with precedence (&& before ||).',
    ['logic.and', 'logic.or', 'logic.not'],
    1,
  ),
  skill(F, 'xor', 'boolean equality and xor', '=== and !== between booleans.', ['logic.and', 'logic.or'], 2),
  skill(F, 'compare', 'integer comparison', '< <= > >= === !== between integers.', ['arith.sub'], 2),
  skill(
    F,
    'range',
    'range checks',
    'Combines comparisons with && / || (lo <= a && a < hi).',
    ['logic.compare', 'logic.nested'],
    2,
  ),
];

const BOOL = ['p', 'q', 'r', 's', 't'];
const INT = ['a', 'b'];
const CONNECTIVES = prods('and', 'or', 'not');
const COMPARISONS = [...CONNECTIVES, ...prods('xor', 'lt', 'gt', 'eq', 'le', 'ge', 'ne', 'add', 'sub')];

const LEVELS = [
  // Level 0 is one operator over one or two of 3-5 parameters; the others stay in the signature
  // of deduction and abduction tasks (keepParams), so that the answer depends on which argument is
  // which and the space is large enough for balanced probe sets (src/run/probes.ts).
  {
    params: { bool: [3, 5], int: 0 },
    exprs: { body: { ops: CONNECTIVES, depth: 1, leaf: 1, ints: [1, 9] } },
    inputs: ranges([0, 9]),
  },
  {
    params: { bool: [2, 3], int: 0 },
    exprs: { body: { ops: CONNECTIVES, depth: 2, leaf: 0.2, ints: [1, 9] } },
    inputs: ranges([0, 9]),
  },
  {
    params: { bool: [2, 3], int: [1, 2] },
    exprs: {
      body: {
        ops: [...CONNECTIVES, ...prods('xor', 'beq', 'lt', 'gt', 'eq', 'le')],
        depth: 3,
        leaf: 0.2,
        ints: [1, 9],
      },
    },
    inputs: ranges([0, 20]),
  },
  {
    params: { bool: [1, 2], int: 2 },
    exprs: { body: { ops: COMPARISONS, depth: 3, leaf: 0.2, ints: [1, 15] } },
    inputs: ranges([0, 20]),
  },
  {
    shape: 'const t1 = E; …; return E (each definition reads the one before it, t1 a parameter)',
    params: { bool: [2, 2], int: 2 },
    counts: { definitions: 0 },
    exprs: {
      body: {
        ops: [...COMPARISONS, ...prods('mul', 'mod', 'ifBool', 'ifInt', 'even')],
        depth: 4,
        leaf: 0.2,
        ints: [1, 15],
      },
    },
    inputs: ranges([-20, 20]),
  },
] satisfies Level[];

/** logic's levels (exported for generators/label.ts, which reads a program's level from them). */
export const LADDER = ladder(LEVELS, [
  knob.count('definitions', { by: 1, every: 2, max: 60, why: 'programs would near the 16,000-character limit' }),
  knob.ints({ by: 10 }),
]);

const BOOL_OPS = new Set<string>(['&&', '||', '!']);
const AND_OR = new Set<string>(['&&', '||']);

function candidate(rng: Rng, level: number): Candidate {
  // From level 2 a candidate has at least 5 AST nodes (one-operator programs belong to levels 0-1).
  for (let i = 0; i < 10; i++) {
    const c = candidate1(rng, level);
    if (level < 2 || size(c.prog) >= 5) return c;
  }
  return candidate1(rng, level);
}

function candidate1(rng: Rng, level: number): Candidate {
  const { params, exprs, counts } = LADDER.at(level);
  const nb = drawSpan(rng, params.bool);
  const ps: Param[] = [
    ...BOOL.slice(0, nb).map((name) => ({ name, type: 'bool' })),
    ...INT.slice(0, drawSpan(rng, params.int)).map((name) => ({ name, type: 'int' })),
  ];
  const ctx = newCtx(rng, exprs.body.ops, ps, exprs.body);
  const defs = chain(
    ctx,
    'bool',
    counts?.definitions ?? 0,
    exprs.body.depth,
    ps.map((p) => p.name),
  );
  const body = [...defs.stmts, ret(gen(ctx, 'bool', exprs.body.depth, true, defs.read))];
  const skills = [...ctx.skills, ...logicDerivedSkills(body, ctx.skills)];
  return { prog: { params: ps, body }, skills, keepParams: level === 0 };
}

/**
 * The skills logic reads off a whole body rather than one production, given those of its
 * productions: 'nested' for two or more boolean operators, 'range' for a comparison joined by && or ||.
 */
export function logicDerivedSkills(body: readonly Node[], skills: ReadonlySet<string>): string[] {
  const out: string[] = [];
  if (countNodes(body, (n) => (n.kind === 'bin' || n.kind === 'un') && BOOL_OPS.has(n.op)) >= 2)
    out.push('logic.nested');
  if (skills.has('logic.compare') && countNodes(body, (n) => n.kind === 'bin' && AND_OR.has(n.op)) > 0)
    out.push('logic.range');
  return out;
}

export const logic = defineFamily({
  id: F,
  name: 'comparison and boolean logic',
  description: 'Boolean expressions with && || ! and xor over boolean inputs, and comparisons over integer inputs.',
  skills: logicSkills,
  ladder: LADDER,
  candidate,
});
