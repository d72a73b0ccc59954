// Recursion: linear recursion on n with a generated combination of n and f(n - d); recursion over
// arrays and strings by slicing; tree recursion (two calls); accumulator parameters; digit recursion.
//
// Knobs per level (shape, combination depth, input bounds):
//   0: if (n <= 0) return b; return f(n - 1) + E(n), E a leaf or one operator; n 0-6
//   1: base case n <= c (c 0-1), step 1-2, combination C(n, f(n - d)) of depth 2 with + - *; n 0-8
//   2: recursion over an array (xs[0], f(xs.slice(1))) or a string (s.charAt(0), f(s.slice(1))) with a generated combination of depth 1-2 (array, str); 0-5 elements
//   3: tree recursion C(f(n - 1), f(n - 2), n) of depth 3 with a generated base E(n) (Fibonacci-like); or digits f(floor(n / 10)) with n % 10 (numtheory); n 0-10 / 0-9999
//   4: accumulator recursion f(n - d, A(acc, n)) with a guarded step of depth 3 (cond) and a generated result of depth 2; n 0-9, acc 0-9
import { bin, call, gen, idx, if_, lit, meth, newCtx, prods, prop, ret, substitute, v, type Expr, type Param, type Stmt } from '../grammar/index.js';
import { defineFamily, skill, type Candidate } from '../kit.js';
import { ranges } from '../levels.js';
import type { Rng } from '../../core/rng.js';

const F = 'recursion';

export const recursionSkills = [
  skill(F, 'linear', 'linear recursion', 'Follows f(n) = E(n) + f(n - 1) down to a base case.', ['cond.if-else', 'arith.sub'], 0),
  skill(F, 'combine', 'combining results', 'Combines the recursive result with n by an arbitrary expression.', ['recursion.linear', 'arith.mul'], 1),
  skill(F, 'list', 'recursion over arrays', 'Recurs on the tail of an array.', ['recursion.linear', 'array.slice'], 2),
  skill(F, 'string', 'recursion over strings', 'Recurs on the rest of a string.', ['recursion.linear', 'str.slice'], 2),
  skill(F, 'tree', 'tree recursion', 'Two recursive calls per step (Fibonacci-like).', ['recursion.combine'], 3),
  skill(F, 'digits', 'digit recursion', 'Recurs on floor(n / 10), combining the last digit.', ['recursion.combine', 'numtheory.digits'], 3),
  skill(F, 'accumulator', 'accumulator parameters', 'Threads an accumulator through tail calls.', ['recursion.combine', 'cond.ternary'], 4),
];

const RANGES = [ranges([0, 6]), ranges([0, 8]), ranges([0, 9], [0, 5], [0, 5], 'abcde'), ranges([0, 10]), ranges([0, 9])];

