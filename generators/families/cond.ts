// Conditionals: ternaries, if/else chains, nested conditions and guarded updates of a local.
import {
  cond,
  gen,
  if_,
  let_,
  newCtx,
  prods,
  ret,
  set,
  v,
  type Expr,
  type Param,
  type Stmt,
} from '../grammar/index.js';
import { defineFamily, skill, type Candidate } from '../kit.js';
import { drawSpan, ranges, type Level, type Span } from '../levels.js';
import { knob, ladder } from '../ladder.js';
import type { Rng } from '../../core/rng.js';

const F = 'cond';

export const condSkills = [
  skill(F, 'ternary', 'ternary', 'Chooses between two values with c ? x : y.', ['logic.compare'], 0),
  skill(F, 'if-else', 'if / else', 'Returns from one of two branches of an if statement.', ['cond.ternary'], 1),
  skill(F, 'chain', 'else-if chains', 'Finds the first true condition of a chain of ifs.', ['cond.if-else'], 2),
  skill(
    F,
    'nested',
    'nested conditions',
    'Follows an if inside an if, with compound conditions.',
    ['cond.chain', 'logic.nested'],
    3,
  ),
  skill(
    F,
    'guarded-update',
    'guarded updates',
    'Tracks a local variable through several conditional updates.',
    ['cond.nested', 'arith.nested'],
    4,
  ),
];

const NAMES = ['a', 'b', 'c'];
const COMPARE = prods('lt', 'gt', 'le', 'ge', 'eq', 'ne');
const COMPOUND = [...COMPARE, ...prods('and', 'or', 'not', 'add', 'sub')];
const ARITH = prods('add', 'sub', 'mul');
const ARITH_DIV = prods('add', 'sub', 'mul', 'mod', 'div');

const LEVELS = [
  {
    shape: 'return c ? x : y',
    params: { int: 1 },
    exprs: {
      condition: { ops: COMPARE, depth: 1, leaf: 0.4, ints: [1, 9] },
      branch: { ops: ARITH, depth: 1, leaf: 0.6, ints: [1, 9] },
    },
    inputs: ranges([0, 9]),
  },
  {
    shape: 'if (c) return x; return y',
    params: { int: [1, 2] },
    exprs: {
      condition: { ops: COMPARE, depth: 1, leaf: 0.4, ints: [1, 9] },
      branch: { ops: ARITH, depth: 1, leaf: 0.4, ints: [1, 9] },
    },
    inputs: ranges([0, 9]),
  },
  {
    shape: 'an else-if chain of 3 branches (the last of depth 1)',
    params: { int: 2 },
    exprs: {
      condition: { ops: COMPARE, depth: 1, leaf: 0.4, ints: [1, 15] },
      branch: { ops: ARITH, depth: [1, 2], leaf: 0.35, ints: [1, 15] },
    },
    inputs: ranges([0, 20]),
  },
  {
    shape: 'an if nested in an if (3 leaves)',
    params: { int: 2 },
    exprs: {
      condition: { ops: COMPOUND, depth: 2, leaf: 0.4, ints: [1, 15] },
      branch: { ops: ARITH_DIV, depth: 2, leaf: 0.35, ints: [1, 15] },
    },
    inputs: ranges([-20, 20]),
  },
  {
    shape: 'let r = x; updates of r, each under a condition; return c ? r : y (c over r, y of depth 1)',
    params: { int: [2, 3] },
    counts: { updates: [2, 3] },
    exprs: {
      condition: { ops: COMPOUND, depth: 2, leaf: 0.4, ints: [1, 15] },
      branch: { ops: ARITH_DIV, depth: 2, leaf: 0.35, ints: [1, 15] },
    },
    inputs: ranges([-30, 30]),
  },
] satisfies Level[];

const LADDER = ladder(LEVELS, [
  knob.count('updates', { by: 3, every: 2, max: 90, why: 'programs would near the 16,000-character limit' }),
  knob.ints({ by: 10 }),
]);

function candidate(rng: Rng, level: number): Candidate {
  const { params, exprs, counts } = LADDER.at(level);
  const { condition, branch } = exprs;
  const ps: Param[] = NAMES.slice(0, drawSpan(rng, params.int)).map((name) => ({ name, type: 'int' }));
  const cctx = newCtx(rng, condition.ops, ps, condition);
  const actx = newCtx(rng, branch.ops, ps, branch);
  const names = ps.map((p) => p.name);
  const c = (): Expr => gen(cctx, 'bool', condition.depth, true, names);
  const arm = (d: Span): Expr => gen(actx, 'int', drawSpan(rng, d));
  const skills = new Set<string>();
  let body: Stmt[];
  if (level === 0) {
    skills.add('cond.ternary');
    body = [ret(cond(c(), arm(branch.depth), arm(branch.depth)))];
  } else if (level === 1) {
    skills.add('cond.if-else');
    body = [if_(c(), [ret(arm(branch.depth))]), ret(arm(branch.depth))];
  } else if (level === 2) {
    skills.add('cond.if-else').add('cond.chain');
    body = [if_(c(), [ret(arm(branch.depth))]), if_(c(), [ret(arm(branch.depth))]), ret(arm(1))];
  } else if (level === 3) {
    skills.add('cond.if-else').add('cond.chain').add('cond.nested');
    body = [if_(c(), [if_(c(), [ret(arm(branch.depth))]), ret(arm(branch.depth))]), ret(arm(branch.depth))];
  } else {
    skills.add('cond.if-else').add('cond.nested').add('cond.guarded-update');
    const r = { name: 'r', type: 'int' };
    const first = arm(branch.depth);
    actx.scope.push(r);
    cctx.scope.push(r);
    const updates: Stmt[] = [];
    const k = drawSpan(rng, counts!.updates!);
    for (let i = 0; i < k; i++) {
      const op = rng.pick(['=', '+=', '-='] as const);
      updates.push(
        if_(gen(cctx, 'bool', condition.depth, true, ['r', ...names]), [
          set('r', op, gen(actx, 'int', drawSpan(rng, branch.depth), true)),
        ]),
      );
    }
    body = [let_('r', first), ...updates, ret(cond(gen(cctx, 'bool', 1, true, ['r']), v('r'), arm(1)))];
  }
  for (const s of [...cctx.skills, ...actx.skills]) skills.add(s);
  if ([...actx.skills].filter((s) => s.startsWith('arith.')).length >= 2) skills.add('arith.nested');
  return { prog: { params: ps, body }, skills };
}

export const condFamily = defineFamily({
  id: F,
  name: 'conditionals',
  description: 'Ternaries, if/else, else-if chains, nested conditions and guarded updates over integer inputs.',
  skills: condSkills,
  ladder: LADDER,
  candidate,
});
