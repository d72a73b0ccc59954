// Comparison and boolean logic: expressions over boolean (and, from level 2, integer) parameters.
//
// Knobs per level (params, expression depth, operator set, value range):
//   0: 2-3 boolean params, exactly one of && || !
//   1: 2-3 boolean params, depth 2 of && || !
//   2: 2-3 boolean params + 1-2 integer params (0-20), depth 3, adds xor (!==, ===) and comparisons
//   3: 1-2 boolean + 2 integer params (0-20), depth 3, comparisons over sums/differences (arith)
//   4: 2 boolean + 2 integer params (-20..20), depth 4, adds ternaries (cond), modulo and parity
import { countNodes, gen, newCtx, prods, ret, size, type Param } from '../grammar/index.js';
import { defineFamily, ranges, skill, type Candidate } from '../kit.js';
import type { Rng } from '../../core/rng.js';

const F = 'logic';

export const logicSkills = [
  skill(F, 'and', 'conjunction', 'Boolean && of two values.', [], 0),
  skill(F, 'or', 'disjunction', 'Boolean || of two values.', [], 0),
  skill(F, 'not', 'negation', 'Boolean ! of a value.', [], 0),
  skill(F, 'nested', 'nested boolean expressions', 'Evaluates several boolean operators with precedence (&& before ||).', ['logic.and', 'logic.or', 'logic.not'], 1),
  skill(F, 'xor', 'boolean equality and xor', '=== and !== between booleans.', ['logic.and', 'logic.or'], 2),
  skill(F, 'compare', 'integer comparison', '< <= > >= === !== between integers.', ['arith.sub'], 2),
  skill(F, 'range', 'range checks', 'Combines comparisons with && / || (lo <= a && a < hi).', ['logic.compare', 'logic.nested'], 2),
];

const BOOL = ['p', 'q', 'r'];
const INT = ['a', 'b'];
const OPS = [
  prods('and', 'or', 'not'),
  prods('and', 'or', 'not'),
  prods('and', 'or', 'not', 'xor', 'beq', 'lt', 'gt', 'eq', 'le'),
  prods('and', 'or', 'not', 'xor', 'lt', 'gt', 'eq', 'le', 'ge', 'ne', 'add', 'sub'),
  prods('and', 'or', 'not', 'xor', 'lt', 'gt', 'eq', 'le', 'ge', 'ne', 'add', 'sub', 'mul', 'mod', 'ifBool', 'ifInt', 'even'),
];
const BOOLS: [number, number][] = [[2, 3], [2, 3], [2, 3], [1, 2], [2, 2]];
const INTS = [0, 0, 1, 2, 2];
const INTS_L2: [number, number] = [1, 2];
const DEPTH = [1, 2, 3, 3, 4];
const RANGES = [ranges([0, 9]), ranges([0, 9]), ranges([0, 20]), ranges([0, 20]), ranges([-20, 20])];

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
  const nb = rng.int(BOOLS[level]![0], BOOLS[level]![1]);
  const ps: Param[] = [
    ...BOOL.slice(0, nb).map((name) => ({ name, type: 'bool' })),
    ...INT.slice(0, level === 2 ? rng.int(INTS_L2[0], INTS_L2[1]) : INTS[level]!).map((name) => ({ name, type: 'int' })),
  ];
  const ctx = newCtx(rng, OPS[level]!, ps, { ints: level < 3 ? [1, 9] : [1, 15], leaf: level === 0 ? 1 : 0.2 });
  const depth = DEPTH[level]!;
  const body = gen(ctx, 'bool', depth, true, ps.map((p) => p.name));
  const skills = [...ctx.skills];
  if (countNodes([body], (n) => (n.kind === 'bin' || n.kind === 'un') && BOOL_OPS.has(n.op)) >= 2) skills.push('logic.nested');
  if (skills.includes('logic.compare') && countNodes([body], (n) => n.kind === 'bin' && AND_OR.has(n.op)) > 0) skills.push('logic.range');
  return { prog: { params: ps, body: [ret(body)] }, skills };
}

export const logic = defineFamily({
  id: F,
  name: 'comparison and boolean logic',
  description: 'Boolean expressions with && || ! and xor over boolean inputs, and comparisons over integer inputs.',
  skills: logicSkills,
  knobs: [
    '2-3 boolean params; exactly one of && || !',
    '2-3 boolean params; depth 2 of && || !',
    '2-3 boolean params + 1-2 integers (0-20); depth 3; adds xor (!==, ===) and comparisons',
    '1-2 boolean + 2 integer params (0-20); depth 3; comparisons over sums and differences (arith)',
    '2 boolean + 2 integer params (-20..20); depth 4; adds ternaries (cond), *, % and parity (numtheory)',
  ],
  ranges: (level) => RANGES[level]!,
  candidate,
});
