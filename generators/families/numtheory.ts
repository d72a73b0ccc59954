// Number theory: parity, divisibility, digits, gcd/lcm, primes, divisors, modular powers.
import {
  bin,
  call,
  for_,
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
  type GenCtx,
  type Param,
  type Stmt,
} from '../grammar/index.js';
import { defineFamily, skill, type Candidate } from '../kit.js';
import { drawSpan, ranges, type ExprSpec, type Level } from '../levels.js';
import { knob, ladder } from '../ladder.js';
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

const PRIME = {
  shape: 'm = n or E(n); is m prime, by trial division (for loop)',
  params: { nat: 1 },
  exprs: { E: { ops: prods('add', 'mul', 'sub'), depth: [1, 2], leaf: 0.6, ints: [1, 9] } },
  inputs: ranges([0, 200]),
} satisfies Level;
const PRIMES = {
  shape: 'c = the sum of E(k) (or the count) over the primes k < n (nested loops)',
  params: { nat: 1 },
  exprs: { E: { ops: prods('add', 'mul', 'sub', 'mod'), depth: [1, 2], leaf: 0.5, ints: [1, 5] } },
  inputs: ranges([1, 100]),
} satisfies Level;
/** What level 4 does with the result r of either shape. */
const POST = {
  ops: prods('add', 'sub', 'mul', 'mod', 'ifInt', 'gt', 'even'),
  depth: 3,
  leaf: 0.5,
  ints: [1, 9],
} satisfies ExprSpec;
const LCM = {
  shape: 'r = lcm(a, b), through gcd; then r = post(r, a, b) (posts), the last post(r) returned, or r',
  params: { nat: 2 },
  counts: { posts: 1 },
  exprs: { post: POST },
  inputs: ranges([1, 30]),
} satisfies Level;

const LEVELS = [
  {
    shape: 'E % 2 === 0 or 1, E % k === 0 or E % 10, with E = n or E(n)',
    params: { nat: 1 },
    exprs: { E: { ops: prods('add', 'mul', 'sub'), depth: 1, leaf: 1, ints: [1, 9] } },
    inputs: ranges([0, 50]),
  },
  {
    shape: 'the sum of E(d) (or the count) over the decimal digits d of n (while loop)',
    params: { nat: 1 },
    exprs: { E: { ops: prods('add', 'mul', 'sub', 'max'), depth: [0, 2], leaf: 0.5, ints: [1, 5] } },
    inputs: ranges([0, 999]),
  },
  {
    shape: 'gcd of x = a or E(a) and y = b or E(b) by Euclid (while loop)',
    params: { nat: 2 },
    exprs: { E: { ops: prods('add', 'mul'), depth: [1, 2], leaf: 0.6, ints: [1, 6] } },
    inputs: ranges([0, 200]),
    or: [PRIME],
  },
  {
    shape: 's = the sum of E(i) (or of 1) over the divisors i of n',
    params: { nat: 1 },
    exprs: { E: { ops: prods('add', 'mul', 'sub', 'ifInt', 'lt', 'even'), depth: 2, leaf: 0.5, ints: [1, 5] } },
    inputs: ranges([1, 100]),
    or: [PRIMES],
  },
  {
    shape:
      'r = b^e mod m by repeated multiplication (loop); then r = post(r, b, e, m) (posts), the last post(r) returned, or r',
    params: { nat: 3 },
    counts: { posts: 1 },
    exprs: { post: POST },
    inputs: ranges([2, 30]),
    or: [LCM],
  },
] as const satisfies readonly Level[];

const LADDER = ladder(LEVELS, [
  knob.count('posts', { by: 1, max: 120, why: 'programs would near the 16,000-character limit' }),
  knob.count('posts', { by: 1, max: 120, why: 'programs would near the 16,000-character limit' }, ['or', 0]),
  knob.ints({ by: 10 }, [], 'upper'),
  knob.ints({ by: 10 }, ['or', 0], 'upper'),
]);

const n = v('n');
const nParam = (): Param => ({ name: 'n', type: 'int' });
const mod = (a: Expr, b: Expr): Expr => bin('%', a, b);
const floorDiv = (a: Expr, b: Expr): Expr => call('Math.floor', bin('/', a, b));

function gcdLoop(x: string, y: string): Stmt {
  return while_(bin('!==', v(y), lit(0)), [let_('t', v(y), true), set(y, '=', mod(v(x), v(y))), set(x, '=', v('t'))]);
}

