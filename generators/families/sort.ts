// Sorting and searching: sorted copies, extremes, searches, k-th smallest, de-duplication, insertion sort.
import {
  bin,
  call,
  cond,
  fn,
  for_,
  gen,
  idx,
  if_,
  let_,
  lit,
  meth,
  newCtx,
  prods,
  prop,
  ret,
  set,
  seti,
  un,
  v,
  while_,
  type Expr,
  type Param,
  type Stmt,
} from '../grammar/index.js';
import { defineFamily, skill, type Candidate } from '../kit.js';
import { drawSpan, ranges, type ExprSpec, type Level } from '../levels.js';
import { knob, ladder } from '../ladder.js';
import type { Rng } from '../../core/rng.js';

const F = 'sort';

export const sortSkills = [
  skill(
    F,
    'sort',
    'numeric sort',
    'Sorts a copy of an array ascending or descending with a comparator.',
    ['array.length', 'logic.compare'],
    0,
  ),
  skill(F, 'reverse', 'reversal', 'Reverses a copy of an array.', ['array.length'], 0),
  skill(
    F,
    'search',
    'linear search',
    'Finds the first index of a value or of a match (-1 when absent).',
    ['array.length', 'logic.compare'],
    1,
  ),
  skill(
    F,
    'extremum',
    'maximum and minimum',
    'Takes the largest or smallest element (with a floor/ceiling default).',
    ['logic.compare'],
    1,
  ),
  skill(F, 'kth', 'k-th smallest', 'Sorts, then indexes; out of range gives a default.', ['sort.sort'], 2),
  skill(F, 'dedupe', 'de-duplication', 'Keeps the first occurrence of each value.', ['sort.search', 'array.filter'], 2),
  skill(
    F,
    'binary-search',
    'binary search',
    'Halves a sorted range until the target is found.',
    ['sort.sort', 'loop.while'],
    3,
  ),
  skill(
    F,
    'inversions',
    'counting inversions',
    'Counts out-of-order pairs with two nested loops.',
    ['sort.sort', 'loop.nested'],
    3,
  ),
  skill(
    F,
    'insertion',
    'insertion sort',
    'Sorts in place by a key with nested loops and swaps.',
    ['sort.inversions', 'cond.if-else'],
    4,
  ),
];

const xs = v('xs');
const xsParam = (): Param => ({ name: 'xs', type: 'int[]' });
const asc = (e: Expr): Expr => meth(meth(e, 'slice'), 'sort', fn(['p', 'q'], bin('-', v('p'), v('q'))));

/** The key lambda x => E(x) that levels 2-4 map or sort by. */
const KEY = { ops: prods('add', 'sub', 'mul', 'mod'), depth: [1, 2], leaf: 0.4, ints: [1, 9] } satisfies ExprSpec;

// The shapes of levels 2-3 other than the level's own.
const KTH = {
  shape: 's = xs.map(key) sorted; return k < s.length ? s[k] : -1',
  params: { 'int[]': 1, nat: 1 },
  exprs: { key: KEY },
  inputs: ranges([0, 6], [3, 6]),
} satisfies Level;
const DEDUPE = {
  shape: 'the first occurrence of each element (filter by indexOf), sorted or mapped by key',
  params: { 'int[]': 1 },
  exprs: { key: KEY },
  inputs: ranges([0, 6], [3, 6]),
} satisfies Level;
const INVERSIONS = {
  shape: 'count the pairs i < j with xs[i] > xs[j] (or >=, <) in nested loops, maybe through key',
  params: { 'int[]': 1 },
  exprs: { key: KEY },
  inputs: ranges([0, 30], [3, 7]),
} satisfies Level;

