// Higher-order functions: local lambdas, composition, closures, functions as arguments, iteration.
import {
  apply,
  bin,
  call,
  fn,
  for_,
  gen,
  let_,
  lit,
  meth,
  newCtx,
  prods,
  ret,
  set,
  someNode,
  v,
  type Expr,
  type Param,
  type Stmt,
} from '../grammar/index.js';
import { defineFamily, skill, type Candidate } from '../kit.js';
import { drawSpan, ranges, type ExprSpec, type Level, type Span } from '../levels.js';
import { knob, ladder } from '../ladder.js';
import type { Rng } from '../../core/rng.js';

const F = 'hof';

export const hofSkills = [
  skill(F, 'lambda', 'local functions', 'Defines an arrow function and calls it.', ['arith.add'], 0),
  skill(F, 'twice', 'repeated application', 'Applies the same function twice.', ['hof.lambda'], 1),
  skill(F, 'compose', 'composition', 'Feeds the output of one function into another.', ['hof.twice'], 2),
  skill(F, 'closure', 'closures', 'A function that returns a function capturing its argument.', ['hof.compose'], 3),
  skill(
    F,
    'pass',
    'functions as arguments',
    'Passes a named function to map or filter.',
    ['hof.lambda', 'array.map'],
    3,
  ),
  skill(F, 'iterate', 'iterating a function', 'Applies a function n times in a loop.', ['hof.twice', 'loop.for'], 4),
];

const PASSED = {
  shape: 'const g = x => ..., p = x => ...; return xs.map(g), xs.filter(p).map(g) or xs.map(g).filter(p)',
  params: { 'int[]': 1 },
  exprs: {
    g: { ops: prods('add', 'sub', 'mul', 'mod'), depth: 3, leaf: 0.25, ints: [1, 9] },
    p: { ops: prods('gt', 'lt', 'even', 'ne'), depth: 1, leaf: 0.5, ints: [1, 9] },
  },
  inputs: ranges([0, 9], [2, 5]),
} satisfies Level;

const LEVELS = [
  {
    shape: 'const g = x => ...; return g(a)',
    params: { int: 1 },
    exprs: { g: { ops: prods('add', 'sub', 'mul'), depth: 1, leaf: 1, ints: [1, 9] } },
    inputs: ranges([0, 9]),
  },
  {
    shape: 'return g(g(a)) or g(a) op g(c)',
    params: { int: 1 },
    exprs: { g: { ops: prods('add', 'sub', 'mul'), depth: [1, 2], leaf: 0.4, ints: [1, 9] } },
    inputs: ranges([0, 9]),
  },
  {
    shape: 'return g(h(a)), h(g(a)), g(a) + h(a), or the same through compose = (p, q) => y => p(q(y))',
    params: { int: 1 },
    exprs: {
      g: { ops: prods('add', 'sub', 'mul', 'mod'), depth: 2, leaf: 0.4, ints: [1, 9] },
      h: { ops: prods('add', 'sub', 'mul', 'div'), depth: 2, leaf: 0.4, ints: [1, 9] },
    },
    inputs: ranges([0, 20]),
  },
  {
    shape: 'const mk = k => x => E(x, k); return mk(c)(a), mk(c)(mk(d)(a)) or mk(a)(c)',
    params: { int: 1 },
    exprs: { E: { ops: prods('add', 'sub', 'mul', 'mod', 'max'), depth: 3, leaf: 0.15, ints: [1, 9] } },
    inputs: ranges([0, 9], [2, 5]),
    or: [PASSED],
  },
  {
    shape: 'r = a; for (let i = 0; i < n; i++) r = g(r); return r',
    params: { int: 1, nat: 1 },
    exprs: {
      g: { ops: prods('add', 'sub', 'mod', 'div', 'ifInt', 'gt', 'lt', 'even'), depth: 4, leaf: 0.3, ints: [1, 9] },
    },
    inputs: ranges([0, 20]),
  },
] as const satisfies readonly Level[];

const LADDER = ladder(LEVELS, [
  knob.depth('g', { by: 1, every: 8, max: 12, why: 'deeper functions would seldom stay within the value bounds' }),
  knob.ints({ by: 8, max: 2000, why: 'the iterations would near a tenth of the answer budget cap' }, [], 'upper'),
]);

const x: Param = { name: 'x', type: 'int' };
const a = v('a');

/** The lambda x => E(x) of one of the table's expressions. */
function lam(rng: Rng, spec: ExprSpec & { depth: Span }): { e: Expr; skills: Set<string> } {
  const ctx = newCtx(rng, spec.ops, [x], spec);
  const body = gen(ctx, 'int', drawSpan(rng, spec.depth), true, ['x']);
  return { e: fn(['x'], body), skills: ctx.skills };
}

