// Integer arithmetic: generated expressions over integer parameters, widening to comparisons and bits.
import { countNodes, gen, newCtx, prods, ret, type Node, type Param } from '../grammar/index.js';
import { chain, defineFamily, skill, type Candidate } from '../kit.js';
import { drawSpan, ranges, type Level } from '../levels.js';
import { knob, ladder } from '../ladder.js';
import type { Rng } from '../../core/rng.js';

const F = 'arith';

export const arithSkills = [
  skill(F, 'add', 'addition', 'Adds two integers.', [], 0),
  skill(F, 'sub', 'subtraction', 'Subtracts one integer from another.', ['arith.add'], 0),
  skill(F, 'mul', 'multiplication', 'Multiplies two integers.', ['arith.add'], 0),
  skill(
    F,
    'nested',
    'nested expressions',
    'Evaluates expressions with several operators, respecting precedence.',
    ['arith.sub', 'arith.mul'],
    1,
  ),
  skill(F, 'div', 'floor division', 'Divides and rounds down with Math.floor.', ['arith.mul'], 2),
  skill(F, 'mod', 'modulo', "Takes the remainder with %, including JavaScript's sign rule.", ['arith.div'], 2),
  skill(F, 'neg', 'negation', 'Negates an integer.', ['arith.sub'], 3),
  skill(F, 'abs', 'absolute value', 'Math.abs of an integer.', ['arith.neg'], 3),
  skill(F, 'minmax', 'min and max', 'Math.min / Math.max of two integers.', ['logic.compare'], 3),
];

const NAMES = ['a', 'b', 'c'];
const BASIC = prods('add', 'sub', 'mul');
const DIVISION = [...BASIC, ...prods('div', 'mod')];
const COMPARED = [...DIVISION, ...prods('neg', 'abs', 'min', 'max', 'ifInt', 'lt', 'gt', 'eq')];

const LEVELS = [
  { params: { int: [1, 1] }, exprs: { body: { ops: BASIC, depth: 1, leaf: 1, ints: [1, 9] } }, inputs: ranges([0, 9]) },
  {
    params: { int: [1, 2] },
    exprs: { body: { ops: BASIC, depth: 2, leaf: 0.25, ints: [1, 9] } },
    inputs: ranges([0, 9]),
  },
  {
    params: { int: [2, 2] },
    exprs: { body: { ops: DIVISION, depth: [2, 3], leaf: 0.25, ints: [1, 12] } },
    inputs: ranges([0, 20]),
  },
  {
    params: { int: [2, 3] },
    exprs: { body: { ops: COMPARED, depth: 3, leaf: 0.25, ints: [1, 12] } },
    inputs: ranges([-20, 20]),
  },
  {
    shape: 'const t1 = E; …; return E (each definition reads the one before it, t1 a parameter)',
    params: { int: [3, 3] },
    counts: { definitions: 0 },
    exprs: {
      body: {
        ops: [...COMPARED, ...prods('ge', 'band', 'bor', 'bxor', 'shl', 'shr')],
        depth: 4,
        leaf: 0.25,
        ints: [1, 12],
      },
    },
    inputs: ranges([-50, 50]),
  },
] satisfies Level[];

/** arith's levels (exported for generators/label.ts, which reads a program's level from them). */
export const LADDER = ladder(LEVELS, [
  knob.count('definitions', { by: 1, every: 2, max: 60, why: 'programs would near the 16,000-character limit' }),
  knob.ints({ by: 10 }),
]);

function candidate(rng: Rng, level: number): Candidate {
  const { params, exprs, counts } = LADDER.at(level);
  const ps: Param[] = NAMES.slice(0, drawSpan(rng, params.int)).map((name) => ({ name, type: 'int' }));
  const ctx = newCtx(rng, exprs.body.ops, ps, exprs.body);
  const depth = drawSpan(rng, exprs.body.depth);
  const defs = chain(
    ctx,
    'int',
    counts?.definitions ?? 0,
    depth,
    ps.map((p) => p.name),
  );
  const body = [...defs.stmts, ret(gen(ctx, 'int', depth, true, defs.read))];
  return { prog: { params: ps, body }, skills: [...ctx.skills, ...arithDerivedSkills(body)] };
}

/** The skills arith reads off a whole body rather than one production: 'nested' for two or more operators. */
export function arithDerivedSkills(body: readonly Node[]): string[] {
  return countNodes(body, isOperator) >= 2 ? ['arith.nested'] : [];
}

/** An operator node, of those counted for the 'nested' skill. */
function isOperator(n: Node): boolean {
  return n.kind === 'bin' || n.kind === 'un' || n.kind === 'call' || n.kind === 'cond';
}

export const arith = defineFamily({
  id: F,
  name: 'integer arithmetic',
  description:
    'Integer expressions: + - *, floor division, modulo, abs/min/max; composed with comparisons and bits at higher levels.',
  skills: arithSkills,
  ladder: LADDER,
  candidate,
});
