// Higher-order functions and composition: local lambdas, applying twice, composing, closures that
// return functions, passing functions to map/filter, iterating a function.
//
// Knobs per level (shape, lambda depth, inputs):
//   0: const g = x => E(x) (one operator); return g(a); a 0-9
//   1: g applied twice, or g(a) combined with g(k); lambda depth 1-2; a 0-9
//   2: two lambdas g, h composed (g(h(a)), h(g(a)), or through compose = (p, q) => x => p(q(x))); depth 2; a 0-20
//   3: a closure factory mk = k => x => E(x, k) applied with generated constants, or a lambda passed to map/filter (array); arrays of 2-5 ints
//   4: a lambda with a ternary (cond) iterated n times in a loop (loop); a 0-20, n 0-6
import { apply, bin, call, fn, for_, gen, let_, lit, meth, newCtx, prods, ret, set, someNode, v, type Expr, type Param, type Stmt } from '../grammar/index.js';
import { defineFamily, skill, type Candidate } from '../kit.js';
import { ranges } from '../levels.js';
import type { Rng } from '../../core/rng.js';

const F = 'hof';

export const hofSkills = [
  skill(F, 'lambda', 'local functions', 'Defines an arrow function and calls it.', ['arith.add'], 0),
  skill(F, 'twice', 'repeated application', 'Applies the same function twice.', ['hof.lambda'], 1),
  skill(F, 'compose', 'composition', 'Feeds the output of one function into another.', ['hof.twice'], 2),
  skill(F, 'closure', 'closures', 'A function that returns a function capturing its argument.', ['hof.compose'], 3),
  skill(F, 'pass', 'functions as arguments', 'Passes a named function to map or filter.', ['hof.lambda', 'array.map'], 3),
  skill(F, 'iterate', 'iterating a function', 'Applies a function n times in a loop.', ['hof.twice', 'loop.for'], 4),
];

const RANGES = [ranges([0, 9]), ranges([0, 9]), ranges([0, 20]), ranges([0, 9], [2, 5]), ranges([0, 20])];
const x: Param = { name: 'x', type: 'int' };
const a = v('a');

function lam(rng: Rng, depth: number, ops = prods('add', 'sub', 'mul'), extra: Param[] = [], leaf = 0.4): { e: Expr; skills: Set<string> } {
  const ctx = newCtx(rng, ops, [x, ...extra], { leaf, ints: [1, 9] });
  const body = gen(ctx, 'int', depth, true, ['x']);
  return { e: fn(['x'], body), skills: ctx.skills };
}

function candidate(rng: Rng, level: number): Candidate {
  const ps: Param[] = [{ name: 'a', type: 'int' }];
  const g = v('g');
  if (level === 0) {
    const l = lam(rng, 1, prods('add', 'sub', 'mul'), [], 1);
    return { prog: { params: ps, body: [let_('g', l.e, true), ret(call('g', a))] }, skills: ['hof.lambda', ...l.skills] };
  }
  if (level === 1) {
    const l = lam(rng, rng.int(1, 2));
    const end = rng.bool(0.6) ? call('g', call('g', a)) : bin(rng.pick(['+', '-', '*'] as const), call('g', a), call('g', lit(rng.int(1, 5))));
    return { prog: { params: ps, body: [let_('g', l.e, true), ret(end)] }, skills: ['hof.lambda', 'hof.twice', ...l.skills] };
  }
  if (level === 2) {
    const l1 = lam(rng, 2, prods('add', 'sub', 'mul', 'mod'));
    const l2 = lam(rng, 2, prods('add', 'sub', 'mul', 'div'));
    const via = rng.bool(0.3);
    const body: Stmt[] = [let_('g', l1.e, true), let_('h', l2.e, true)];
    if (via) {
      body.push(let_('compose', fn(['p', 'q'], fn(['y'], call('p', call('q', v('y'))))), true));
      body.push(ret(apply(rng.bool() ? call('compose', g, v('h')) : call('compose', v('h'), g), a)));
    } else {
      body.push(ret(rng.pick([call('g', call('h', a)), call('h', call('g', a)), bin('+', call('g', a), call('h', a))])));
    }
    return { prog: { params: ps, body }, skills: ['hof.compose', 'hof.twice', 'hof.lambda', ...l1.skills, ...l2.skills] };
  }
  if (level === 3) {
    if (rng.bool()) {
      const k: Param = { name: 'k', type: 'int' };
      const ctx = newCtx(rng, prods('add', 'sub', 'mul', 'mod', 'max'), [x, k], { leaf: 0.15, ints: [1, 9] });
      const inner = gen(ctx, 'int', 3, true, ['x']);
      const mk = fn(['k'], fn(['x'], inner));
      const c1 = rng.int(1, 5);
      const c2 = rng.int(1, 5);
      const mk1 = call('mk', lit(c1));
      const end = rng.pick([apply(mk1, a), apply(mk1, apply(call('mk', lit(c2)), a)), apply(call('mk', a), lit(c1))]);
      return { prog: { params: ps, body: [let_('mk', mk, true), ret(end)] }, skills: ['hof.closure', 'hof.compose', ...ctx.skills] };
    }
    const l = lam(rng, 3, prods('add', 'sub', 'mul', 'mod'), [], 0.25);
    const pctx = newCtx(rng, prods('gt', 'lt', 'even', 'ne'), [x], { leaf: 0.5, ints: [1, 9] });
    const p = fn(['x'], gen(pctx, 'bool', 1, true, ['x']));
    const xs = v('xs');
    const end = rng.pick([meth(xs, 'map', v('g')), meth(meth(xs, 'filter', v('p')), 'map', v('g')), meth(meth(xs, 'map', v('g')), 'filter', v('p'))]);
    const uses = someNode([end], (n) => n.kind === 'meth' && n.method === 'filter');
    const body: Stmt[] = [let_('g', l.e, true), ...(uses ? [let_('p', p, true)] : []), ret(end)];
    return {
      prog: { params: [{ name: 'xs', type: 'int[]' }], body },
      skills: ['hof.pass', 'hof.lambda', 'array.map', ...(uses ? ['array.filter', ...pctx.skills] : []), ...l.skills],
    };
  }
  const l = lam(rng, 4, prods('add', 'sub', 'mod', 'div', 'ifInt', 'gt', 'lt', 'even'), [], 0.3);
  const body: Stmt[] = [
    let_('g', l.e, true),
    let_('r', a),
    for_('i', lit(0), v('n'), [set('r', '=', call('g', v('r')))]),
    ret(v('r')),
  ];
  return { prog: { params: [...ps, { name: 'n', type: 'int' }], body }, skills: ['hof.iterate', 'hof.twice', 'hof.lambda', 'loop.for', ...l.skills], inputTypes: ['int', 'nat'], ranges: ranges([0, 20]) };
}

export const hof = defineFamily({
  id: F,
  name: 'higher-order functions',
  description: 'Local lambdas, repeated application, composition, closures, functions as arguments, iteration.',
  skills: hofSkills,
  knobs: [
    'const g = x => E(x) with one operator; return g(a); a 0-9',
    'g applied twice, or g(a) combined with g(c); lambda depth 1-2; a 0-9',
    'two lambdas composed directly or through compose = (p, q) => y => p(q(y)); lambda depth 2; a 0-20',
    'closure factory mk = k => x => E(x, k) applied to constants, or lambdas passed to map/filter (array); 2-5 ints 0-9',
    'a lambda with ternaries (cond) iterated n times in a loop (loop); a 0-20, n 0-20',
  ],
  ranges: (level) => RANGES[level]!,
  candidate,
});
