// Bit operations on non-negative integers, and counting set bits.
import {
  bin,
  gen,
  let_,
  lit,
  newCtx,
  P,
  prods,
  ret,
  set,
  v,
  while_,
  type Param,
  type Production,
  type Stmt,
} from '../grammar/index.js';
import { chain, defineFamily, skill, type Candidate } from '../kit.js';
import { drawSpan, ranges, type Level } from '../levels.js';
import { knob, ladder } from '../ladder.js';
import type { Rng } from '../../core/rng.js';

const F = 'bits';

export const bitsSkills = [
  skill(F, 'and', 'bitwise and', 'Keeps the bits set in both operands.', ['arith.add'], 0),
  skill(F, 'or', 'bitwise or', 'Keeps the bits set in either operand.', ['arith.add'], 0),
  skill(F, 'xor', 'bitwise xor', 'Keeps the bits set in exactly one operand.', ['bits.and', 'bits.or'], 1),
  skill(F, 'shift', 'shifts', 'Shifts left (×2^k) or right (÷2^k, floored).', ['arith.mul'], 1),
  skill(
    F,
    'mask',
    'bit tests and sets',
    'Reads bit k with (a >> k) & 1 and sets it with a | (1 << k).',
    ['bits.and', 'bits.shift'],
    2,
  ),
  skill(F, 'not', 'bitwise not', "~a = -a - 1 in two's complement.", ['bits.xor', 'arith.sub'], 3),
  skill(F, 'popcount', 'counting bits', 'Counts set bits with a shifting loop.', ['bits.mask', 'loop.while'], 3),
];

const testBit: Production = {
  skill: 'bits.mask',
  out: 'int',
  args: ['int', 'sh'],
  build: (xs) => bin('&', bin('>>', xs[0]!, xs[1]!), lit(1)),
};
const setBit: Production = {
  skill: 'bits.mask',
  out: 'int',
  args: ['int', 'sh'],
  build: (xs) => bin('|', xs[0]!, bin('<<', lit(1), xs[1]!)),
};

const NAMES = ['a', 'b', 'c'];
const AND_OR = prods('band', 'bor');
const SHIFTS = [...AND_OR, ...prods('bxor', 'shl', 'shr')];
const WITH_NOT = [...SHIFTS, P.bnot, testBit];

/** The other shape of level 3: a loop counting the set bits of a generated expression. */
const POPCOUNT = {
  shape: 'x = E; count the set bits of x in a while loop (loop), maybe then c + k or c * k',
  params: { nat: [1, 2] },
  exprs: { E: { ops: WITH_NOT, depth: 2, leaf: 0.3, ints: [1, 31] } },
  inputs: ranges([0, 127]),
} satisfies Level;

const LEVELS = [
  {
    params: { nat: [1, 2] },
    exprs: { body: { ops: AND_OR, depth: 1, leaf: 1, ints: [1, 15] } },
    inputs: ranges([0, 15]),
  },
  {
    params: { nat: [1, 2] },
    exprs: { body: { ops: SHIFTS, depth: 2, leaf: 0.3, ints: [1, 15] } },
    inputs: ranges([0, 15]),
  },
  {
    params: { nat: [2, 2] },
    exprs: { body: { ops: [...SHIFTS, testBit, setBit], depth: [2, 3], leaf: 0.3, ints: [1, 31] } },
    inputs: ranges([0, 63]),
  },
  {
    params: { nat: [1, 2] },
    exprs: { body: { ops: WITH_NOT, depth: 3, leaf: 0.3, ints: [1, 31] } },
    inputs: ranges([0, 127]),
    or: [POPCOUNT],
  },
  {
    shape: 'const t1 = E; …; return E (each definition reads the one before it, t1 a parameter)',
    params: { nat: [2, 3] },
    counts: { definitions: 0 },
    exprs: {
      body: {
        ops: [...SHIFTS, ...prods('add', 'sub', 'mod', 'ifInt', 'gt', 'eq'), testBit, setBit],
        depth: 4,
        leaf: 0.3,
        ints: [1, 31],
      },
    },
    inputs: ranges([0, 255]),
  },
] satisfies Level[];

/** bits' levels (exported for generators/label.ts, which reads a program's level from them). */
export const LADDER = ladder(LEVELS, [
  knob.count('definitions', { by: 1, every: 2, max: 60, why: 'programs would near the 16,000-character limit' }),
  knob.ints({ by: 64 }, [], 'upper'),
]);

function candidate(rng: Rng, level: number): Candidate {
  const row = LADDER.at(level);
  const ps: Param[] = NAMES.slice(0, drawSpan(rng, row.params.nat)).map((name) => ({ name, type: 'int' }));
  const names = ps.map((p) => p.name);
  const types = ps.map(() => 'nat');
  if ('or' in row && rng.bool(0.6)) {
    const e = POPCOUNT.exprs.E;
    const ctx = newCtx(rng, e.ops, ps, e);
    const body: Stmt[] = [
      let_('x', gen(ctx, 'int', e.depth, false, names)),
      let_('c', lit(0)),
      while_(bin('>', v('x'), lit(0)), [
        set('c', '+=', bin('&', v('x'), lit(1))),
        set('x', '=', bin('>>', v('x'), lit(1))),
      ]),
      ret(rng.bool(0.7) ? v('c') : bin(rng.pick(['+', '*'] as const), v('c'), lit(rng.int(2, 3)))),
    ];
    return {
      prog: { params: ps, body },
      skills: [...ctx.skills, 'bits.popcount', 'bits.mask', 'loop.while'],
      inputTypes: types,
    };
  }
  const ctx = newCtx(rng, row.exprs.body.ops, ps, row.exprs.body);
  const depth = drawSpan(rng, row.exprs.body.depth);
  const defs = chain(ctx, 'int', row.counts?.definitions ?? 0, depth, names);
  return {
    prog: { params: ps, body: [...defs.stmts, ret(gen(ctx, 'int', depth, true, defs.read))] },
    skills: ctx.skills,
    inputTypes: types,
  };
}

export const bits = defineFamily({
  id: F,
  name: 'bit operations',
  description: 'Bitwise & | ^ ~, shifts, bit tests and sets, and counting set bits.',
  skills: bitsSkills,
  ladder: LADDER,
  candidate,
});
