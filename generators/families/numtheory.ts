// Number theory: parity, divisibility, digits, gcd/lcm, primality, divisors, modular powers.
//
// Knobs per level (shape, generated parts, value range):
//   0: parity / divisibility test or last digit of a one-operator expression of n; n 0-50
//   1: digit loop: sum of E(d) over the decimal digits d of n, or the digit count; n 0-999
//   2: gcd of two generated expressions (Euclid's while loop), or primality of a generated expression (trial division); values 0-200
//   3: sum of E(i) over the divisors i of n (loop, cond), or sum of E(k) over the primes k below n (nested loops); n 1-100
//   4: modular power (b^e mod m by repeated multiplication), or lcm via gcd, with a generated post-expression; b 0-20, e 0-12, m 2-30
import { bin, call, for_, gen, if_, let_, lit, newCtx, prods, ret, set, v, while_, type Expr, type Param, type Stmt } from '../grammar/index.js';
import { defineFamily, skill, type Candidate } from '../kit.js';
import { ranges } from '../levels.js';
import type { Rng } from '../../core/rng.js';

const F = 'numtheory';

export const numtheorySkills = [
  skill(F, 'parity', 'parity', 'Tells even from odd with n % 2.', ['arith.mod'], 0),
  skill(F, 'divisibility', 'divisibility', 'Tests n % k === 0.', ['numtheory.parity'], 0),
  skill(F, 'digits', 'decimal digits', 'Takes digits with % 10 and floor(n / 10).', ['arith.div', 'arith.mod'], 0),
  skill(F, 'gcd', 'greatest common divisor', "Euclid's algorithm.", ['arith.mod', 'loop.while'], 2),
  skill(F, 'prime', 'primality', 'Trial division up to n.', ['numtheory.divisibility', 'loop.for'], 2),
  skill(F, 'divisors', 'divisors', 'Enumerates the divisors of n.', ['numtheory.divisibility', 'loop.count'], 3),
  skill(F, 'modpow', 'modular powers', 'Computes b^e mod m without overflow.', ['arith.mod', 'loop.product'], 4),
  skill(F, 'lcm', 'least common multiple', 'a * b / gcd(a, b).', ['numtheory.gcd'], 4),
];

const RANGES = [ranges([0, 50]), ranges([0, 999]), ranges([0, 200]), ranges([1, 100]), ranges([0, 20])];

const n = v('n');
const mod = (a: Expr, b: Expr): Expr => bin('%', a, b);
const floorDiv = (a: Expr, b: Expr): Expr => call('Math.floor', bin('/', a, b));

function gcdLoop(x: string, y: string): Stmt {
  return while_(bin('!==', v(y), lit(0)), [let_('t', v(y), true), set(y, '=', mod(v(x), v(y))), set(x, '=', v('t'))]);
}

function primeLoop(target: Expr, onComposite: Stmt, i = 'i'): Stmt {
  return for_(i, lit(2), target, [if_(bin('===', mod(target, v(i)), lit(0)), [onComposite])]);
}

