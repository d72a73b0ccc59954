// Integer arithmetic: expressions over integer parameters built from +, -, *, floor division, modulo,
// negation, Math.abs/min/max; from level 3 they compose comparisons and ternaries (logic, cond) and
// from level 4 bit operations.
//
// Knobs per level (params, expression depth, operator set, value range):
//   0: 1 param, exactly one operator of + - *, operands 0–9
//   1: 1–2 params, depth 2 (up to 3 operators) of + - *, operands 0–9
//   2: 2 params, depth 2–3, adds floor division and modulo by 2–9, operands 0–20
//   3: 2–3 params, depth 3, adds negation, abs, min/max, ternaries on comparisons, values −20–20
//   4: 3 params, depth 4, adds & | ^ and shifts, values −50–50
import { countNodes, gen, newCtx, prods, ret, type Node, type Param } from '../grammar/index.js';
import { defineFamily, ranges, skill, type Candidate } from '../kit.js';
import type { Rng } from '../../core/rng.js';

const F = 'arith';

export const arithSkills = [
  skill(F, 'add', 'addition', 'Adds two integers.', [], 0),
  skill(F, 'sub', 'subtraction', 'Subtracts one integer from another.', ['arith.add'], 0),
  skill(F, 'mul', 'multiplication', 'Multiplies two integers.', ['arith.add'], 0),
  skill(F, 'nested', 'nested expressions', 'Evaluates expressions with several operators, respecting precedence.', ['arith.sub', 'arith.mul'], 1),
  skill(F, 'div', 'floor division', 'Divides and rounds down with Math.floor.', ['arith.mul'], 2),
  skill(F, 'mod', 'modulo', 'Takes the remainder with %, including JavaScript\'s sign rule.', ['arith.div'], 2),
  skill(F, 'neg', 'negation', 'Negates an integer.', ['arith.sub'], 3),
  skill(F, 'abs', 'absolute value', 'Math.abs of an integer.', ['arith.neg'], 3),
  skill(F, 'minmax', 'min and max', 'Math.min / Math.max of two integers.', ['logic.compare'], 3),
];

const NAMES = ['a', 'b', 'c'];
const DEPTH = [1, 2, 3, 3, 4];
const OPS = [
  prods('add', 'sub', 'mul'),
  prods('add', 'sub', 'mul'),
  prods('add', 'sub', 'mul', 'div', 'mod'),
  prods('add', 'sub', 'mul', 'div', 'mod', 'neg', 'abs', 'min', 'max', 'ifInt', 'lt', 'gt', 'eq'),
  prods('add', 'sub', 'mul', 'div', 'mod', 'neg', 'abs', 'min', 'max', 'ifInt', 'lt', 'gt', 'eq', 'ge', 'band', 'bor', 'bxor', 'shl', 'shr'),
];
const PARAMS: [number, number][] = [[1, 1], [1, 2], [2, 2], [2, 3], [3, 3]];
const RANGES = [ranges([0, 9]), ranges([0, 9]), ranges([0, 20]), ranges([-20, 20]), ranges([-50, 50])];

function candidate(rng: Rng, level: number): Candidate {
  const n = rng.int(PARAMS[level]![0], PARAMS[level]![1]);
  const ps: Param[] = NAMES.slice(0, n).map((name) => ({ name, type: 'int' }));
  const ctx = newCtx(rng, OPS[level]!, ps, { ints: level < 2 ? [1, 9] : [1, 12], leaf: level === 0 ? 1 : 0.25 });
  const depth = level === 2 ? rng.int(2, 3) : DEPTH[level]!;
  const body = gen(ctx, 'int', depth, true, ps.map((p) => p.name));
  const skills = [...ctx.skills];
  if (countNodes([body], isOperator) >= 2) skills.push('arith.nested');
  return { prog: { params: ps, body: [ret(body)] }, skills };
}

/** An operator node, of those counted for the 'nested' skill. */
function isOperator(n: Node): boolean {
  return n.kind === 'bin' || n.kind === 'un' || n.kind === 'call' || n.kind === 'cond';
}

export const arith = defineFamily({
  id: F,
  name: 'integer arithmetic',
  description: 'Integer expressions: + - *, floor division, modulo, abs/min/max; composed with comparisons and bits at higher levels.',
  skills: arithSkills,
  knobs: [
    '1 param; exactly one of + - *; operands 0-9',
    '1-2 params; depth 2 (up to 3 operators) of + - *; operands 0-9',
    '2 params; depth 2-3; adds floor division and modulo by 2-9; operands 0-20',
    '2-3 params; depth 3; adds negation, abs, min/max, ternaries on comparisons (logic, cond); values -20..20',
    '3 params; depth 4; adds & | ^ << >> (bits); values -50..50',
  ],
  ranges: (level) => RANGES[level]!,
  candidate,
});
