// Recursion: linear, over arrays and strings, tree, digit and accumulator recursion.
import {
  bin,
  call,
  gen,
  idx,
  if_,
  lit,
  meth,
  newCtx,
  prods,
  prop,
  ret,
  substitute,
  v,
  type Expr,
  type Param,
  type Stmt,
} from '../grammar/index.js';
import { defineFamily, skill, type Candidate } from '../kit.js';
import { drawSpan, ranges, type Level } from '../levels.js';
import { knob, ladder } from '../ladder.js';
import type { Rng } from '../../core/rng.js';

const F = 'recursion';

export const recursionSkills = [
  skill(
    F,
    'linear',
    'linear recursion',
    'Follows f(n) = E(n) + f(n - 1) down to a base case.',
    ['cond.if-else', 'arith.sub'],
    0,
  ),
  skill(
    F,
    'combine',
    'combining results',
    'Combines the recursive result with n by an arbitrary expression.',
    ['recursion.linear', 'arith.mul'],
    1,
  ),
  skill(F, 'list', 'recursion over arrays', 'Recurs on the tail of an array.', ['recursion.linear', 'array.slice'], 2),
  skill(F, 'string', 'recursion over strings', 'Recurs on the rest of a string.', ['recursion.linear', 'str.slice'], 2),
  skill(F, 'tree', 'tree recursion', 'Two recursive calls per step (Fibonacci-like).', ['recursion.combine'], 3),
  skill(
    F,
    'digits',
    'digit recursion',
    'Recurs on floor(n / 10), combining the last digit.',
    ['recursion.combine', 'numtheory.digits'],
    3,
  ),
  skill(
    F,
    'accumulator',
    'accumulator parameters',
    'Threads an accumulator through tail calls.',
    ['recursion.combine', 'cond.ternary'],
    4,
  ),
];

const STR_WORDS = ['x', 'a', '-'];

const OVER_STRING = {
  shape: 'if (s.length === 0) return w; return E(s.charAt(0), f(s.slice(1)))',
  params: { str: 1 },
  exprs: {
    'string combination': {
      ops: prods('concat', 'upper', 'repeat', 'ifStr', 'eq'),
      depth: [1, 2],
      leaf: 0.3,
      words: STR_WORDS,
    },
  },
  inputs: ranges([0, 9], [0, 5], [0, 5], 'abcde'),
} satisfies Level;
const DIGITS = {
  shape: 'if (n < 10) return n; return E(f(Math.floor(n / 10)), n % 10)',
  params: { nat: 1 },
  exprs: { 'digit combination': { ops: prods('add', 'mul', 'sub', 'max'), depth: 3, leaf: 0.4, ints: [1, 3] } },
  inputs: ranges([0, 9999]),
} satisfies Level;

const LEVELS = [
  {
    shape: 'if (n <= 0) return b; return f(n - 1) + (n or E(n))',
    params: { nat: 1 },
    exprs: { combination: { ops: prods('add', 'mul', 'sub'), depth: 1, leaf: 1, ints: [1, 5] } },
    inputs: ranges([0, 6]),
  },
  {
    shape: 'if (n <= c) return b; return E(n, f(n - d)), d 1 or 2',
    params: { nat: 1 },
    exprs: { combination: { ops: prods('add', 'sub', 'mul'), depth: 2, leaf: 0.4, ints: [1, 5] } },
    inputs: ranges([0, 8]),
  },
  {
    shape: 'if (xs.length === 0) return b; return E(xs[0], f(xs.slice(1)))',
    params: { 'int[]': 1 },
    exprs: {
      combination: {
        ops: prods('add', 'sub', 'mul', 'ifInt', 'gt', 'lt', 'even'),
        depth: [1, 2],
        leaf: 0.4,
        ints: [1, 5],
      },
    },
    inputs: ranges([0, 9], [0, 5], [0, 5], 'abcde'),
    or: [OVER_STRING],
  },
  {
    shape: 'if (n < 2) return base; return E(f(n - 1), f(n - 2), n)',
    params: { nat: 1 },
    exprs: {
      combination: { ops: prods('add', 'sub', 'mul'), depth: 3, leaf: 0.4, ints: [1, 3] },
      base: { ops: prods('add', 'mul'), depth: 1, leaf: 0.7, ints: [1, 3] },
    },
    inputs: ranges([0, 10]),
    or: [DIGITS],
  },
  {
    shape: 'if (n <= 0) return result(acc); return f(n - d, step(acc, n)), d 1 or 2',
    params: { nat: 2 },
    exprs: {
      step: { ops: prods('add', 'sub', 'mul', 'mod', 'ifInt', 'gt', 'lt', 'even'), depth: 3, leaf: 0.4, ints: [1, 6] },
      result: { ops: prods('add', 'sub', 'mod', 'mul'), depth: 2, leaf: 0.5, ints: [1, 9] },
    },
    inputs: ranges([0, 9]),
  },
] as const satisfies readonly Level[];

