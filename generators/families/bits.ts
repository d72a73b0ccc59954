// Bit operations on non-negative integers: & | ^, shifts, bit tests and sets, ~, and a population
// count loop; at level 4 mixed with arithmetic and ternaries.
//
// Knobs per level (params, expression depth, operator set, value range):
//   0: 1-2 params, exactly one of & |; values 0-15
//   1: 1-2 params, depth 2, adds ^ and shifts by 1-3; values 0-15
//   2: 2 params, depth 2-3, adds bit tests (a >> k) & 1 and sets a | (1 << k); values 0-63
//   3: popcount-style while loop over a generated bit expression (loop), or depth 3 with ~ ; values 0-127
//   4: 2-3 params, depth 4 mixing bits with + - %, comparisons and ternaries (arith, cond); values 0-255
import { bin, gen, let_, lit, newCtx, prods, ret, set, v, while_, type Expr, type Param, type Production, type Stmt } from '../grammar/index.js';
import { defineFamily, ranges, skill, type Candidate } from '../kit.js';
import type { Rng } from '../../core/rng.js';

const F = 'bits';

export const bitsSkills = [
  skill(F, 'and', 'bitwise and', 'Keeps the bits set in both operands.', ['arith.add'], 0),
  skill(F, 'or', 'bitwise or', 'Keeps the bits set in either operand.', ['arith.add'], 0),
  skill(F, 'xor', 'bitwise xor', 'Keeps the bits set in exactly one operand.', ['bits.and', 'bits.or'], 1),
  skill(F, 'shift', 'shifts', 'Shifts left (×2^k) or right (÷2^k, floored).', ['arith.mul'], 1),
  skill(F, 'mask', 'bit tests and sets', 'Reads bit k with (a >> k) & 1 and sets it with a | (1 << k).', ['bits.and', 'bits.shift'], 2),
  skill(F, 'not', 'bitwise not', '~a = -a - 1 in two\'s complement.', ['bits.xor', 'arith.sub'], 3),
  skill(F, 'popcount', 'counting bits', 'Counts set bits with a shifting loop.', ['bits.mask', 'loop.while'], 3),
];

const testBit: Production = { skill: 'bits.mask', out: 'int', args: ['int', 'sh'], build: (xs) => bin('&', bin('>>', xs[0]!, xs[1]!), lit(1)) };
const setBit: Production = { skill: 'bits.mask', out: 'int', args: ['int', 'sh'], build: (xs) => bin('|', xs[0]!, bin('<<', lit(1), xs[1]!)) };

const OPS: Production[][] = [
  prods('band', 'bor'),
  prods('band', 'bor', 'bxor', 'shl', 'shr'),
  [...prods('band', 'bor', 'bxor', 'shl', 'shr'), testBit, setBit],
  [...prods('band', 'bor', 'bxor', 'shl', 'shr', 'bnot'), testBit],
  [...prods('band', 'bor', 'bxor', 'shl', 'shr', 'add', 'sub', 'mod', 'ifInt', 'gt', 'eq'), testBit, setBit],
];
const RANGES = [ranges([0, 15]), ranges([0, 15]), ranges([0, 63]), ranges([0, 127]), ranges([0, 255])];
const PARAMS: [number, number][] = [[1, 2], [1, 2], [2, 2], [1, 2], [2, 3]];
const NAMES = ['a', 'b', 'c'];

function candidate(rng: Rng, level: number): Candidate {
  const n = rng.int(PARAMS[level]![0], PARAMS[level]![1]);
  const ps: Param[] = NAMES.slice(0, n).map((name) => ({ name, type: 'int' }));
  const names = ps.map((p) => p.name);
  const ctx = newCtx(rng, OPS[level]!, ps, { leaf: level === 0 ? 1 : 0.3, ints: level < 2 ? [1, 15] : [1, 31] });
  const types = ps.map(() => 'nat');
  if (level === 3 && rng.bool(0.6)) {
    const x: Expr = gen(ctx, 'int', 2, false, names);
    const body: Stmt[] = [
      let_('x', x),
      let_('c', lit(0)),
      while_(bin('>', v('x'), lit(0)), [set('c', '+=', bin('&', v('x'), lit(1))), set('x', '=', bin('>>', v('x'), lit(1)))]),
      ret(rng.bool(0.7) ? v('c') : bin(rng.pick(['+', '*'] as const), v('c'), lit(rng.int(2, 3)))),
    ];
    return { prog: { params: ps, body }, skills: [...ctx.skills, 'bits.popcount', 'bits.mask', 'loop.while'], inputTypes: types };
  }
  const depth = level === 2 ? rng.int(2, 3) : [1, 2, 3, 3, 4][level]!;
  const body = gen(ctx, 'int', depth, true, names);
  return { prog: { params: ps, body: [ret(body)] }, skills: ctx.skills, inputTypes: types };
}

export const bits = defineFamily({
  id: F,
  name: 'bit operations',
  description: 'Bitwise & | ^ ~, shifts, bit tests and sets, and counting set bits.',
  skills: bitsSkills,
  knobs: [
    '1-2 params; exactly one of & |; values 0-15',
    '1-2 params; depth 2; adds ^ and shifts by 1-3; values 0-15',
    '2 params; depth 2-3; adds bit tests (a >> k) & 1 and sets a | (1 << k); values 0-63',
    'popcount while loop over a generated bit expression (loop), or depth 3 with ~; values 0-127',
    '2-3 params; depth 4 mixing bits with + - %, comparisons and ternaries (arith, cond); values 0-255',
  ],
  ranges: (level) => RANGES[level]!,
  candidate,
});
