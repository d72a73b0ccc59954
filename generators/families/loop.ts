// Loops and accumulators: counted for-loops that sum, multiply or count; for-of over arrays;
// while loops that shrink a number; nested loops; early exits.
//
// Knobs per level (shape, body expression depth, bounds):
//   0: for i in [0, n) with s += E(i), E a leaf or one operator; n 0-6
//   1: adds products (s *= E, s starts at 1), counting under a comparison (c++), start 0-2; n 0-8
//   2: for-of over an array accumulating E(x, s) with a guard, or a while loop shrinking n by - k or / k and counting steps; arrays of 1-6 ints 0-9, n 0-60
//   3: two nested counted loops accumulating E(i, j) under a guard with ternaries (cond); n 0-6
//   4: a for-of loop with an early return under a generated condition and two accumulators (cond, arith %); arrays of 2-7 ints -10..20
import { bin, call, for_, forOf, gen, if_, let_, lit, newCtx, prods, ret, set, v, while_, type Expr, type Param, type Stmt } from '../grammar/index.js';
import { defineFamily, skill, type Candidate } from '../kit.js';
import { ranges } from '../levels.js';
import type { Rng } from '../../core/rng.js';

const F = 'loop';

export const loopSkills = [
  skill(F, 'for', 'counted loops', 'Accumulates a sum over i = 0 … n-1.', ['arith.add'], 0),
  skill(F, 'product', 'product accumulators', 'Accumulates a product starting from 1.', ['loop.for', 'arith.mul'], 1),
  skill(F, 'count', 'counting', 'Counts the iterations whose condition holds.', ['loop.for', 'logic.compare'], 1),
  skill(F, 'forof', 'for-of loops', 'Iterates over the elements of an array.', ['loop.for', 'array.length'], 2),
  skill(F, 'while', 'while loops', 'Repeats until a condition fails, counting steps.', ['loop.count'], 2),
  skill(F, 'nested', 'nested loops', 'Runs an inner loop for every step of an outer loop.', ['loop.for', 'loop.count'], 3),
  skill(F, 'early-exit', 'early exit', 'Returns from inside a loop when a condition first holds.', ['loop.forof', 'cond.if-else'], 4),
];

const RANGES = [ranges([0, 6]), ranges([0, 8]), ranges([0, 9], [1, 6]), ranges([0, 6]), ranges([-10, 20], [2, 7])];