const LEVELS = [
  {
    params: { 'int[]': 1 },
    exprs: { body: { ops: prods('sortAsc', 'sortDesc', 'arev'), depth: 1, leaf: 1 } },
    inputs: ranges([0, 9], [2, 4]),
  },
  {
    params: { 'int[]': 1, int: 1 },
    exprs: {
      body: {
        ops: prods('sortAsc', 'sortDesc', 'arev', 'amax', 'amin', 'aindexOf', 'findIndex', 'gt', 'lt', 'eq', 'add'),
        returns: ['int[]', 'int[]', 'int'],
        depth: 2,
        leaf: 0.15,
      },
    },
    inputs: ranges([0, 9], [2, 5]),
  },
  {
    params: { 'int[]': 1 },
    exprs: {
      body: {
        ops: prods(
          'sortAsc',
          'sortDesc',
          'arev',
          'amax',
          'amin',
          'findIndex',
          'map',
          'filter',
          'gt',
          'lt',
          'add',
          'sub',
          'mod',
        ),
        returns: ['int[]', 'int'],
        depth: 3,
        leaf: 0.3,
      },
    },
    inputs: ranges([0, 20], [3, 6]),
    or: [KTH, DEDUPE],
  },
  {
    shape: 'binary search for t in xs.map(key) sorted (while loop); -1 or -(lo + 1) when absent',
    params: { 'int[]': 1, int: 1 },
    exprs: { key: KEY },
    inputs: ranges([0, 30], [3, 7]),
    or: [INVERSIONS],
  },
  {
    shape:
      'insertion sort of a copy s by key (nested loops, swaps), ascending or descending; return s or a projection of it',
    params: { 'int[]': 1 },
    exprs: {
      key: KEY,
      projection: {
        ops: prods('aslice', 'arev', 'alen', 'map', 'add', 'sub', 'ifArr', 'gt', 'lt'),
        depth: 2,
        leaf: 0.5,
      },
    },
    inputs: ranges([-20, 30], [3, 7]),
  },
] as const satisfies readonly Level[];

const LADDER = ladder(LEVELS, [
  knob.depth('key', { by: 1, every: 8, max: 20, why: 'deeper keys would seldom stay within the value bounds' }),
  knob.depth('projection', {
    by: 1,
    every: 8,
    max: 20,
    why: 'deeper projections would seldom stay within the value bounds',
  }),
  knob.arrays({ by: 2, max: 200, why: 'the insertion sort would near a tenth of the answer budget cap' }),
  knob.ints({ by: 5 }),
]);

/** Each level's shapes, one function each (the draws in the order the level makes them). */
function candidate(rng: Rng, level: number): Candidate {
  if (level === 0) {
    const spec = LEVELS[0].exprs.body;
    const ps = [xsParam()];
    const ctx = newCtx(rng, spec.ops, ps, spec);
    return { prog: { params: ps, body: [ret(gen(ctx, 'int[]', spec.depth, true, ['xs']))] }, skills: ctx.skills };
  }
  if (level === 1) return expression(rng, LEVELS[1].exprs.body, [xsParam(), { name: 't', type: 'int' }]);
  const key = keyLambda(rng, level);
  if (level === 2) {
    const shape = rng.int(0, 2);
    if (shape === 0) return kth(key);
    if (shape === 1) return dedupe(rng, key);
    return expression(rng, LEVELS[2].exprs.body, [xsParam()]);
  }
  if (level === 3) return rng.bool() ? binarySearch(rng, key) : inversions(rng, key);
  return insertionSort(rng, level, key);
}

/** Levels 1-2's own shape: one expression of the level's grammar over the parameters, of a type it returns. */
function expression(rng: Rng, spec: (typeof LEVELS)[1 | 2]['exprs']['body'], ps: Param[]): Candidate {
  const ctx = newCtx(rng, spec.ops, ps, spec);
  return {
    prog: { params: ps, body: [ret(gen(ctx, rng.pick(spec.returns), spec.depth, true, ['xs']))] },
    skills: ctx.skills,
  };
}

/** The key lambdas x => E(x) of levels 2-4, drawn one per call of draw; their skills gather in skills. */
interface Key {
  draw: () => Expr;
  skills: Set<string>;
}

/** The key is KEY up to level 4, and grows above it with the level-4 table. */
function keyLambda(rng: Rng, level: number): Key {
  const keySpec = level >= 4 ? LADDER.top(level).exprs.key : KEY;
  const mapCtx = newCtx(rng, keySpec.ops, [{ name: 'x', type: 'int' }], keySpec);
  return {
    draw: () => fn(['x'], gen(mapCtx, 'int', drawSpan(rng, keySpec.depth), true, ['x'])),
    skills: mapCtx.skills,
  };
}

/** Level 2 (KTH): the k-th smallest of xs.map(key), or -1. */
function kth(key: Key): Candidate {
  const s: Stmt = let_('s', asc(meth(xs, 'map', key.draw())), true);
  const body = [s, ret(cond(bin('<', v('k'), prop(v('s'), 'length')), idx(v('s'), v('k')), lit(-1)))];
  return {
    prog: { params: [xsParam(), { name: 'k', type: 'int' }], body },
    skills: ['sort.sort', 'sort.kth', 'array.map', ...key.skills],
    inputTypes: ['int[]', 'nat'],
    ranges: KTH.inputs,
  };
}

