// The sampler: typed random expressions grown from productions. Families enable productions (each
// tagged with the skill it exercises) per level and build program shapes (loops, recursion,
// if-chains) whose holes `gen` fills, so the number of distinct programs grows combinatorially with
// the expression depth and the production set.
import type { Rng } from '../../core/rng.js';
import { arr, fn, lit, mentions, sameJson, v, type Expr, type Param, type Ty } from './tree.js';

/** One rule of the grammar: builds an expression of type `out` from sub-expressions of types `args`. */
export interface Production {
  skill: string;
  out: Ty;
  args: Ty[];
  build: (args: Expr[], rng: Rng) => Expr;
  /** Relative weight (default 1). */
  weight?: number;
}

export interface GenCtx {
  rng: Rng;
  prods: Production[];
  /** Variables in scope, by type. */
  scope: Param[];
  /** Integer literal range for holes of type int. */
  ints: readonly [number, number];
  /** Words used for string literals. */
  words: readonly string[];
  /** Probability that an inner hole becomes a leaf even when depth remains. */
  leaf: number;
  /** Skills exercised so far (filled by gen; an attempt gen drops is rolled back in place). */
  skills: Set<string>;
  /** Counter for fresh lambda parameter names. */
  fresh: number;
  /** Makes the sampler's choices (FIXED_CHOOSER: the fixed weights; a learned proposer brings its own). */
  chooser: Chooser;
}

/**
 * The sampler's choice points: which production fills a hole of type `ty`, whether a hole becomes a
 * leaf, and which integer literal a leaf gets. FIXED_CHOOSER draws exactly as the grammar always
 * has (same calls on the rng, in the same order), so drafts stay the same for a seed; a learned
 * chooser (proposers/) reweights the same options and records what it chose.
 */
export interface Chooser {
  /** A new candidate program starts (the kit's draw discards a rejected one and tries again). */
  begin?(): void;
  production(rng: Rng, ty: Ty, options: Production[]): Production;
  leaf(rng: Rng, ty: Ty, p: number): boolean;
  int(rng: Rng, ty: Ty, lo: number, hi: number): number;
}

export const FIXED_CHOOSER: Chooser = {
  production: (rng, _ty, options) => pickWeighted(rng, options),
  leaf: (rng, _ty, p) => rng.bool(p),
  int: (rng, _ty, lo, hi) => rng.int(lo, hi),
};

/**
 * The chooser new contexts take. The families build their contexts deep inside a draw; the kit
 * sets this around one draw (withChooser) rather than threading a parameter through every family.
 */
let ambientChooser: Chooser = FIXED_CHOOSER;

/** Runs `body` (synchronous) with `chooser` making the choices of every context it creates. */
export function withChooser<T>(chooser: Chooser, body: () => T): T {
  const saved = ambientChooser;
  ambientChooser = chooser;
  try {
    return body();
  } finally {
    ambientChooser = saved;
  }
}

export function newCtx(
  rng: Rng,
  prods: Production[],
  scope: Param[],
  opts: Partial<Pick<GenCtx, 'ints' | 'words' | 'leaf'>> = {},
): GenCtx {
  return {
    rng,
    prods,
    scope: [...scope],
    ints: opts.ints ?? [0, 9],
    words: opts.words ?? WORDS,
    leaf: opts.leaf ?? 0.3,
    skills: new Set(),
    fresh: 0,
    chooser: ambientChooser,
  };
}

export const WORDS = [
  'a',
  'b',
  'ab',
  'ba',
  'x',
  'yo',
  'cat',
  'dog',
  'sun',
  'ox',
  'abc',
  'hi',
  'zz',
  'key',
  'map',
] as const;
const LAMBDA_NAMES = ['x', 'y', 'z', 'u', 'w', 'm'];

function pickWeighted<T extends { weight?: number }>(rng: Rng, items: T[]): T {
  let total = 0;
  for (const it of items) total += it.weight ?? 1;
  let r = rng.next() * total;
  for (const it of items) {
    r -= it.weight ?? 1;
    if (r < 0) return it;
  }
  return items[items.length - 1]!;
}

/** A leaf of type `ty`: a variable in scope (preferred) or a literal. */
export function leaf(ctx: GenCtx, ty: Ty): Expr {
  const { rng, chooser } = ctx;
  switch (ty) {
    case 'k':
      return lit(chooser.int(rng, ty, 2, 9));
    case 'sh':
      return lit(chooser.int(rng, ty, 1, 3));
    case 'n3':
      return lit(chooser.int(rng, ty, 1, 3));
    case 'ch':
      return lit(rng.pick(['a', 'b', 'o', 'x', 'z']));
  }
  if (ty.includes('=>')) return lambda(ctx, ty, 0);
  const vars = ctx.scope.filter((p) => p.type === ty);
  if (vars.length > 0 && rng.bool(0.75)) return asLeaf(rng.pick(vars));
  switch (ty) {
    case 'int':
      return lit(chooser.int(rng, ty, ctx.ints[0], ctx.ints[1]));
    case 'bool':
      return vars.length > 0 ? asLeaf(rng.pick(vars)) : lit(rng.bool());
    case 'str':
      return lit(rng.pick(ctx.words));
    case 'int[]':
      return arr(Array.from({ length: rng.int(0, 3) }, () => lit(rng.int(0, 9))));
    case 'str[]':
      return arr(Array.from({ length: rng.int(0, 2) }, () => lit(rng.pick(ctx.words))));
    default:
      if (vars.length > 0) return asLeaf(rng.pick(vars));
      throw new Error(`grammar: no leaf of type ${ty}`);
  }
}

const asLeaf = (p: Param): Expr => p.expr ?? v(p.name);