const LADDER = ladder(LEVELS, [
  knob.depth('step', { by: 1, every: 8, max: 12, why: 'deeper steps would seldom stay within the value bounds' }),
  // n from 10d at level d (50 at level 5), so that level 8 costs more than tabled level 3's tree
  // recursion (docs/levels.md, "Measured"); the step depth's max ends the ladder first.
  {
    ...knob.ints({
      by: 10,
      offset: 4,
      max: 900,
      why: "the recursion would near the sandbox's 256 KiB stack, which held 1,100 calls of the deepest steps",
    }),
    how: 'shift',
  },
]);

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
      const spec = LEVELS[0].exprs.combination;
      const ctx = newCtx(rng, spec.ops, [np], spec);
      comb = bin('+', rec, rng.bool(0.4) ? n : gen(ctx, 'int', spec.depth, true, ['n']));
      for (const s of ctx.skills) skills.add(s);
      skills.add('arith.add');
    } else {
      const spec = LEVELS[1].exprs.combination;
      const ctx = newCtx(rng, spec.ops, [np, r], spec);
      comb = substitute(gen(ctx, 'int', spec.depth, true, ['r']), 'r', rec);
      for (const s of ctx.skills) skills.add(s);
      skills.add('recursion.combine');
    }
    const body: Stmt[] = [if_(bin('<=', n, lit(base)), [ret(lit(rng.int(0, 3)))]), ret(comb)];
    return { prog: { params: [np], body }, skills, inputTypes: ['nat'] };
  }
  if (level === 2) {
    if (rng.bool()) {
      const xs = v('xs');
      const spec = LEVELS[2].exprs.combination;
      const ctx = newCtx(rng, spec.ops, [{ name: 'h', type: 'int' }, r], spec);
      const comb = substitute(
        substitute(gen(ctx, 'int', drawSpan(rng, spec.depth), true, ['r']), 'r', call('f', meth(xs, 'slice', lit(1)))),
        'h',
        idx(xs, lit(0)),
      );
      const body: Stmt[] = [if_(bin('===', prop(xs, 'length'), lit(0)), [ret(lit(rng.int(0, 2)))]), ret(comb)];
      return {
        prog: { params: [{ name: 'xs', type: 'int[]' }], body },
        skills: ['recursion.list', 'recursion.combine', 'array.slice', ...ctx.skills],
      };
    }
    const s = v('s');
    const spec = OVER_STRING.exprs['string combination'];
    const ctx = newCtx(
      rng,
      spec.ops,
      [
        { name: 'h', type: 'str' },
        { name: 'r', type: 'str' },
      ],
      spec,
    );
    const comb = substitute(
      substitute(gen(ctx, 'str', drawSpan(rng, spec.depth), true, ['r']), 'r', call('f', meth(s, 'slice', lit(1)))),
      'h',
      meth(s, 'charAt', lit(0)),
    );
    const body: Stmt[] = [if_(bin('===', prop(s, 'length'), lit(0)), [ret(lit(rng.pick(['', '.', 'z'])))]), ret(comb)];
    return {
      prog: { params: [{ name: 's', type: 'str' }], body },
      skills: ['recursion.string', 'str.slice', 'str.index', ...ctx.skills],
    };
  }
  if (level === 3) {
    if (rng.bool(0.65)) {
      const { combination, base } = LEVELS[3].exprs;
      const ctx = newCtx(
        rng,
        combination.ops,
        [{ name: 'p', type: 'int' }, { name: 'q', type: 'int' }, np],
        combination,
      );
      const comb = substitute(
        substitute(gen(ctx, 'int', combination.depth, true, ['p']), 'p', call('f', bin('-', n, lit(1)))),
        'q',
        call('f', bin('-', n, lit(2))),
      );
      const bctx = newCtx(rng, base.ops, [np], base);
      const body: Stmt[] = [if_(bin('<', n, lit(2)), [ret(gen(bctx, 'int', base.depth, true))]), ret(comb)];
      return {
        prog: { params: [np], body },
        skills: ['recursion.tree', 'recursion.combine', ...ctx.skills, ...bctx.skills],
        inputTypes: ['nat'],
      };
    }
    const spec = DIGITS.exprs['digit combination'];
    const ctx = newCtx(rng, spec.ops, [{ name: 'd', type: 'int' }, r], spec);
    const rec = call('f', call('Math.floor', bin('/', n, lit(10))));
    const comb = substitute(
      substitute(gen(ctx, 'int', spec.depth, true, ['r', 'd']), 'r', rec),
      'd',
      bin('%', n, lit(10)),
    );
    const body: Stmt[] = [if_(bin('<', n, lit(10)), [ret(n)]), ret(comb)];
    return {
      prog: { params: [np], body },
      skills: ['recursion.digits', 'recursion.combine', 'numtheory.digits', ...ctx.skills],
      inputTypes: ['nat'],
      ranges: DIGITS.inputs,
    };
  }
  const { step: stepSpec, result } = LADDER.top(level).exprs;
  const acc: Param = { name: 'acc', type: 'int' };
  const d = rng.int(1, 2);
  const ctx = newCtx(rng, stepSpec.ops, [acc, np], stepSpec);
  const step = gen(ctx, 'int', stepSpec.depth, true, ['acc', 'n']);
  const fin = newCtx(rng, result.ops, [acc], result);
  const body: Stmt[] = [
    if_(bin('<=', n, lit(0)), [ret(gen(fin, 'int', result.depth, true, ['acc']))]),
    ret(call('f', bin('-', n, lit(d)), step)),
  ];
  return {
    prog: { params: [np, acc], body },
    skills: ['recursion.accumulator', 'recursion.combine', ...ctx.skills, ...fin.skills],
    inputTypes: ['nat', 'nat'],
  };
}

export const recursion = defineFamily({
  id: F,
  name: 'recursion',
  description: 'Linear, list, string, tree, digit and accumulator recursion with generated combinations.',
  skills: recursionSkills,
  ladder: LADDER,
  candidate,
});