function primeLoop(target: Expr, onComposite: Stmt, i = 'i'): Stmt {
  return for_(i, lit(2), target, [if_(bin('===', mod(target, v(i)), lit(0)), [onComposite])]);
}

/** Each level's shapes, one function each (the draws in the order the level makes them). */
function candidate(rng: Rng, level: number): Candidate {
  if (level === 0) return remainderTest(rng);
  if (level === 1) return digitSum(rng);
  if (level === 2) return rng.bool() ? gcd(rng) : primality(rng);
  if (level === 3) return rng.bool(0.7) ? divisorSum(rng) : primeSum(rng);
  const after = afterResult(rng, level);
  return rng.bool() ? modpow(after) : lcm(after);
}

/** Level 0: E % 2 === 0 or 1 (parity), E % k === 0 (divisibility) or E % 10 (the last digit). */
function remainderTest(rng: Rng): Candidate {
  const np = nParam();
  const { E } = LEVELS[0].exprs;
  const ctx = newCtx(rng, E.ops, [np], E);
  const e = rng.bool(0.5) ? n : gen(ctx, 'int', E.depth, true, ['n']);
  const kind = rng.int(0, 2);
  const k = rng.int(2, 9);
  const body =
    kind === 0
      ? bin('===', mod(e, lit(2)), lit(rng.int(0, 1)))
      : kind === 1
        ? bin('===', mod(e, lit(k)), lit(0))
        : mod(e, lit(10));
  const skills = [
    ...ctx.skills,
    kind === 0 ? 'numtheory.parity' : kind === 1 ? 'numtheory.divisibility' : 'numtheory.digits',
  ];
  return { prog: { params: [np], body: [ret(body)] }, skills, inputTypes: ['nat'] };
}

/** Level 1: the sum of E(d) (or the count) over the decimal digits d of n. */
function digitSum(rng: Rng): Candidate {
  const { E } = LEVELS[1].exprs;
  const ctx = newCtx(rng, E.ops, [{ name: 'd', type: 'int' }], E);
  const step = rng.bool(0.8) ? gen(ctx, 'int', drawSpan(rng, E.depth), false, ['d']) : lit(1);
  const body: Stmt[] = [
    let_('s', lit(0)),
    while_(bin('>', n, lit(0)), [
      let_('d', mod(n, lit(10)), true),
      set('s', '+=', step),
      set('n', '=', floorDiv(n, lit(10))),
    ]),
    ret(v('s')),
  ];
  return {
    prog: { params: [nParam()], body },
    skills: ['numtheory.digits', 'loop.while', ...ctx.skills],
    inputTypes: ['nat'],
  };
}

/** Level 2: the gcd of a or E(a) and b or E(b) by Euclid. */
function gcd(rng: Rng): Candidate {
  const { E } = LEVELS[2].exprs;
  const ps: Param[] = [
    { name: 'a', type: 'int' },
    { name: 'b', type: 'int' },
  ];
  const ctx = newCtx(rng, E.ops, ps, E);
  const pre = (x: string): Expr => (rng.bool(0.4) ? v(x) : gen(ctx, 'int', drawSpan(rng, E.depth), true, [x]));
  const body: Stmt[] = [let_('x', pre('a')), let_('y', pre('b')), gcdLoop('x', 'y'), ret(v('x'))];
  return {
    prog: { params: ps, body },
    skills: ['numtheory.gcd', 'loop.while', ...ctx.skills],
    inputTypes: ['nat', 'nat'],
  };
}

/** Level 2's other shape (PRIME): is m = n or E(n) prime, by trial division. */
function primality(rng: Rng): Candidate {
  const np = nParam();
  const { E } = PRIME.exprs;
  const ctx = newCtx(rng, E.ops, [np], E);
  const e = rng.bool(0.1) ? n : gen(ctx, 'int', drawSpan(rng, E.depth), true, ['n']);
  const body: Stmt[] = [
    let_('m', e, true),
    if_(bin('<', v('m'), lit(2)), [ret(lit(false))]),
    primeLoop(v('m'), ret(lit(false))),
    ret(lit(true)),
  ];
  return {
    prog: { params: [np], body },
    skills: ['numtheory.prime', 'numtheory.divisibility', 'loop.for', ...ctx.skills],
    inputTypes: ['nat'],
  };
}