function candidate(rng: Rng, level: number): Candidate {
  const ps: Param[] = [{ name: 'a', type: 'int' }];
  const g = v('g');
  if (level === 0) {
    const l = lam(rng, LEVELS[0].exprs.g);
    return {
      prog: { params: ps, body: [let_('g', l.e, true), ret(call('g', a))] },
      skills: ['hof.lambda', ...l.skills],
    };
  }
  if (level === 1) {
    const l = lam(rng, LEVELS[1].exprs.g);
    const end = rng.bool(0.6)
      ? call('g', call('g', a))
      : bin(rng.pick(['+', '-', '*'] as const), call('g', a), call('g', lit(rng.int(1, 5))));
    return {
      prog: { params: ps, body: [let_('g', l.e, true), ret(end)] },
      skills: ['hof.lambda', 'hof.twice', ...l.skills],
    };
  }
  if (level === 2) {
    const l1 = lam(rng, LEVELS[2].exprs.g);
    const l2 = lam(rng, LEVELS[2].exprs.h);
    const via = rng.bool(0.3);
    const body: Stmt[] = [let_('g', l1.e, true), let_('h', l2.e, true)];
    if (via) {
      body.push(let_('compose', fn(['p', 'q'], fn(['y'], call('p', call('q', v('y'))))), true));
      body.push(ret(apply(rng.bool() ? call('compose', g, v('h')) : call('compose', v('h'), g), a)));
    } else {
      body.push(
        ret(rng.pick([call('g', call('h', a)), call('h', call('g', a)), bin('+', call('g', a), call('h', a))])),
      );
    }
    return {
      prog: { params: ps, body },
      skills: ['hof.compose', 'hof.twice', 'hof.lambda', ...l1.skills, ...l2.skills],
    };
  }
  if (level === 3) {
    if (rng.bool()) {
      const { E } = LEVELS[3].exprs;
      const ctx = newCtx(rng, E.ops, [x, { name: 'k', type: 'int' }], E);
      const inner = gen(ctx, 'int', E.depth, true, ['x']);
      const mk = fn(['k'], fn(['x'], inner));
      const c1 = rng.int(1, 5);
      const c2 = rng.int(1, 5);
      const mk1 = call('mk', lit(c1));
      const end = rng.pick([apply(mk1, a), apply(mk1, apply(call('mk', lit(c2)), a)), apply(call('mk', a), lit(c1))]);
      return {
        prog: { params: ps, body: [let_('mk', mk, true), ret(end)] },
        skills: ['hof.closure', 'hof.compose', ...ctx.skills],
      };
    }
    const l = lam(rng, PASSED.exprs.g);
    const pred = PASSED.exprs.p;
    const pctx = newCtx(rng, pred.ops, [x], pred);
    const p = fn(['x'], gen(pctx, 'bool', pred.depth, true, ['x']));
    const xs = v('xs');
    const end = rng.pick([
      meth(xs, 'map', v('g')),
      meth(meth(xs, 'filter', v('p')), 'map', v('g')),
      meth(meth(xs, 'map', v('g')), 'filter', v('p')),
    ]);
    const uses = someNode([end], (n) => n.kind === 'meth' && n.method === 'filter');
    const body: Stmt[] = [let_('g', l.e, true), ...(uses ? [let_('p', p, true)] : []), ret(end)];
    return {
      prog: { params: [{ name: 'xs', type: 'int[]' }], body },
      skills: ['hof.pass', 'hof.lambda', 'array.map', ...(uses ? ['array.filter', ...pctx.skills] : []), ...l.skills],
    };
  }
  const l = lam(rng, LADDER.top(level).exprs.g);
  const body: Stmt[] = [
    let_('g', l.e, true),
    let_('r', a),
    for_('i', lit(0), v('n'), [set('r', '=', call('g', v('r')))]),
    ret(v('r')),
  ];
  return {
    prog: { params: [...ps, { name: 'n', type: 'int' }], body },
    skills: ['hof.iterate', 'hof.twice', 'hof.lambda', 'loop.for', ...l.skills],
    inputTypes: ['int', 'nat'],
  };
}

export const hof = defineFamily({
  id: F,
  name: 'higher-order functions',
  description: 'Local lambdas, repeated application, composition, closures, functions as arguments, iteration.',
  skills: hofSkills,
  ladder: LADDER,
  candidate,
});