/** Level 2 (DEDUPE): the first occurrence of each element, sorted or mapped by key. */
function dedupe(rng: Rng, key: Key): Candidate {
  const dedup = meth(xs, 'filter', fn(['x', 'i'], bin('===', meth(xs, 'indexOf', v('x')), v('i'))));
  const sorted = rng.bool();
  const body = [ret(sorted ? asc(dedup) : meth(dedup, 'map', key.draw()))];
  return {
    prog: { params: [xsParam()], body },
    skills: ['sort.dedupe', 'sort.search', 'array.filter', ...(sorted ? ['sort.sort'] : ['array.map', ...key.skills])],
    ranges: DEDUPE.inputs,
  };
}

/** Level 3: binary search for t in xs.map(key) sorted; -1 or -(lo + 1) when absent. */
function binarySearch(rng: Rng, key: Key): Candidate {
  const body: Stmt[] = [
    let_('s', asc(meth(xs, 'map', key.draw())), true),
    let_('lo', lit(0)),
    let_('hi', bin('-', prop(v('s'), 'length'), lit(1))),
    while_(bin('<=', v('lo'), v('hi')), [
      let_('mid', call('Math.floor', bin('/', bin('+', v('lo'), v('hi')), lit(2))), true),
      if_(bin('===', idx(v('s'), v('mid')), v('t')), [ret(v('mid'))]),
      if_(
        bin('<', idx(v('s'), v('mid')), v('t')),
        [set('lo', '=', bin('+', v('mid'), lit(1)))],
        [set('hi', '=', bin('-', v('mid'), lit(1)))],
      ),
    ]),
    ret(rng.pick([lit(-1), un('-', bin('+', v('lo'), lit(1)))])),
  ];
  return {
    prog: { params: [xsParam(), { name: 't', type: 'int' }], body },
    skills: ['sort.binary-search', 'sort.sort', 'loop.while', 'array.map', ...key.skills],
  };
}

/** Level 3 (INVERSIONS): count the pairs i < j with xs[i] > xs[j] (or >=, <), maybe through key. */
function inversions(rng: Rng, key: Key): Candidate {
  const cmp = rng.pick(['>', '>=', '<'] as const);
  const pair = (i: string): Expr => (rng.bool(0.5) ? idx(xs, v(i)) : call('kf', idx(xs, v(i))));
  const useKey = rng.bool();
  const body: Stmt[] = [
    ...(useKey ? [let_('kf', key.draw(), true)] : []),
    let_('c', lit(0)),
    for_('i', lit(0), prop(xs, 'length'), [
      for_('j', bin('+', v('i'), lit(1)), prop(xs, 'length'), [
        if_(bin(cmp, useKey ? pair('i') : idx(xs, v('i')), useKey ? pair('j') : idx(xs, v('j'))), [set('c', '++')]),
      ]),
    ]),
    ret(v('c')),
  ];
  return {
    prog: { params: [xsParam()], body },
    skills: ['sort.inversions', 'loop.nested', 'loop.count', ...(useKey ? ['hof.lambda', ...key.skills] : [])],
  };
}

/** Level 4: insertion sort by key, then a projection of the sorted array. */
function insertionSort(rng: Rng, level: number, key: Key): Candidate {
  const kf = key.draw();
  const swap: Stmt[] = [
    let_('tmp', idx(v('s'), v('j')), true),
    seti('s', v('j'), idx(v('s'), bin('-', v('j'), lit(1)))),
    seti('s', bin('-', v('j'), lit(1)), v('tmp')),
    set('j', '-=', lit(1)),
  ];
  const desc = rng.bool(0.3);
  const before = call('key', idx(v('s'), bin('-', v('j'), lit(1))));
  const here = call('key', idx(v('s'), v('j')));
  const body: Stmt[] = [
    let_('key', kf, true),
    let_('s', meth(xs, 'slice'), true),
    for_('i', lit(1), prop(v('s'), 'length'), [
      let_('j', v('i')),
      while_(bin('&&', bin('>', v('j'), lit(0)), desc ? bin('<', before, here) : bin('>', before, here)), swap),
    ]),
  ];
  const projection = LADDER.top(level).exprs.projection;
  const pctx = newCtx(rng, projection.ops, [{ name: 's', type: 'int[]' }], projection);
  const proj = rng.bool(0.4) ? v('s') : gen(pctx, 'int[]', projection.depth, true, ['s']);
  body.push(ret(proj));
  return {
    prog: { params: [xsParam()], body },
    skills: [
      'sort.insertion',
      'sort.inversions',
      'loop.nested',
      'loop.while',
      'hof.lambda',
      ...key.skills,
      ...pctx.skills,
    ],
  };
}

export const sort = defineFamily({
  id: F,
  name: 'sorting and searching',
  description:
    'Sorted copies, reversal, extremes, linear and binary search, k-th smallest, de-duplication, inversions, insertion sort.',
  skills: sortSkills,
  ladder: LADDER,
  candidate,
});