/** Level 3: the sum of E(i) (or of 1) over the divisors i of n. */
function divisorSum(rng: Rng): Candidate {
  const np = nParam();
  const { E } = LEVELS[3].exprs;
  const ctx = newCtx(rng, E.ops, [{ name: 'i', type: 'int' }, np], E);
  const term = rng.bool(0.1) ? lit(1) : gen(ctx, 'int', E.depth, true, ['i']);
  const body: Stmt[] = [
    let_('s', lit(0)),
    for_('i', lit(1), bin('+', n, lit(1)), [if_(bin('===', mod(n, v('i')), lit(0)), [set('s', '+=', term)])]),
    ret(v('s')),
  ];
  return {
    prog: { params: [np], body },
    skills: ['numtheory.divisors', 'numtheory.divisibility', 'loop.count', ...ctx.skills],
    inputTypes: ['nat'],
  };
}

/** Level 3's other shape (PRIMES): the sum of E(k) (or the count) over the primes k < n. */
function primeSum(rng: Rng): Candidate {
  const { E } = PRIMES.exprs;
  const kctx = newCtx(rng, E.ops, [{ name: 'k', type: 'int' }], E);
  const term: Stmt = rng.bool(0.1)
    ? set('c', '++')
    : set('c', '+=', gen(kctx, 'int', drawSpan(rng, E.depth), true, ['k']));
  const body: Stmt[] = [
    let_('c', lit(0)),
    for_('k', lit(2), n, [
      let_('p', lit(true)),
      primeLoop(v('k'), set('p', '=', lit(false)), 'j'),
      if_(v('p'), [term]),
    ]),
    ret(v('c')),
  ];
  return {
    prog: { params: [nParam()], body },
    skills: ['numtheory.prime', 'numtheory.divisors', 'loop.nested', 'loop.count', ...kctx.skills],
    inputTypes: ['nat'],
  };
}

/** What level 4 and up do with the result r of either shape: the posts, then the last post(r) or r. */
interface AfterResult {
  top: ReturnType<typeof LADDER.top>;
  /** The last post's context (its skills are the candidate's). */
  post: GenCtx;
  /** What is returned: r or the last post(r). */
  tail: Expr;
  /** The posts before the last, each reading r and the parameters ps (none at level 4). */
  posts: (ps: Param[]) => Stmt[];
}

function afterResult(rng: Rng, level: number): AfterResult {
  const top = LADDER.top(level);
  const postSpec = top.exprs.post;
  const post = newCtx(rng, postSpec.ops, [{ name: 'r', type: 'int' }], postSpec);
  const tail = rng.bool(0.1) ? v('r') : gen(post, 'int', postSpec.depth, true, ['r']);
  const posts = (ps: Param[]): Stmt[] => {
    const ctx = newCtx(rng, postSpec.ops, [{ name: 'r', type: 'int' }, ...ps], postSpec);
    return Array.from({ length: top.counts.posts - 1 }, () =>
      set('r', '=', gen(ctx, 'int', postSpec.depth, true, ['r'])),
    );
  };
  return { top, post, tail, posts };
}

/** Level 4: r = b^e mod m by repeated multiplication, then the posts. */
function modpow({ post, tail, posts }: AfterResult): Candidate {
  const ps: Param[] = [
    { name: 'b', type: 'int' },
    { name: 'e', type: 'int' },
    { name: 'm', type: 'int' },
  ];
  const body: Stmt[] = [
    let_('r', lit(1)),
    for_('i', lit(0), v('e'), [set('r', '=', mod(bin('*', v('r'), v('b')), v('m')))]),
    ...posts(ps),
    ret(tail),
  ];
  return {
    prog: { params: ps, body },
    skills: ['numtheory.modpow', 'loop.product', ...post.skills],
    inputTypes: ['nat', 'nat', 'nat'],
  };
}

/** Level 4's other shape (LCM): r = lcm(a, b) through gcd, then the posts. */
function lcm({ top, post, tail, posts }: AfterResult): Candidate {
  const ps: Param[] = [
    { name: 'a', type: 'int' },
    { name: 'b', type: 'int' },
  ];
  const body: Stmt[] = [
    let_('x', v('a')),
    let_('y', v('b')),
    gcdLoop('x', 'y'),
    let_('r', floorDiv(bin('*', v('a'), v('b')), v('x')), top.counts.posts === 1),
    ...posts(ps),
    ret(tail),
  ];
  return {
    prog: { params: ps, body },
    skills: ['numtheory.lcm', 'numtheory.gcd', 'loop.while', ...post.skills],
    inputTypes: ['nat', 'nat'],
    ranges: top.or[0].inputs,
  };
}

export const numtheory = defineFamily({
  id: F,
  name: 'number theory',
  description: 'Parity, divisibility, digits, gcd/lcm, primality, divisors and modular powers.',
  skills: numtheorySkills,
  ladder: LADDER,
  candidate,
});