function candidate(rng: Rng, level: number): Candidate {
  const np: Param = { name: 'n', type: 'int' };
  if (level === 0) {
    const ctx = newCtx(rng, prods('add', 'mul', 'sub'), [np], { leaf: 1, ints: [1, 9] });
    const e = rng.bool(0.5) ? n : gen(ctx, 'int', 1, true, ['n']);
    const kind = rng.int(0, 2);
    const k = rng.int(2, 9);
    const body = kind === 0 ? bin('===', mod(e, lit(2)), lit(rng.int(0, 1))) : kind === 1 ? bin('===', mod(e, lit(k)), lit(0)) : mod(e, lit(10));
    const skills = [...ctx.skills, kind === 0 ? 'numtheory.parity' : kind === 1 ? 'numtheory.divisibility' : 'numtheory.digits'];
    return { prog: { params: [np], body: [ret(body)] }, skills, inputTypes: ['nat'] };
  }
  if (level === 1) {
    const d: Param = { name: 'd', type: 'int' };
    const ctx = newCtx(rng, prods('add', 'mul', 'sub', 'max'), [d], { leaf: 0.5, ints: [1, 5] });
    const step = rng.bool(0.8) ? gen(ctx, 'int', rng.int(0, 2), false, ['d']) : lit(1);
    const body: Stmt[] = [
      let_('s', lit(0)),
      while_(bin('>', n, lit(0)), [let_('d', mod(n, lit(10)), true), set('s', '+=', step), set('n', '=', floorDiv(n, lit(10)))]),
      ret(v('s')),
    ];
    return { prog: { params: [np], body }, skills: ['numtheory.digits', 'loop.while', ...ctx.skills], inputTypes: ['nat'] };
  }
  if (level === 2) {
    if (rng.bool()) {
      const ps: Param[] = [{ name: 'a', type: 'int' }, { name: 'b', type: 'int' }];
      const ctx = newCtx(rng, prods('add', 'mul'), ps, { leaf: 0.6, ints: [1, 6] });
      const pre = (x: string): Expr => (rng.bool(0.4) ? v(x) : gen(ctx, 'int', rng.int(1, 2), true, [x]));
      const body: Stmt[] = [let_('x', pre('a')), let_('y', pre('b')), gcdLoop('x', 'y'), ret(v('x'))];
      return { prog: { params: ps, body }, skills: ['numtheory.gcd', 'loop.while', ...ctx.skills], inputTypes: ['nat', 'nat'] };
    }
    const ctx = newCtx(rng, prods('add', 'mul', 'sub'), [np], { leaf: 0.6, ints: [1, 9] });
    const e = rng.bool(0.1) ? n : gen(ctx, 'int', rng.int(1, 2), true, ['n']);
    const body: Stmt[] = [
      let_('m', e, true),
      if_(bin('<', v('m'), lit(2)), [ret(lit(false))]),
      primeLoop(v('m'), ret(lit(false))),
      ret(lit(true)),
    ];
    return { prog: { params: [np], body }, skills: ['numtheory.prime', 'numtheory.divisibility', 'loop.for', ...ctx.skills], inputTypes: ['nat'] };
  }
  if (level === 3) {
    if (rng.bool(0.7)) {
      const i: Param = { name: 'i', type: 'int' };
      const ctx = newCtx(rng, prods('add', 'mul', 'sub', 'ifInt', 'lt', 'even'), [i, np], { leaf: 0.5, ints: [1, 5] });
      const term = rng.bool(0.1) ? lit(1) : gen(ctx, 'int', 2, true, ['i']);
      const body: Stmt[] = [
        let_('s', lit(0)),
        for_('i', lit(1), bin('+', n, lit(1)), [if_(bin('===', mod(n, v('i')), lit(0)), [set('s', '+=', term)])]),
        ret(v('s')),
      ];
      return { prog: { params: [np], body }, skills: ['numtheory.divisors', 'numtheory.divisibility', 'loop.count', ...ctx.skills], inputTypes: ['nat'] };
    }
    const kctx = newCtx(rng, prods('add', 'mul', 'sub', 'mod'), [{ name: 'k', type: 'int' }], { leaf: 0.5, ints: [1, 5] });
    const term: Stmt = rng.bool(0.1) ? set('c', '++') : set('c', '+=', gen(kctx, 'int', rng.int(1, 2), true, ['k']));
    const body: Stmt[] = [
      let_('c', lit(0)),
      for_('k', lit(2), n, [let_('p', lit(true)), primeLoop(v('k'), set('p', '=', lit(false)), 'j'), if_(v('p'), [term])]),
      ret(v('c')),
    ];
    return { prog: { params: [np], body }, skills: ['numtheory.prime', 'numtheory.divisors', 'loop.nested', 'loop.count', ...kctx.skills], inputTypes: ['nat'] };
  }
  // Level 4
  const r: Param = { name: 'r', type: 'int' };
  const post = newCtx(rng, prods('add', 'sub', 'mul', 'mod', 'ifInt', 'gt', 'even'), [r], { leaf: 0.5, ints: [1, 9] });
  const tail = rng.bool(0.1) ? v('r') : gen(post, 'int', 3, true, ['r']);
  if (rng.bool()) {
    const ps: Param[] = [{ name: 'b', type: 'int' }, { name: 'e', type: 'int' }, { name: 'm', type: 'int' }];
    const body: Stmt[] = [
      let_('r', lit(1)),
      for_('i', lit(0), v('e'), [set('r', '=', mod(bin('*', v('r'), v('b')), v('m')))]),
      ret(tail),
    ];
    return {
      prog: { params: ps, body },
      skills: ['numtheory.modpow', 'loop.product', ...post.skills],
      inputTypes: ['nat', 'nat', 'nat'],
      ranges: { ...ranges([2, 30]), int: [2, 30] },
    };
  }
  const ps: Param[] = [{ name: 'a', type: 'int' }, { name: 'b', type: 'int' }];
  const body: Stmt[] = [
    let_('x', v('a')),
    let_('y', v('b')),
    gcdLoop('x', 'y'),
    let_('r', floorDiv(bin('*', v('a'), v('b')), v('x')), true),
    ret(tail),
  ];
  return { prog: { params: ps, body }, skills: ['numtheory.lcm', 'numtheory.gcd', 'loop.while', ...post.skills], inputTypes: ['nat', 'nat'], ranges: ranges([1, 30]) };
}

export const numtheory = defineFamily({
  id: F,
  name: 'number theory',
  description: 'Parity, divisibility, digits, gcd/lcm, primality, divisors and modular powers.',
  skills: numtheorySkills,
  knobs: [
    'parity / divisibility test or last digit of n or a one-operator expression of n; n 0-50',
    'sum of E(d) over the decimal digits d of n (depth 0-2), or the digit count; n 0-999',
    'gcd of two generated expressions (while loop), or primality of a generated expression (trial division); values 0-200',
    'sum of E(i) over the divisors i of n (ternaries, cond), or sum of E(k) over the primes k below n (nested loops); n 1-100',
    'modular power b^e mod m (loop), or lcm via gcd, then a generated post-expression; values 1-30',
  ],
  ranges: (level) => RANGES[level]!,
  candidate,
});