function lambda(ctx: GenCtx, ty: Ty, depth: number): Expr {
  const [ins, out] = ty.split('=>') as [string, string];
  const ps = ins.split(',').map((pt) => ({ name: LAMBDA_NAMES[ctx.fresh++ % LAMBDA_NAMES.length]!, type: pt }));
  const saved = ctx.scope;
  // Inside a lambda the parameters are the most useful leaves: put them in front, shadowing.
  ctx.scope = [...ps, ...saved.filter((s) => !ps.some((p) => p.name === s.name))];
  const body = gen(
    ctx,
    out,
    Math.max(depth, 1),
    true,
    ps.map((p) => p.name),
  );
  ctx.scope = saved;
  return fn(
    ps.map((p) => p.name),
    body,
  );
}

/**
 * A random expression of type `ty` with at most `depth` nested productions. With `force`, the
 * top node is a production (when one exists for `ty`). With `use`, the expression must mention one
 * of those variables (retried a few times, then a variable is spliced in via the first production).
 */
export function gen(ctx: GenCtx, ty: Ty, depth: number, force = false, use?: string[]): Expr {
  for (let attempt = 0; attempt < 8; attempt++) {
    const saved = ctx.skills.size;
    const e = gen1(ctx, ty, depth, force);
    if (!use || use.length === 0 || mentions(e, use)) return e;
    rollback(ctx.skills, saved);
  }
  const vars = ctx.scope.filter((p) => p.type === ty && use!.includes(p.name));
  if (vars.length > 0) return asLeaf(ctx.rng.pick(vars));
  return gen1(ctx, ty, depth, force);
}

function gen1(ctx: GenCtx, ty: Ty, depth: number, force: boolean): Expr {
  if (ty.includes('=>')) return lambda(ctx, ty, depth - 1);
  if (ty === 'bool' && !ctx.scope.some((p) => p.type === 'bool')) {
    // No boolean variable: a literal true/false would make a degenerate condition, so build a
    // comparison instead (from productions that do not recurse into booleans).
    const flat = ctx.prods.filter((p) => p.out === 'bool' && !p.args.includes('bool'));
    if (flat.length > 0 && depth <= 0) {
      depth = 1;
      force = true;
      const saved = ctx.prods;
      ctx.prods = ctx.prods.filter((p) => p.out !== 'bool' || flat.includes(p));
      try {
        return gen1(ctx, ty, depth, force);
      } finally {
        ctx.prods = saved;
      }
    }
    if (flat.length > 0) force = true;
  }
  // Productions taking lambdas need depth for the lambda body: at depth 1 they are left out, so
  // lambdas cannot nest without bound.
  const options = depth > 0 ? optionsFor(ctx.prods, ty, depth > 1) : [];
  if (options.length === 0 || (!force && ctx.chooser.leaf(ctx.rng, ty, ctx.leaf))) return leaf(ctx, ty);
  const p = ctx.chooser.production(ctx.rng, ty, options);
  const names = ctx.scope.map((s) => s.name);
  const saved = ctx.skills.size;
  let args: Expr[] = [];
  let built: Expr = lit(0);
  for (let attempt = 0; attempt < 6; attempt++) {
    rollback(ctx.skills, saved);
    args = p.args.map((a) => gen1(ctx, a, depth - 1, false));
    built = p.build(args, ctx.rng);
    if (repeated(built, args[0])) continue;
    // Reject degenerate nodes: no variable at all (a constant subexpression), or two identical
    // operands (a + a is fine for arithmetic, but a && a, b - b, a === a are not).
    // (Operands are compared as JSON text only where a rule applies and their kinds match: the
    // comparison is the costly part.)
    if (names.length > 0 && !args.some((a) => mentions(a, names))) continue;
    if (p.skill === 'cond.ternary' && sameJson(args[1], args[2])) continue;
    const sameMatters = (p.out !== 'int' && p.out !== 'str') || p.skill === 'arith.sub' || p.skill.startsWith('bits.');
    if (args.length >= 2 && sameMatters && sameJson(args[0], args[1])) continue;
    break;
  }
  ctx.skills.add(p.skill);
  return built;
}

/**
 * Forgets the skills added after the first `size` (a Set keeps insertion order, and gen only adds):
 * cheaper than copying the set before every attempt, which is what a rollback replaces.
 */
function rollback(skills: Set<string>, size: number): void {
  if (skills.size === size) return;
  let i = 0;
  for (const s of skills) if (i++ >= size) skills.delete(s);
}

/** The productions of `prods` that build a `ty`, with (deep) or without those taking lambdas; cached. */
function optionsFor(prods: Production[], ty: Ty, deep: boolean): Production[] {
  let byTy = OPTIONS.get(prods);
  if (!byTy) OPTIONS.set(prods, (byTy = new Map()));
  const key = deep ? ty : `${ty}/flat`;
  let out = byTy.get(key);
  if (!out) byTy.set(key, (out = prods.filter((p) => p.out === ty && (deep || !p.args.some((a) => a.includes('=>'))))));
  return out;
}

/** optionsFor by production list (families build a list per candidate, or keep one per level). */
const OPTIONS = new WeakMap<Production[], Map<string, Production[]>>();

/** f(f(x)) for an idempotent or self-cancelling f: sort of a sort, !!p, Math.abs(Math.abs(x)), … */
function repeated(outer: Expr, inner: Expr | undefined): boolean {
  if (!inner) return false;
  if (outer.kind === 'meth' && inner.kind === 'meth')
    return outer.method === inner.method && ['sort', 'reverse', 'toUpperCase'].includes(outer.method);
  if (outer.kind === 'call' && inner.kind === 'call')
    return outer.callee === inner.callee && outer.callee === 'Math.abs';
  if (outer.kind === 'un' && inner.kind === 'un') return outer.op === inner.op;
  return false;
}
