// Loops and accumulators: counted, for-of, while and nested loops, early exits.
import {
  bin,
  call,
  for_,
  forOf,
  gen,
  if_,
  let_,
  lit,
  newCtx,
  prods,
  ret,
  set,
  v,
  while_,
  type Expr,
  type Param,
  type Stmt,
} from '../grammar/index.js';
import { defineFamily, skill, type Candidate } from '../kit.js';
import { ranges, type Level } from '../levels.js';
import { knob, ladder } from '../ladder.js';
import type { Rng } from '../../core/rng.js';

const F = 'loop';

export const loopSkills = [
  skill(F, 'for', 'counted loops', 'Accumulates a sum over i = 0 … n-1.', ['arith.add'], 0),
  skill(F, 'product', 'product accumulators', 'Accumulates a product starting from 1.', ['loop.for', 'arith.mul'], 1),
  skill(F, 'count', 'counting', 'Counts the iterations whose condition holds.', ['loop.for', 'logic.compare'], 1),
  skill(F, 'forof', 'for-of loops', 'Iterates over the elements of an array.', ['loop.for', 'array.length'], 2),
  skill(F, 'while', 'while loops', 'Repeats until a condition fails, counting steps.', ['loop.count'], 2),
  skill(
    F,
    'nested',
    'nested loops',
    'Runs an inner loop for every step of an outer loop.',
    ['loop.for', 'loop.count'],
    3,
  ),
  skill(
    F,
    'early-exit',
    'early exit',
    'Returns from inside a loop when a condition first holds.',
    ['loop.forof', 'cond.if-else'],
    4,
  ),
];

const SHRINK = {
  shape: 'c = 0; while (n > m) { n = n - k or Math.floor(n / k); c++ or c += n % j }; return c or c + n',
  params: { nat: 1 },
  inputs: ranges([0, 60]),
} satisfies Level;

const LEVELS = [
  {
    shape: 's = 0; for (let i = 0; i < n; i++) s += E(i); return s',
    params: { nat: 1 },
    exprs: { E: { ops: prods('add', 'mul'), depth: 1, leaf: 1, ints: [1, 5] } },
    inputs: ranges([0, 6]),
  },
  {
    shape: 'the same loop from i = 0-2, its step s += E(i), s *= E(i) (s from 1) or if (guard) s++',
    params: { nat: 1 },
    exprs: {
      E: { ops: prods('add', 'sub', 'mul'), depth: 1, leaf: 0.5, ints: [1, 5] },
      guard: { ops: prods('lt', 'gt', 'eq', 'ne', 'mod', 'add'), depth: 2, leaf: 0.5, ints: [1, 4] },
    },
    inputs: ranges([0, 8]),
  },
  {
    shape: 's = 0 or 1; for (const x of xs) s op= E(x, s), maybe under a guard',
    params: { 'int[]': 1 },
    exprs: {
      E: { ops: prods('add', 'sub', 'mul', 'mod'), depth: 2, leaf: 0.4, ints: [1, 5] },
      guard: { ops: prods('lt', 'gt', 'eq', 'ne', 'even'), depth: 1, leaf: 0.5, ints: [1, 6] },
    },
    inputs: ranges([0, 9], [1, 6]),
    or: [SHRINK],
  },
  {
    shape: 'two nested counted loops (j up to i or n) with s += E(i, j), maybe under a guard',
    params: { nat: 1 },
    exprs: {
      E: { ops: prods('add', 'sub', 'mul', 'ifInt', 'lt', 'gt', 'eq'), depth: 2, leaf: 0.4, ints: [1, 5] },
      guard: { ops: prods('lt', 'gt', 'eq', 'ne', 'add', 'mod'), depth: 2, leaf: 0.4, ints: [1, 5] },
    },
    inputs: ranges([0, 6]),
  },
  {
    shape:
      'for (const x of xs) { if (guard) return E(x, s, c); s += E(x) (updates); c++ }; return E(s, c) (E one level shallower in the exit)',
    params: { 'int[]': 1 },
    counts: { updates: 1 },
    exprs: {
      E: { ops: prods('add', 'sub', 'mul', 'mod', 'abs'), depth: 2, leaf: 0.4, ints: [1, 6] },
      guard: { ops: prods('lt', 'gt', 'eq', 'ge', 'and', 'or', 'add', 'mod'), depth: 2, leaf: 0.4, ints: [1, 20] },
    },
    inputs: ranges([-10, 20], [2, 7]),
  },
] as const satisfies readonly Level[];

const LADDER = ladder(LEVELS, [
  knob.count('updates', { by: 2, max: 200, why: 'programs would near the 16,000-character limit' }),
  knob.arrays({ by: 2 }),
  knob.ints({ by: 5 }),
]);