function candidate(rng: Rng, level: number): Candidate {
  const skills = new Set<string>(['loop.for']);
  const arith = (scope: Param[], ops = prods('add', 'sub', 'mul'), leaf = 0.5) => newCtx(rng, ops, scope, { leaf, ints: [1, 5] });
  if (level <= 1) {
    const ps: Param[] = [{ name: 'n', type: 'int' }];
    const i: Param = { name: 'i', type: 'int' };
    const shape = level === 0 ? 0 : rng.int(0, 2);
    const from = level === 0 ? lit(0) : lit(rng.int(0, 2));
    const ctx = arith([i, ...ps], level === 0 ? prods('add', 'mul') : prods('add', 'sub', 'mul'), level === 0 ? 1 : 0.5);
    let init: Expr = lit(0);
    let step: Stmt;
    if (shape === 0) step = set('s', '+=', gen(ctx, 'int', 1, level === 0 ? rng.bool() : false, ['i']));
    else if (shape === 1) {
      init = lit(1);
      step = set('s', '*=', gen(ctx, 'int', 1, true, ['i']));
      skills.add('loop.product');
    } else {
      const cctx = newCtx(rng, prods('lt', 'gt', 'eq', 'ne', 'mod', 'add'), [i, ...ps], { leaf: 0.5, ints: [1, 4] });
      step = if_(gen(cctx, 'bool', 2, true, ['i']), [set('s', '++')]);
      for (const s of cctx.skills) skills.add(s);
      skills.add('loop.count');
    }
    for (const s of ctx.skills) skills.add(s);
    const body: Stmt[] = [let_('s', init), for_('i', from, v('n'), [step]), ret(v('s'))];
    return { prog: { params: ps, body }, skills, inputTypes: ['nat'] };
  }
  if (level === 2) {
    if (rng.bool()) {
      const ps: Param[] = [{ name: 'xs', type: 'int[]' }];
      const scope: Param[] = [{ name: 'x', type: 'int' }, { name: 's', type: 'int' }];
      const ctx = arith(scope, prods('add', 'sub', 'mul', 'mod'), 0.4);
      const cctx = newCtx(rng, prods('lt', 'gt', 'eq', 'ne', 'even'), scope, { leaf: 0.5, ints: [1, 6] });
      const step = set('s', rng.pick(['+=', '=', '-='] as const), gen(ctx, 'int', 2, true, ['x']));
      const body: Stmt[] = [
        let_('s', lit(rng.int(0, 1))),
        forOf('x', v('xs'), [rng.bool(0.6) ? if_(gen(cctx, 'bool', 1, true, ['x']), [step]) : step]),
        ret(v('s')),
      ];
      for (const s of [...ctx.skills, ...cctx.skills, 'loop.forof']) skills.add(s);
      return { prog: { params: ps, body }, skills };
    }
    const ps: Param[] = [{ name: 'n', type: 'int' }];
    const k = rng.int(2, 4);
    const shrink = rng.bool() ? call('Math.floor', bin('/', v('n'), lit(k))) : bin('-', v('n'), lit(k));
    const stop = rng.int(0, 5);
    const counted: Stmt = rng.bool(0.7) ? set('c', '++') : set('c', '+=', bin('%', v('n'), lit(rng.int(2, 5))));
    const body: Stmt[] = [
      let_('c', lit(0)),
      while_(bin('>', v('n'), lit(stop)), [set('n', '=', shrink), counted]),
      ret(rng.bool(0.7) ? v('c') : bin('+', v('c'), v('n'))),
    ];
    skills.add('loop.while').add('loop.count');
    return { prog: { params: ps, body }, skills, inputTypes: ['nat'], ranges: ranges([0, 60]) };
  }
  if (level === 3) {
    const ps: Param[] = [{ name: 'n', type: 'int' }];
    const scope: Param[] = [{ name: 'i', type: 'int' }, { name: 'j', type: 'int' }];
    const ctx = newCtx(rng, prods('add', 'sub', 'mul', 'ifInt', 'lt', 'gt', 'eq'), scope, { leaf: 0.4, ints: [1, 5] });
    const cctx = newCtx(rng, prods('lt', 'gt', 'eq', 'ne', 'add', 'mod'), scope, { leaf: 0.4, ints: [1, 5] });
    const inner: Stmt = set('s', '+=', gen(ctx, 'int', 2, true, ['i', 'j']));
    const guarded: Stmt = rng.bool(0.5) ? if_(gen(cctx, 'bool', 2, true, ['i', 'j']), [inner]) : inner;
    const body: Stmt[] = [
      let_('s', lit(0)),
      for_('i', lit(0), v('n'), [for_('j', lit(0), rng.bool() ? v('i') : v('n'), [guarded])]),
      ret(v('s')),
    ];
    for (const s of [...ctx.skills, ...cctx.skills, 'loop.nested', 'loop.count']) skills.add(s);
    return { prog: { params: ps, body }, skills, inputTypes: ['nat'] };
  }
  // Level 4: early exit and two accumulators.
  const ps: Param[] = [{ name: 'xs', type: 'int[]' }];
  const scope: Param[] = [{ name: 'x', type: 'int' }, { name: 's', type: 'int' }, { name: 'c', type: 'int' }];
  const ctx = newCtx(rng, prods('add', 'sub', 'mul', 'mod', 'abs'), scope, { leaf: 0.4, ints: [1, 6] });
  const cctx = newCtx(rng, prods('lt', 'gt', 'eq', 'ge', 'and', 'or', 'add', 'mod'), scope, { leaf: 0.4, ints: [1, 20] });
  const body: Stmt[] = [
    let_('s', lit(0)),
    let_('c', lit(0)),
    forOf('x', v('xs'), [
        if_(gen(cctx, 'bool', 2, true, ['x', 's']), [ret(gen(ctx, 'int', 1, false, ['x', 's', 'c']))]),
        set('s', '+=', gen(ctx, 'int', 2, true, ['x'])),
        set('c', '++'),
      ]),
    ret(gen(ctx, 'int', 2, true, ['s', 'c'])),
  ];
  for (const s of [...ctx.skills, ...cctx.skills, 'loop.forof', 'loop.early-exit', 'loop.count', 'cond.if-else']) skills.add(s);
  return { prog: { params: ps, body }, skills };
}

export const loop = defineFamily({
  id: F,
  name: 'loops and accumulators',
  description: 'Counted for-loops, products, counting, for-of, while loops, nested loops and early exits.',
  skills: loopSkills,
  knobs: [
    'for i in [0, n) with s += E(i), E a leaf or one operator; n 0-6',
    'adds products (s *= E from 1) and counting under a comparison; start 0-2; n 0-8',
    'for-of over an array accumulating E(x, s) under an optional guard, or a while loop shrinking n by -k or /k counting steps; arrays of 1-6 ints 0-9, n 0-60',
    'two nested loops accumulating E(i, j) with ternaries (cond) under an optional guard; n 0-6',
    'for-of with an early return under a generated condition, two accumulators (cond, arith %); arrays of 2-7 ints -10..20',
  ],
  ranges: (level) => RANGES[level]!,
  candidate,
});
