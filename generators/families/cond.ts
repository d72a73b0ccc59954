// Conditionals: ternaries, if/else, else-if chains, nested conditions and guarded updates of a
// local variable. Conditions come from the comparison grammar (logic), branches from arithmetic.
//
// Knobs per level (shape, branches, condition depth, branch depth, value range):
//   0: one ternary `c ? x : y`, one comparison against a literal, leaf or one-operator branches; 1 param 0-9
//   1: if/else statement, 1-2 params, one comparison, branches of depth 1; values 0-9
//   2: else-if chain of 3 branches, 2 params, comparisons, branches of depth 1-2; values 0-20
//   3: nested if inside if (3 leaves), conditions joined with && / || (logic), branch depth 2 with % and floor division (arith); values -20..20
//   4: a local variable updated by 2-3 guarded statements, then a final ternary; 2-3 params; values -30..30
import { cond, gen, if_, let_, newCtx, prods, ret, set, v, type Expr, type GenCtx, type Param, type Stmt } from '../grammar/index.js';
import { defineFamily, ranges, skill, type Candidate } from '../kit.js';
import type { Rng } from '../../core/rng.js';

const F = 'cond';

export const condSkills = [
  skill(F, 'ternary', 'ternary', 'Chooses between two values with c ? x : y.', ['logic.compare'], 0),
  skill(F, 'if-else', 'if / else', 'Returns from one of two branches of an if statement.', ['cond.ternary'], 1),
  skill(F, 'chain', 'else-if chains', 'Finds the first true condition of a chain of ifs.', ['cond.if-else'], 2),
  skill(F, 'nested', 'nested conditions', 'Follows an if inside an if, with compound conditions.', ['cond.chain', 'logic.nested'], 3),
  skill(F, 'guarded-update', 'guarded updates', 'Tracks a local variable through several conditional updates.', ['cond.nested', 'arith.nested'], 4),
];

const NAMES = ['a', 'b', 'c'];
const CMP = prods('lt', 'gt', 'le', 'ge', 'eq', 'ne');
const RANGES = [ranges([0, 9]), ranges([0, 9]), ranges([0, 20]), ranges([-20, 20]), ranges([-30, 30])];

function setup(rng: Rng, level: number, n: number): { ps: Param[]; cctx: GenCtx; actx: GenCtx } {
  const ps: Param[] = NAMES.slice(0, n).map((name) => ({ name, type: 'int' }));
  const condProds = level >= 3 ? [...CMP, ...prods('and', 'or', 'not', 'add', 'sub')] : CMP;
  const armProds = level >= 3 ? prods('add', 'sub', 'mul', 'mod', 'div') : prods('add', 'sub', 'mul');
  const ints: [number, number] = level < 2 ? [1, 9] : [1, 15];
  const cctx = newCtx(rng, condProds, ps, { ints, leaf: 0.4 });
  const actx = newCtx(rng, armProds, ps, { ints, leaf: level === 0 ? 0.6 : level === 1 ? 0.4 : 0.35 });
  return { ps, cctx, actx };
}

function candidate(rng: Rng, level: number): Candidate {
  const all = ps3(level, rng);
  const { ps, cctx, actx } = setup(rng, level, all);
  const names = ps.map((p) => p.name);
  const c = (): Expr => gen(cctx, 'bool', level >= 3 ? 2 : 1, true, names);
  const arm = (d: number): Expr => gen(actx, 'int', d);
  const skills = new Set<string>();
  let body: Stmt[];
  if (level === 0) {
    skills.add('cond.ternary');
    body = [ret(cond(c(), arm(1), arm(1)))];
  } else if (level === 1) {
    skills.add('cond.if-else');
    body = [if_(c(), [ret(arm(1))]), ret(arm(1))];
  } else if (level === 2) {
    skills.add('cond.if-else').add('cond.chain');
    body = [if_(c(), [ret(arm(rng.int(1, 2)))]), if_(c(), [ret(arm(rng.int(1, 2)))]), ret(arm(1))];
  } else if (level === 3) {
    skills.add('cond.if-else').add('cond.chain').add('cond.nested');
    body = [if_(c(), [if_(c(), [ret(arm(2))]), ret(arm(2))]), ret(arm(2))];
  } else {
    skills.add('cond.if-else').add('cond.nested').add('cond.guarded-update');
    const r = { name: 'r', type: 'int' };
    const first = arm(2);
    actx.scope.push(r);
    cctx.scope.push(r);
    const updates: Stmt[] = [];
    const k = rng.int(2, 3);
    for (let i = 0; i < k; i++) {
      const op = rng.pick(['=', '+=', '-='] as const);
      updates.push(if_(gen(cctx, 'bool', 2, true, ['r', ...names]), [set('r', op, gen(actx, 'int', 2, true))]));
    }
    body = [let_('r', first), ...updates, ret(cond(gen(cctx, 'bool', 1, true, ['r']), v('r'), arm(1)))];
  }
  for (const s of [...cctx.skills, ...actx.skills]) skills.add(s);
  if ([...actx.skills].filter((s) => s.startsWith('arith.')).length >= 2) skills.add('arith.nested');
  return { prog: { params: ps, body }, skills };
}

const ps3 = (level: number, rng: Rng): number => (level === 0 ? 1 : level === 1 ? rng.int(1, 2) : level === 4 ? rng.int(2, 3) : 2);

export const condFamily = defineFamily({
  id: F,
  name: 'conditionals',
  description: 'Ternaries, if/else, else-if chains, nested conditions and guarded updates over integer inputs.',
  skills: condSkills,
  knobs: [
    'one ternary c ? x : y; one comparison against a literal; leaf or one-operator branches; 1 param 0-9',
    'if/else statement; 1-2 params; one comparison; branches of depth 1; values 0-9',
    'else-if chain of 3 branches; 2 params; branches of depth 1-2; values 0-20',
    'if nested in if (3 leaves); conditions joined by && || ! (logic); branches of depth 2 with % and floor division (arith); values -20..20',
    'local variable with 2-3 guarded updates then a final ternary; 2-3 params; values -30..30',
  ],
  ranges: (level) => RANGES[level]!,
  candidate,
});