function candidate(rng: Rng, level: number): Candidate {
  const n = v('n');
  const r: Param = { name: 'r', type: 'int' };
  const np: Param = { name: 'n', type: 'int' };
  if (level <= 1) {
    const d = level === 0 ? 1 : rng.int(1, 2);
    const base = level === 0 ? 0 : rng.int(0, 1);
    const rec = call('f', bin('-', n, lit(d)));
    let comb: Expr;
    const skills = new Set(['recursion.linear', 'cond.if-else']);
    if (level === 0) {
      const ctx = newCtx(rng, prods('add', 'mul', 'sub'), [np], { leaf: 1, ints: [1, 5] });
      comb = bin('+', rec, rng.bool(0.4) ? n : gen(ctx, 'int', 1, true, ['n']));
      for (const s of ctx.skills) skills.add(s);
      skills.add('arith.add');
    } else {
      const ctx = newCtx(rng, prods('add', 'sub', 'mul'), [np, r], { leaf: 0.4, ints: [1, 5] });
      comb = substitute(gen(ctx, 'int', 2, true, ['r']), 'r', rec);
      for (const s of ctx.skills) skills.add(s);
      skills.add('recursion.combine');
    }
    const body: Stmt[] = [if_(bin('<=', n, lit(base)), [ret(lit(rng.int(0, 3)))]), ret(comb)];
    return { prog: { params: [np], body }, skills, inputTypes: ['nat'] };
  }
  if (level === 2) {
    if (rng.bool()) {
      const xs = v('xs');
      const ctx = newCtx(rng, prods('add', 'sub', 'mul', 'ifInt', 'gt', 'lt', 'even'), [{ name: 'h', type: 'int' }, r], { leaf: 0.4, ints: [1, 5] });
      const comb = substitute(substitute(gen(ctx, 'int', rng.int(1, 2), true, ['r']), 'r', call('f', meth(xs, 'slice', lit(1)))), 'h', idx(xs, lit(0)));
      const body: Stmt[] = [if_(bin('===', prop(xs, 'length'), lit(0)), [ret(lit(rng.int(0, 2)))]), ret(comb)];
      return { prog: { params: [{ name: 'xs', type: 'int[]' }], body }, skills: ['recursion.list', 'recursion.combine', 'array.slice', ...ctx.skills] };
    }
    const s = v('s');
    const rs: Param = { name: 'r', type: 'str' };
    const ctx = newCtx(rng, prods('concat', 'upper', 'repeat', 'ifStr', 'eq'), [{ name: 'h', type: 'str' }, rs], { leaf: 0.3, words: ['x', 'a', '-'] });
    const comb = substitute(substitute(gen(ctx, 'str', rng.int(1, 2), true, ['r']), 'r', call('f', meth(s, 'slice', lit(1)))), 'h', meth(s, 'charAt', lit(0)));
    const body: Stmt[] = [if_(bin('===', prop(s, 'length'), lit(0)), [ret(lit(rng.pick(['', '.', 'z'])))]), ret(comb)];
    return { prog: { params: [{ name: 's', type: 'str' }], body }, skills: ['recursion.string', 'str.slice', 'str.index', ...ctx.skills] };
  }
  if (level === 3) {
    if (rng.bool(0.65)) {
      const a: Param = { name: 'p', type: 'int' };
      const b: Param = { name: 'q', type: 'int' };
      const ctx = newCtx(rng, prods('add', 'sub', 'mul'), [a, b, np], { leaf: 0.4, ints: [1, 3] });
      const comb = substitute(substitute(gen(ctx, 'int', 3, true, ['p']), 'p', call('f', bin('-', n, lit(1)))), 'q', call('f', bin('-', n, lit(2))));
      const bctx = newCtx(rng, prods('add', 'mul'), [np], { leaf: 0.7, ints: [1, 3] });
      const body: Stmt[] = [if_(bin('<', n, lit(2)), [ret(gen(bctx, 'int', 1, true))]), ret(comb)];
      return { prog: { params: [np], body }, skills: ['recursion.tree', 'recursion.combine', ...ctx.skills, ...bctx.skills], inputTypes: ['nat'] };
    }
    const ctx = newCtx(rng, prods('add', 'mul', 'sub', 'max'), [{ name: 'd', type: 'int' }, r], { leaf: 0.4, ints: [1, 3] });
    const rec = call('f', call('Math.floor', bin('/', n, lit(10))));
    const comb = substitute(substitute(gen(ctx, 'int', 3, true, ['r', 'd']), 'r', rec), 'd', bin('%', n, lit(10)));
    const body: Stmt[] = [if_(bin('<', n, lit(10)), [ret(n)]), ret(comb)];
    return { prog: { params: [np], body }, skills: ['recursion.digits', 'recursion.combine', 'numtheory.digits', ...ctx.skills], inputTypes: ['nat'], ranges: ranges([0, 9999]) };
  }
  // Level 4: accumulator.
  const acc: Param = { name: 'acc', type: 'int' };
  const d = rng.int(1, 2);
  const ctx = newCtx(rng, prods('add', 'sub', 'mul', 'mod', 'ifInt', 'gt', 'lt', 'even'), [acc, np], { leaf: 0.4, ints: [1, 6] });
  const step = gen(ctx, 'int', 3, true, ['acc', 'n']);
  const fin = newCtx(rng, prods('add', 'sub', 'mod', 'mul'), [acc], { leaf: 0.5, ints: [1, 9] });
  const body: Stmt[] = [
    if_(bin('<=', n, lit(0)), [ret(gen(fin, 'int', 2, true, ['acc']))]),
    ret(call('f', bin('-', n, lit(d)), step)),
  ];
  return {
    prog: { params: [np, acc], body },
    skills: ['recursion.accumulator', 'recursion.combine', ...ctx.skills, ...fin.skills],
    inputTypes: ['nat', 'nat'],
    ranges: ranges([0, 9]),
  };
}

export const recursion = defineFamily({
  id: F,
  name: 'recursion',
  description: 'Linear, list, string, tree, digit and accumulator recursion with generated combinations.',
  skills: recursionSkills,
  knobs: [
    'if (n <= 0) return b; return f(n - 1) + E(n), E a leaf or one operator; n 0-6',
    'base case n <= 0..1, step 1-2, combination of depth 2 over n and f(n - d) with + - *; n 0-8',
    'recursion over an array (xs[0], f(xs.slice(1))) or a string (charAt(0), f(s.slice(1))) with a generated combination (array, str); 0-5 elements',
    'tree recursion C(f(n - 1), f(n - 2), n), n 0-10; or digit recursion f(floor(n / 10)) with n % 10 (numtheory), n 0-9999',
    'accumulator recursion f(n - d, A(acc, n)) with ternaries and % (cond, arith); n 0-9, acc 0-9',
  ],
  ranges: (level) => RANGES[level]!,
  candidate,
});