function candidate(rng: Rng, level: number): Candidate {
  const skills = new Set<string>(['loop.for']);
  if (level <= 1) {
    const { E } = LEVELS[level === 0 ? 0 : 1].exprs;
    const ps: Param[] = [{ name: 'n', type: 'int' }];
    const i: Param = { name: 'i', type: 'int' };
    const shape = level === 0 ? 0 : rng.int(0, 2);
    const from = level === 0 ? lit(0) : lit(rng.int(0, 2));
    const ctx = newCtx(rng, E.ops, [i, ...ps], E);
    let init: Expr = lit(0);
    let step: Stmt;
    if (shape === 0) step = set('s', '+=', gen(ctx, 'int', E.depth, level === 0 ? rng.bool() : false, ['i']));
    else if (shape === 1) {
      init = lit(1);
      step = set('s', '*=', gen(ctx, 'int', E.depth, true, ['i']));
      skills.add('loop.product');
    } else {
      const { guard } = LEVELS[1].exprs;
      const cctx = newCtx(rng, guard.ops, [i, ...ps], guard);
      step = if_(gen(cctx, 'bool', guard.depth, true, ['i']), [set('s', '++')]);
      for (const s of cctx.skills) skills.add(s);
      skills.add('loop.count');
    }
    for (const s of ctx.skills) skills.add(s);
    const body: Stmt[] = [let_('s', init), for_('i', from, v('n'), [step]), ret(v('s'))];
    return { prog: { params: ps, body }, skills, inputTypes: ['nat'] };
  }
  if (level === 2) {
    if (rng.bool()) {
      const { E, guard } = LEVELS[2].exprs;
      const ps: Param[] = [{ name: 'xs', type: 'int[]' }];
      const scope: Param[] = [
        { name: 'x', type: 'int' },
        { name: 's', type: 'int' },
      ];
      const ctx = newCtx(rng, E.ops, scope, E);
      const cctx = newCtx(rng, guard.ops, scope, guard);
      const step = set('s', rng.pick(['+=', '=', '-='] as const), gen(ctx, 'int', E.depth, true, ['x']));
      const body: Stmt[] = [
        let_('s', lit(rng.int(0, 1))),
        forOf('x', v('xs'), [rng.bool(0.6) ? if_(gen(cctx, 'bool', guard.depth, true, ['x']), [step]) : step]),
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
    return { prog: { params: ps, body }, skills, inputTypes: ['nat'], ranges: SHRINK.inputs };
  }
  if (level === 3) {
    const { E, guard } = LEVELS[3].exprs;
    const ps: Param[] = [{ name: 'n', type: 'int' }];
    const scope: Param[] = [
      { name: 'i', type: 'int' },
      { name: 'j', type: 'int' },
    ];
    const ctx = newCtx(rng, E.ops, scope, E);
    const cctx = newCtx(rng, guard.ops, scope, guard);
    const inner: Stmt = set('s', '+=', gen(ctx, 'int', E.depth, true, ['i', 'j']));
    const guarded: Stmt = rng.bool(0.5) ? if_(gen(cctx, 'bool', guard.depth, true, ['i', 'j']), [inner]) : inner;
    const body: Stmt[] = [
      let_('s', lit(0)),
      for_('i', lit(0), v('n'), [for_('j', lit(0), rng.bool() ? v('i') : v('n'), [guarded])]),
      ret(v('s')),
    ];
    for (const s of [...ctx.skills, ...cctx.skills, 'loop.nested', 'loop.count']) skills.add(s);
    return { prog: { params: ps, body }, skills, inputTypes: ['nat'] };
  }
  const {
    exprs: { E, guard },
    counts,
  } = LADDER.top(level);
  const ps: Param[] = [{ name: 'xs', type: 'int[]' }];
  const scope: Param[] = [
    { name: 'x', type: 'int' },
    { name: 's', type: 'int' },
    { name: 'c', type: 'int' },
  ];
  const ctx = newCtx(rng, E.ops, scope, E);
  const cctx = newCtx(rng, guard.ops, scope, guard);
  const body: Stmt[] = [
    let_('s', lit(0)),
    let_('c', lit(0)),
    forOf('x', v('xs'), [
      if_(gen(cctx, 'bool', guard.depth, true, ['x', 's']), [
        ret(gen(ctx, 'int', E.depth - 1, false, ['x', 's', 'c'])),
      ]),
      ...Array.from({ length: counts.updates }, () => set('s', '+=', gen(ctx, 'int', E.depth, true, ['x']))),
      set('c', '++'),
    ]),
    ret(gen(ctx, 'int', E.depth, true, ['s', 'c'])),
  ];
  for (const s of [...ctx.skills, ...cctx.skills, 'loop.forof', 'loop.early-exit', 'loop.count', 'cond.if-else'])
    skills.add(s);
  return { prog: { params: ps, body }, skills };
}

export const loop = defineFamily({
  id: F,
  name: 'loops and accumulators',
  description: 'Counted for-loops, products, counting, for-of, while loops, nested loops and early exits.',
  skills: loopSkills,
  ladder: LADDER,
  candidate,
});
