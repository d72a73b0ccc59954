// The typed program grammar shared by every family: an AST for a small pure subset of JavaScript,
// a printer (AST → source text), a reference interpreter (used by generators to reject drafts whose
// values would leave the JSON-like, integer-only world before the sandbox ever sees them), and a
// typed random expression generator driven by productions.
//
// Families enable productions (each tagged with the skill it exercises) per level and build program
// "shapes" (loops, recursion, if-chains) whose holes are filled by `gen`. The number of distinct
// programs therefore grows combinatorially with expression depth and the production set.
import type { Rng } from '../core/rng.js';
import type { Json } from '../core/task.js';

// ---------------------------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------------------------

/**
 * Value types of the grammar. `rec` is a record {x:int, y:int, name:str, ok:bool}; lambda types
 * are written `int=>int`, `int,int=>int`, `int=>bool`, … Pseudo-types for literal-only arguments:
 * `k` (positive divisor 2–9), `sh` (shift amount 1–3), `n3` (small count 1–3), `ch` (one letter).
 */
export type Ty = string;

export type BinOp =
  | '+' | '-' | '*' | '/' | '%'
  | '<' | '<=' | '>' | '>=' | '===' | '!=='
  | '&&' | '||'
  | '&' | '|' | '^' | '<<' | '>>';

export type Expr =
  | { k: 'lit'; v: Json }
  | { k: 'var'; n: string }
  | { k: 'bin'; op: BinOp; a: Expr; b: Expr }
  | { k: 'un'; op: '!' | '-' | '~'; a: Expr }
  | { k: 'cond'; c: Expr; t: Expr; e: Expr }
  /** A call of a global (Math.abs, String, Object.keys, …), of `f` itself, or of a local function. */
  | { k: 'call'; f: string; args: Expr[] }
  | { k: 'meth'; o: Expr; m: string; args: Expr[] }
  | { k: 'prop'; o: Expr; p: string }
  | { k: 'idx'; o: Expr; i: Expr }
  | { k: 'arr'; items: Expr[] }
  /** Object literal; a field whose key is null is a spread `...e`. */
  | { k: 'obj'; fields: [string | null, Expr][] }
  | { k: 'fn'; ps: string[]; body: Expr }
  /** A call of a computed function: `mk(3)(a)`, `compose(g, h)(a)`. */
  | { k: 'apply'; f: Expr; args: Expr[] }
  | { k: 'spread'; e: Expr };

export type Stmt =
  | { k: 'let'; n: string; e: Expr; c?: boolean }
  | { k: 'set'; n: string; op: '=' | '+=' | '-=' | '*=' | '++'; e?: Expr }
  | { k: 'seti'; o: string; i: Expr; e: Expr }
  | { k: 'for'; v: string; from: Expr; to: Expr; body: Stmt[] }
  | { k: 'forof'; v: string; of: Expr; body: Stmt[] }
  | { k: 'while'; c: Expr; body: Stmt[] }
  | { k: 'if'; c: Expr; t: Stmt[]; e?: Stmt[] }
  | { k: 'ret'; e: Expr };

export interface Param {
  n: string;
  ty: Ty;
  /** A derived leaf (e.g. `o.x` for a record param): used in place of the bare name by `leaf`. */
  e?: Expr;
}

export interface Prog {
  ps: Param[];
  body: Stmt[];
}

// Small constructors keep family files readable.
export const lit = (v: Json): Expr => ({ k: 'lit', v });
export const v = (n: string): Expr => ({ k: 'var', n });
export const bin = (op: BinOp, a: Expr, b: Expr): Expr => ({ k: 'bin', op, a, b });
export const un = (op: '!' | '-' | '~', a: Expr): Expr => ({ k: 'un', op, a });
export const cond = (c: Expr, t: Expr, e: Expr): Expr => ({ k: 'cond', c, t, e });
export const call = (f: string, ...args: Expr[]): Expr => ({ k: 'call', f, args });
export const meth = (o: Expr, m: string, ...args: Expr[]): Expr => ({ k: 'meth', o, m, args });
export const prop = (o: Expr, p: string): Expr => ({ k: 'prop', o, p });
export const idx = (o: Expr, i: Expr): Expr => ({ k: 'idx', o, i });
export const fn = (ps: string[], body: Expr): Expr => ({ k: 'fn', ps, body });
export const apply = (f: Expr, ...args: Expr[]): Expr => ({ k: 'apply', f, args });
export const ret = (e: Expr): Stmt => ({ k: 'ret', e });
export const let_ = (n: string, e: Expr, c = false): Stmt => ({ k: 'let', n, e, c });
export const set = (n: string, op: '=' | '+=' | '-=' | '*=' | '++', e?: Expr): Stmt =>
  e === undefined ? { k: 'set', n, op } : { k: 'set', n, op, e };

// ---------------------------------------------------------------------------------------------
// Printer
// ---------------------------------------------------------------------------------------------

const BIN_PREC: Record<BinOp, number> = {
  '||': 4, '&&': 5, '|': 6, '^': 7, '&': 8,
  '===': 9, '!==': 9,
  '<': 10, '<=': 10, '>': 10, '>=': 10,
  '<<': 11, '>>': 11,
  '+': 12, '-': 12,
  '*': 13, '/': 13, '%': 13,
};

function prec(e: Expr): number {
  switch (e.k) {
    case 'lit':
      return typeof e.v === 'number' && e.v < 0 ? 14 : 20;
    case 'var':
    case 'arr':
    case 'obj':
      return 20;
    case 'call':
    case 'meth':
    case 'prop':
    case 'idx':
    case 'apply':
      return 19;
    case 'un':
      return 14;
    case 'bin':
      return BIN_PREC[e.op];
    case 'cond':
      return 3;
    case 'fn':
    case 'spread':
      return 2;
  }
}

const wrap = (s: string, yes: boolean): string => (yes ? `(${s})` : s);

export function printExpr(e: Expr): string {
  switch (e.k) {
    case 'lit':
      return JSON.stringify(e.v);
    case 'var':
      return e.n;
    case 'bin': {
      const p = BIN_PREC[e.op];
      return `${wrap(printExpr(e.a), prec(e.a) < p)} ${e.op} ${wrap(printExpr(e.b), prec(e.b) <= p)}`;
    }
    case 'un': {
      const inner = printExpr(e.a);
      const needs = prec(e.a) < 14 || (e.op === '-' && inner.startsWith('-'));
      return `${e.op}${wrap(inner, needs)}`;
    }
    case 'cond':
      return `${wrap(printExpr(e.c), prec(e.c) <= 3)} ? ${wrap(printExpr(e.t), prec(e.t) < 3)} : ${wrap(printExpr(e.e), prec(e.e) < 3)}`;
    case 'call':
      return `${e.f}(${e.args.map(printExpr).join(', ')})`;
    case 'apply':
      return `${wrap(printExpr(e.f), prec(e.f) < 19)}(${e.args.map(printExpr).join(', ')})`;
    case 'meth':
      return `${wrap(printExpr(e.o), prec(e.o) < 19)}.${e.m}(${e.args.map(printExpr).join(', ')})`;
    case 'prop':
      return `${wrap(printExpr(e.o), prec(e.o) < 19)}.${e.p}`;
    case 'idx':
      return `${wrap(printExpr(e.o), prec(e.o) < 19)}[${printExpr(e.i)}]`;
    case 'arr':
      return `[${e.items.map(printExpr).join(', ')}]`;
    case 'obj':
      return e.fields.length === 0
        ? '{}'
        : `{ ${e.fields.map(([key, x]) => (key === null ? `...${printExpr(x)}` : `${key}: ${printExpr(x)}`)).join(', ')} }`;
    case 'fn': {
      const body = printExpr(e.body);
      return `(${e.ps.join(', ')}) => ${wrap(body, e.body.k === 'obj' || prec(e.body) < 3)}`;
    }
    case 'spread':
      return `...${printExpr(e.e)}`;
  }
}

function printStmts(body: Stmt[], ind: string): string[] {
  const out: string[] = [];
  for (const s of body) {
    switch (s.k) {
      case 'let':
        out.push(`${ind}${s.c ? 'const' : 'let'} ${s.n} = ${printExpr(s.e)};`);
        break;
      case 'set':
        out.push(s.op === '++' ? `${ind}${s.n}++;` : `${ind}${s.n} ${s.op} ${printExpr(s.e!)};`);
        break;
      case 'seti':
        out.push(`${ind}${s.o}[${printExpr(s.i)}] = ${printExpr(s.e)};`);
        break;
      case 'for':
        out.push(`${ind}for (let ${s.v} = ${printExpr(s.from)}; ${s.v} < ${printExpr(s.to)}; ${s.v}++) {`);
        out.push(...printStmts(s.body, ind + '  '), `${ind}}`);
        break;
      case 'forof':
        out.push(`${ind}for (const ${s.v} of ${printExpr(s.of)}) {`);
        out.push(...printStmts(s.body, ind + '  '), `${ind}}`);
        break;
      case 'while':
        out.push(`${ind}while (${printExpr(s.c)}) {`);
        out.push(...printStmts(s.body, ind + '  '), `${ind}}`);
        break;
      case 'if':
        if (!s.e && s.t.length === 1 && s.t[0]!.k === 'ret') {
          out.push(`${ind}if (${printExpr(s.c)}) return ${printExpr(s.t[0]!.e)};`);
        } else {
          out.push(`${ind}if (${printExpr(s.c)}) {`, ...printStmts(s.t, ind + '  '));
          if (s.e) out.push(`${ind}} else {`, ...printStmts(s.e, ind + '  '));
          out.push(`${ind}}`);
        }
        break;
      case 'ret':
        out.push(`${ind}return ${printExpr(s.e)};`);
        break;
    }
  }
  return out;
}

/** Source text of `function f(...)`: one line when the body is a single return, else indented. */
export function printProgram(p: Prog): string {
  const head = `function f(${p.ps.map((q) => q.n).join(', ')})`;
  if (p.body.length === 1 && p.body[0]!.k === 'ret') return `${head} { return ${printExpr(p.body[0]!.e)}; }`;
  return [`${head} {`, ...printStmts(p.body, '  '), '}'].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Reference interpreter
// ---------------------------------------------------------------------------------------------

/**
 * Why the reference interpreter refused a run. Thrown and caught by the thousand while screening
 * candidates, so it records no stack trace (capturing one costs more than most runs).
 */
export class EvalError extends Error {
  constructor(message: string) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
  }
}

const GLOBALS: Record<string, (...xs: never[]) => unknown> = {
  'Math.abs': Math.abs,
  'Math.min': Math.min,
  'Math.max': Math.max,
  'Math.floor': Math.floor,
  'Math.trunc': Math.trunc,
  'Math.sign': Math.sign,
  String: String,
  Number: Number,
  'Object.keys': Object.keys,
  'Object.values': Object.values,
  'Object.entries': Object.entries,
};

const METHODS = new Set([
  'map', 'filter', 'reduce', 'some', 'every', 'findIndex', 'indexOf', 'includes', 'slice', 'concat',
  'reverse', 'sort', 'join', 'split', 'toUpperCase', 'toLowerCase', 'repeat', 'charAt', 'replaceAll',
  'startsWith', 'endsWith', 'padStart', 'trim', 'at', 'lastIndexOf', 'charCodeAt', 'toString',
]);

/**
 * The variables of one call, lambda or block: a few names (looked up by string comparison, as scopes
 * hold one to three) and the enclosing scope. Objects chained by prototype did the same job, but V8
 * turns every object used as a prototype into a slow dictionary, and that dominated the interpreter.
 */
class Env {
  readonly names: string[] = [];
  readonly vals: unknown[] = [];
  constructor(readonly up: Env | null) {}
}

const UNBOUND = Symbol('unbound');

function lookup(env: Env | null, n: string): unknown {
  for (; env; env = env.up) {
    const i = env.names.indexOf(n);
    if (i >= 0) return env.vals[i];
  }
  return UNBOUND;
}

/** Declares n in this scope (or overwrites it there), shadowing any outer n. */
function define(env: Env, n: string, x: unknown): void {
  const i = env.names.indexOf(n);
  if (i >= 0) env.vals[i] = x;
  else {
    env.names.push(n);
    env.vals.push(x);
  }
}

interface Run {
  steps: number;
  prog: Prog;
  depth: number;
  /** The deepest call depth reached (for the memo's depth accounting). */
  peak: number;
  /** Results of f by arguments, with the steps and call height each took (see callMemo). */
  memo: Map<string, { value: unknown; steps: number; height: number }> | undefined;
}

const STEP_LIMIT = 200_000;
const MAX_DEPTH = 200;

function tick(run: Run): void {
  if (++run.steps > STEP_LIMIT) throw new EvalError('step limit');
}

function evalExpr(e: Expr, env: Env, run: Run): unknown {
  tick(run);
  switch (e.k) {
    case 'lit':
      return typeof e.v === 'object' && e.v !== null ? cloneJson(e.v) : e.v;
    case 'var': {
      const x = lookup(env, e.n);
      if (x === UNBOUND) throw new EvalError(`unbound ${e.n}`);
      return x;
    }
    case 'bin': {
      if (e.op === '&&') return (evalExpr(e.a, env, run) as boolean) && evalExpr(e.b, env, run);
      if (e.op === '||') return (evalExpr(e.a, env, run) as boolean) || evalExpr(e.b, env, run);
      const a = evalExpr(e.a, env, run) as number;
      const b = evalExpr(e.b, env, run) as number;
      switch (e.op) {
        case '+': return a + b;
        case '-': return a - b;
        case '*': return a * b;
        case '/': return a / b;
        case '%': return a % b;
        case '<': return a < b;
        case '<=': return a <= b;
        case '>': return a > b;
        case '>=': return a >= b;
        case '===': return a === b;
        case '!==': return a !== b;
        case '&': return a & b;
        case '|': return a | b;
        case '^': return a ^ b;
        case '<<': return a << b;
        case '>>': return a >> b;
      }
      throw new EvalError(`op ${e.op}`);
    }
    case 'un': {
      const a = evalExpr(e.a, env, run);
      return e.op === '!' ? !a : e.op === '-' ? -(a as number) : ~(a as number);
    }
    case 'cond':
      return evalExpr(e.c, env, run) ? evalExpr(e.t, env, run) : evalExpr(e.e, env, run);
    case 'call': {
      const args: unknown[] = [];
      for (const a of e.args) {
        if (a.k === 'spread') args.push(...(evalExpr(a.e, env, run) as unknown[]));
        else args.push(evalExpr(a, env, run));
      }
      if (e.f === 'f') return run.memo ? callMemo(run, args) : callProgram(run, args);
      const g = GLOBALS[e.f];
      if (g) return (g as (...xs: unknown[]) => unknown)(...args);
      const local = lookup(env, e.f);
      if (typeof local === 'function') return (local as (...xs: unknown[]) => unknown)(...args);
      throw new EvalError(`unknown function ${e.f}`);
    }
    case 'apply': {
      const g = evalExpr(e.f, env, run);
      if (typeof g !== 'function') throw new EvalError('apply of a non-function');
      return (g as (...xs: unknown[]) => unknown)(...evalAll(e.args, env, run));
    }
    case 'meth': {
      const o = evalExpr(e.o, env, run) as Record<string, (...xs: unknown[]) => unknown>;
      if (!METHODS.has(e.m) || o === null || o === undefined || typeof o[e.m] !== 'function') {
        throw new EvalError(`method ${e.m}`);
      }
      return o[e.m]!(...evalAll(e.args, env, run));
    }
    case 'prop': {
      const o = evalExpr(e.o, env, run) as Record<string, unknown>;
      if (o === null || o === undefined) throw new EvalError('property of null');
      return o[e.p];
    }
    case 'idx': {
      const o = evalExpr(e.o, env, run) as Record<string, unknown>;
      const i = evalExpr(e.i, env, run) as string;
      if (o === null || o === undefined) throw new EvalError('index of null');
      return Object.prototype.hasOwnProperty.call(o, i) ? o[i] : undefined;
    }
    case 'arr':
      return evalAll(e.items, env, run);
    case 'obj': {
      const out: Record<string, unknown> = {};
      for (const [key, x] of e.fields) {
        const val = evalExpr(x, env, run);
        if (key === null) Object.assign(out, val);
        else out[key] = val;
      }
      return out;
    }
    case 'fn':
      return (...args: unknown[]) => {
        const inner = new Env(env);
        for (let i = 0; i < e.ps.length; i++) define(inner, e.ps[i]!, args[i]);
        return evalExpr(e.body, inner, run);
      };
    case 'spread':
      throw new EvalError('spread outside a call');
  }
}

const RETURN = Symbol('return');
type Flow = { [RETURN]: true; value: unknown } | undefined;

function execStmts(body: Stmt[], env: Env, run: Run): Flow {
  for (const s of body) {
    tick(run);
    switch (s.k) {
      case 'let':
        define(env, s.n, evalExpr(s.e, env, run));
        break;
      case 'set': {
        const [scope, i] = findScope(env, s.n);
        if (s.op === '++') scope.vals[i] = (scope.vals[i] as number) + 1;
        else {
          const x = evalExpr(s.e!, env, run) as number;
          const cur = scope.vals[i] as number;
          scope.vals[i] = s.op === '=' ? x : s.op === '+=' ? cur + x : s.op === '-=' ? cur - x : cur * x;
        }
        break;
      }
      case 'seti': {
        const o = evalExpr(v(s.o), env, run) as Record<string, unknown>;
        o[evalExpr(s.i, env, run) as string] = evalExpr(s.e, env, run);
        break;
      }
      case 'for': {
        // The loop variable is the only name in `inner` (a body that declares gets its own scope).
        const inner = new Env(env);
        define(inner, s.v, evalExpr(s.from, env, run));
        while ((inner.vals[0] as number) < (evalExpr(s.to, inner, run) as number)) {
          const r = execStmts(s.body, block(s.body, inner), run);
          if (r) return r;
          inner.vals[0] = (inner.vals[0] as number) + 1;
        }
        break;
      }
      case 'forof': {
        const xs = evalExpr(s.of, env, run) as Iterable<unknown>;
        for (const x of xs) {
          const inner = new Env(env);
          define(inner, s.v, x);
          const r = execStmts(s.body, inner, run);
          if (r) return r;
        }
        break;
      }
      case 'while':
        while (evalExpr(s.c, env, run)) {
          const r = execStmts(s.body, block(s.body, env), run);
          if (r) return r;
        }
        break;
      case 'if': {
        const r = evalExpr(s.c, env, run) ? execStmts(s.t, block(s.t, env), run) : s.e ? execStmts(s.e, block(s.e, env), run) : undefined;
        if (r) return r;
        break;
      }
      case 'ret':
        return { [RETURN]: true, value: evalExpr(s.e, env, run) };
    }
  }
  return undefined;
}

/** The scope that holds n, and n's index there. */
function findScope(env: Env, n: string): [Env, number] {
  for (let s: Env | null = env; s; s = s.up) {
    const i = s.names.indexOf(n);
    if (i >= 0) return [s, i];
  }
  throw new EvalError(`assignment to unbound ${n}`);
}

function callProgram(run: Run, args: unknown[]): unknown {
  if (++run.depth > MAX_DEPTH) throw new EvalError('recursion depth');
  if (run.depth > run.peak) run.peak = run.depth;
  const env = new Env(null);
  const ps = run.prog.ps;
  for (let i = 0; i < ps.length; i++) define(env, ps[i]!.n, args[i]);
  const r = execStmts(run.prog.body, env, run);
  run.depth--;
  return r ? r.value : undefined;
}

/**
 * A call of f through the memo (pure programs with two or more recursive calls, where naive
 * evaluation is exponential). A hit charges the steps and depth the call took when it ran, so the
 * step and depth limits fail exactly where plain evaluation would: the screen's verdicts are unchanged.
 */
function callMemo(run: Run, args: unknown[]): unknown {
  const key = memoKey(args);
  if (key === undefined) return callProgram(run, args);
  const hit = run.memo!.get(key);
  if (hit) {
    run.steps += hit.steps;
    if (run.steps > STEP_LIMIT) throw new EvalError('step limit');
    if (run.depth + hit.height > MAX_DEPTH) throw new EvalError('recursion depth');
    if (run.depth + hit.height > run.peak) run.peak = run.depth + hit.height;
    return hit.value;
  }
  const steps = run.steps;
  const peak = run.peak;
  run.peak = run.depth;
  const value = callProgram(run, args);
  run.memo!.set(key, { value, steps: run.steps - steps, height: run.peak - run.depth });
  if (peak > run.peak) run.peak = peak;
  return value;
}

/** A memo key for primitive or flat-array arguments (undefined: do not memoise this call). */
function memoKey(args: unknown[]): string | undefined {
  let key = '';
  for (const a of args) {
    if (typeof a === 'number') {
      if (Object.is(a, -0)) return undefined;
      key += `n${a},`;
    } else if (typeof a === 'string') key += `s${JSON.stringify(a)},`;
    else if (typeof a === 'boolean') key += `b${a},`;
    else if (Array.isArray(a) && a.every((x) => (typeof x === 'number' && Number.isFinite(x) && !Object.is(x, -0)) || typeof x === 'string')) {
      key += `a${JSON.stringify(a)},`;
    } else return undefined;
  }
  return key;
}

/** A child scope for a block that declares variables; one that declares none shares its parent's. */
function block(body: Stmt[], env: Env): Env {
  for (const s of body) if (s.k === 'let') return new Env(env);
  return env;
}

function evalAll(xs: Expr[], env: Env, run: Run): unknown[] {
  const out: unknown[] = new Array(xs.length);
  for (let i = 0; i < xs.length; i++) out[i] = evalExpr(xs[i]!, env, run);
  return out;
}

/** A deep copy of a JSON-like value (structuredClone is about ten times slower on small inputs). */
function cloneJson<T>(x: T): T {
  if (typeof x !== 'object' || x === null) return x;
  if (Array.isArray(x)) return x.map(cloneJson) as T;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(x)) {
    const y = cloneJson((x as Record<string, unknown>)[k]);
    // (an own "__proto__" key, as JSON.parse makes, stays a key rather than setting the prototype)
    if (k === '__proto__') Object.defineProperty(out, k, { value: y, enumerable: true, writable: true, configurable: true });
    else out[k] = y;
  }
  return out as T;
}

const SELF = new Set(['f']);
const INDEX_SET = new Set(['seti']);
const IN_PLACE = new Set(['sort', 'reverse']);

/**
 * Whether calls of f may be memoised: f calls itself at two or more sites (so plain evaluation
 * repeats work) and nothing mutates a value in place (no index assignment, sort or reverse), so a
 * call's result depends on its arguments alone and a shared result is never changed afterwards.
 * (Counted over the whole AST, literals included: a literal can only make the answer more cautious
 * or, for the call count, memoise a pure program that gains little from it.)
 */
function memoisable(p: Prog): boolean {
  return countKeyed(p.body, 'f', SELF) >= 2 && countKeyed(p.body, 'k', INDEX_SET) === 0 && countKeyed(p.body, 'm', IN_PLACE) === 0;
}

/** Bounds every value a generated program may take as input or produce as output. */
export interface ValueBounds {
  maxAbs: number;
  maxLen: number;
}
export const DEFAULT_BOUNDS: ValueBounds = { maxAbs: 1_000_000, maxLen: 40 };

/** True when `x` is JSON-like, integer-only, free of -0, printable ASCII, and within bounds. */
export function isTidy(x: unknown, b: ValueBounds = DEFAULT_BOUNDS, depth = 0): x is Json {
  if (depth > 4) return false;
  if (x === null || typeof x === 'boolean') return true;
  if (typeof x === 'number') return Number.isSafeInteger(x) && !Object.is(x, -0) && Math.abs(x) <= b.maxAbs;
  if (typeof x === 'string') return x.length <= b.maxLen && /^[\x20-\x7e]*$/.test(x);
  if (Array.isArray(x)) return x.length <= b.maxLen && x.every((y) => isTidy(y, b, depth + 1));
  if (typeof x === 'object' && Object.getPrototypeOf(x) === Object.prototype) {
    const vals = Object.values(x as object);
    return vals.length <= 16 && vals.every((y) => isTidy(y, b, depth + 1));
  }
  return false;
}

/** memoisable(p) per program (a candidate is evaluated on every input; ASTs are never changed in place). */
const MEMOISABLE = new WeakMap<Prog, boolean>();

/** Runs the program on one argument list; throws EvalError on anything untidy. */
export function evaluate(p: Prog, args: Json[], bounds: ValueBounds = DEFAULT_BOUNDS): Json {
  let memo = MEMOISABLE.get(p);
  if (memo === undefined) MEMOISABLE.set(p, (memo = memoisable(p)));
  const run: Run = { steps: 0, prog: p, depth: 0, peak: 0, memo: memo ? new Map() : undefined };
  const out = callProgram(run, cloneJson(args));
  if (!isTidy(out, bounds)) throw new EvalError('untidy result');
  return out;
}

// ---------------------------------------------------------------------------------------------
// Typed random generation
// ---------------------------------------------------------------------------------------------

/** One rule of the grammar: builds an expression of type `out` from sub-expressions of types `args`. */
export interface Production {
  skill: string;
  out: Ty;
  args: Ty[];
  build: (args: Expr[], rng: Rng) => Expr;
  /** Relative weight (default 1). */
  w?: number;
}

export interface GenCtx {
  rng: Rng;
  prods: Production[];
  /** Variables in scope, by type. */
  scope: Param[];
  /** Integer literal range for holes of type int. */
  ints: [number, number];
  /** Words used for string literals. */
  words: readonly string[];
  /** Probability that an inner hole becomes a leaf even when depth remains. */
  leaf: number;
  /** Skills exercised so far (filled by gen; an attempt gen drops is rolled back in place). */
  skills: Set<string>;
  /** Counter for fresh lambda parameter names. */
  fresh: number;
}

export function newCtx(rng: Rng, prods: Production[], scope: Param[], opts: Partial<Pick<GenCtx, 'ints' | 'words' | 'leaf'>> = {}): GenCtx {
  return {
    rng,
    prods,
    scope: [...scope],
    ints: opts.ints ?? [0, 9],
    words: opts.words ?? WORDS,
    leaf: opts.leaf ?? 0.3,
    skills: new Set(),
    fresh: 0,
  };
}

export const WORDS = ['a', 'b', 'ab', 'ba', 'x', 'yo', 'cat', 'dog', 'sun', 'ox', 'abc', 'hi', 'zz', 'key', 'map'] as const;
const LAMBDA_NAMES = ['x', 'y', 'z', 'u', 'w', 'm'];

function pickWeighted<T extends { w?: number }>(rng: Rng, items: T[]): T {
  let total = 0;
  for (const it of items) total += it.w ?? 1;
  let r = rng.next() * total;
  for (const it of items) {
    r -= it.w ?? 1;
    if (r < 0) return it;
  }
  return items[items.length - 1]!;
}

/** A leaf of type `ty`: a variable in scope (preferred) or a literal. */
export function leaf(ctx: GenCtx, ty: Ty): Expr {
  const { rng } = ctx;
  switch (ty) {
    case 'k':
      return lit(rng.int(2, 9));
    case 'sh':
      return lit(rng.int(1, 3));
    case 'n3':
      return lit(rng.int(1, 3));
    case 'ch':
      return lit(rng.pick(['a', 'b', 'o', 'x', 'z']));
  }
  if (ty.includes('=>')) return lambda(ctx, ty, 0);
  const vars = ctx.scope.filter((p) => p.ty === ty);
  if (vars.length > 0 && rng.bool(0.75)) return asLeaf(rng.pick(vars));
  switch (ty) {
    case 'int':
      return lit(rng.int(ctx.ints[0], ctx.ints[1]));
    case 'bool':
      return vars.length > 0 ? asLeaf(rng.pick(vars)) : lit(rng.bool());
    case 'str':
      return lit(rng.pick(ctx.words));
    case 'int[]':
      return { k: 'arr', items: Array.from({ length: rng.int(0, 3) }, () => lit(rng.int(0, 9))) };
    case 'str[]':
      return { k: 'arr', items: Array.from({ length: rng.int(0, 2) }, () => lit(rng.pick(ctx.words))) };
    default:
      if (vars.length > 0) return asLeaf(rng.pick(vars));
      throw new Error(`grammar: no leaf of type ${ty}`);
  }
}

const asLeaf = (p: Param): Expr => p.e ?? v(p.n);

function lambda(ctx: GenCtx, ty: Ty, depth: number): Expr {
  const [ins, out] = ty.split('=>') as [string, string];
  const ps = ins.split(',').map((pt) => ({ n: LAMBDA_NAMES[ctx.fresh++ % LAMBDA_NAMES.length]!, ty: pt }));
  const saved = ctx.scope;
  // Inside a lambda the parameters are the most useful leaves: put them in front, shadowing.
  ctx.scope = [...ps, ...saved.filter((s) => !ps.some((p) => p.n === s.n))];
  const body = gen(ctx, out, Math.max(depth, 1), true, ps.map((p) => p.n));
  ctx.scope = saved;
  return fn(ps.map((p) => p.n), body);
}

function mentions(e: Expr, names: string[]): boolean {
  switch (e.k) {
    case 'var':
      return names.includes(e.n);
    case 'lit':
      return false;
    case 'bin':
      return mentions(e.a, names) || mentions(e.b, names);
    case 'un':
      return mentions(e.a, names);
    case 'cond':
      return mentions(e.c, names) || mentions(e.t, names) || mentions(e.e, names);
    case 'call':
      return e.args.some((a) => mentions(a, names));
    case 'apply':
      return mentions(e.f, names) || e.args.some((a) => mentions(a, names));
    case 'meth':
      return mentions(e.o, names) || e.args.some((a) => mentions(a, names));
    case 'prop':
      return mentions(e.o, names);
    case 'idx':
      return mentions(e.o, names) || mentions(e.i, names);
    case 'arr':
      return e.items.some((a) => mentions(a, names));
    case 'obj':
      return e.fields.some(([, a]) => mentions(a, names));
    case 'fn':
      return mentions(e.body, names);
    case 'spread':
      return mentions(e.e, names);
  }
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
  const vars = ctx.scope.filter((p) => p.ty === ty && use!.includes(p.n));
  if (vars.length > 0) return asLeaf(ctx.rng.pick(vars));
  return gen1(ctx, ty, depth, force);
}

function gen1(ctx: GenCtx, ty: Ty, depth: number, force: boolean): Expr {
  if (ty.includes('=>')) return lambda(ctx, ty, depth - 1);
  if (ty === 'bool' && !ctx.scope.some((p) => p.ty === 'bool')) {
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
  if (options.length === 0 || (!force && ctx.rng.bool(ctx.leaf))) return leaf(ctx, ty);
  const p = pickWeighted(ctx.rng, options);
  const names = ctx.scope.map((s) => s.n);
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

/**
 * Whether JSON.stringify(a) === JSON.stringify(b) for plain data such as ASTs, without printing
 * either: operands are compared at every node gen builds, and most differ within a node or two.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return JSON.stringify(a) === JSON.stringify(b);
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(inArray(a[i]), inArray(b[i]))) return false;
    return true;
  }
  const ka = printedKeys(a as Record<string, unknown>);
  const kb = printedKeys(b as Record<string, unknown>);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i]!;
    if (k !== kb[i] || !sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}

/** What JSON.stringify prints for an array element: undefined, functions and symbols print as null. */
const inArray = (x: unknown): unknown => (x === undefined || typeof x === 'function' || typeof x === 'symbol' ? null : x);

/** The keys JSON.stringify prints, in its order (it skips undefined, functions and symbols). */
function printedKeys(o: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const k of Object.keys(o)) {
    const x = o[k];
    if (x !== undefined && typeof x !== 'function' && typeof x !== 'symbol') out.push(k);
  }
  return out;
}

/** f(f(x)) for an idempotent or self-cancelling f: sort of a sort, !!p, Math.abs(Math.abs(x)), … */
function repeated(outer: Expr, inner: Expr | undefined): boolean {
  if (!inner) return false;
  if (outer.k === 'meth' && inner.k === 'meth') return outer.m === inner.m && ['sort', 'reverse', 'toUpperCase'].includes(outer.m);
  if (outer.k === 'call' && inner.k === 'call') return outer.f === inner.f && outer.f === 'Math.abs';
  if (outer.k === 'un' && inner.k === 'un') return outer.op === inner.op;
  return false;
}

// ---------------------------------------------------------------------------------------------
// The production library, grouped by the family that owns each skill
// ---------------------------------------------------------------------------------------------

const b2 = (op: BinOp) => (xs: Expr[]) => bin(op, xs[0]!, xs[1]!);

export const P = {
  // arith
  add: { skill: 'arith.add', out: 'int', args: ['int', 'int'], build: b2('+') },
  sub: { skill: 'arith.sub', out: 'int', args: ['int', 'int'], build: b2('-') },
  mul: { skill: 'arith.mul', out: 'int', args: ['int', 'int'], build: b2('*') },
  div: { skill: 'arith.div', out: 'int', args: ['int', 'k'], build: (xs: Expr[]) => call('Math.floor', bin('/', xs[0]!, xs[1]!)) },
  mod: { skill: 'arith.mod', out: 'int', args: ['int', 'k'], build: b2('%') },
  abs: { skill: 'arith.abs', out: 'int', args: ['int'], build: (xs: Expr[]) => call('Math.abs', xs[0]!) },
  neg: { skill: 'arith.neg', out: 'int', args: ['int'], build: (xs: Expr[]) => un('-', xs[0]!), w: 0.5 },
  min: { skill: 'arith.minmax', out: 'int', args: ['int', 'int'], build: (xs: Expr[]) => call('Math.min', xs[0]!, xs[1]!), w: 0.5 },
  max: { skill: 'arith.minmax', out: 'int', args: ['int', 'int'], build: (xs: Expr[]) => call('Math.max', xs[0]!, xs[1]!), w: 0.5 },
  // logic
  and: { skill: 'logic.and', out: 'bool', args: ['bool', 'bool'], build: b2('&&') },
  or: { skill: 'logic.or', out: 'bool', args: ['bool', 'bool'], build: b2('||') },
  not: { skill: 'logic.not', out: 'bool', args: ['bool'], build: (xs: Expr[]) => un('!', xs[0]!), w: 0.7 },
  xor: { skill: 'logic.xor', out: 'bool', args: ['bool', 'bool'], build: b2('!==') },
  beq: { skill: 'logic.xor', out: 'bool', args: ['bool', 'bool'], build: b2('==='), w: 0.5 },
  lt: { skill: 'logic.compare', out: 'bool', args: ['int', 'int'], build: b2('<') },
  le: { skill: 'logic.compare', out: 'bool', args: ['int', 'int'], build: b2('<='), w: 0.5 },
  gt: { skill: 'logic.compare', out: 'bool', args: ['int', 'int'], build: b2('>') },
  ge: { skill: 'logic.compare', out: 'bool', args: ['int', 'int'], build: b2('>='), w: 0.5 },
  eq: { skill: 'logic.compare', out: 'bool', args: ['int', 'int'], build: b2('===') },
  ne: { skill: 'logic.compare', out: 'bool', args: ['int', 'int'], build: b2('!=='), w: 0.5 },
  // cond
  ifInt: { skill: 'cond.ternary', out: 'int', args: ['bool', 'int', 'int'], build: (xs: Expr[]) => cond(xs[0]!, xs[1]!, xs[2]!) },
  ifStr: { skill: 'cond.ternary', out: 'str', args: ['bool', 'str', 'str'], build: (xs: Expr[]) => cond(xs[0]!, xs[1]!, xs[2]!) },
  ifBool: { skill: 'cond.ternary', out: 'bool', args: ['bool', 'bool', 'bool'], build: (xs: Expr[]) => cond(xs[0]!, xs[1]!, xs[2]!), w: 0.3 },
  ifArr: { skill: 'cond.ternary', out: 'int[]', args: ['bool', 'int[]', 'int[]'], build: (xs: Expr[]) => cond(xs[0]!, xs[1]!, xs[2]!), w: 0.5 },
  // str
  concat: { skill: 'str.concat', out: 'str', args: ['str', 'str'], build: b2('+') },
  slen: { skill: 'str.length', out: 'int', args: ['str'], build: (xs: Expr[]) => prop(xs[0]!, 'length') },
  upper: { skill: 'str.case', out: 'str', args: ['str'], build: (xs: Expr[]) => meth(xs[0]!, 'toUpperCase') },
  srev: { skill: 'str.reverse', out: 'str', args: ['str'], build: (xs: Expr[]) => meth(meth(meth(xs[0]!, 'split', lit('')), 'reverse'), 'join', lit('')) },
  sliceFrom: { skill: 'str.slice', out: 'str', args: ['str', 'n3'], build: (xs: Expr[]) => meth(xs[0]!, 'slice', xs[1]!) },
  sliceTo: { skill: 'str.slice', out: 'str', args: ['str', 'n3'], build: (xs: Expr[]) => meth(xs[0]!, 'slice', lit(0), xs[1]!) },
  repeat: { skill: 'str.repeat', out: 'str', args: ['str', 'n3'], build: (xs: Expr[]) => meth(xs[0]!, 'repeat', xs[1]!), w: 0.5 },
  charAt: { skill: 'str.index', out: 'str', args: ['str', 'n3'], build: (xs: Expr[]) => meth(xs[0]!, 'charAt', xs[1]!) },
  includes: { skill: 'str.search', out: 'bool', args: ['str', 'ch'], build: (xs: Expr[]) => meth(xs[0]!, 'includes', xs[1]!) },
  indexOf: { skill: 'str.search', out: 'int', args: ['str', 'ch'], build: (xs: Expr[]) => meth(xs[0]!, 'indexOf', xs[1]!) },
  replace: { skill: 'str.replace', out: 'str', args: ['str', 'ch', 'ch'], build: (xs: Expr[]) => meth(xs[0]!, 'replaceAll', xs[1]!, xs[2]!), w: 0.5 },
  strOfInt: { skill: 'str.convert', out: 'str', args: ['int'], build: (xs: Expr[]) => call('String', xs[0]!), w: 0.5 },
  // arrays
  alen: { skill: 'array.length', out: 'int', args: ['int[]'], build: (xs: Expr[]) => prop(xs[0]!, 'length') },
  map: { skill: 'array.map', out: 'int[]', args: ['int[]', 'int=>int'], build: (xs: Expr[]) => meth(xs[0]!, 'map', xs[1]!) },
  filter: { skill: 'array.filter', out: 'int[]', args: ['int[]', 'int=>bool'], build: (xs: Expr[]) => meth(xs[0]!, 'filter', xs[1]!) },
  sum: {
    skill: 'array.reduce', out: 'int', args: ['int[]', 'int,int=>int'],
    build: (xs: Expr[], rng: Rng) => meth(xs[0]!, 'reduce', xs[1]!, lit(rng.int(0, 2))),
  },
  some: { skill: 'array.some', out: 'bool', args: ['int[]', 'int=>bool'], build: (xs: Expr[]) => meth(xs[0]!, 'some', xs[1]!), w: 0.5 },
  every: { skill: 'array.some', out: 'bool', args: ['int[]', 'int=>bool'], build: (xs: Expr[]) => meth(xs[0]!, 'every', xs[1]!), w: 0.5 },
  aincl: { skill: 'array.includes', out: 'bool', args: ['int[]', 'int'], build: (xs: Expr[]) => meth(xs[0]!, 'includes', xs[1]!), w: 0.5 },
  aslice: { skill: 'array.slice', out: 'int[]', args: ['int[]', 'n3'], build: (xs: Expr[]) => meth(xs[0]!, 'slice', xs[1]!), w: 0.5 },
  aconcat: { skill: 'array.slice', out: 'int[]', args: ['int[]', 'int[]'], build: (xs: Expr[]) => meth(xs[0]!, 'concat', xs[1]!), w: 0.5 },
  // sorting and searching
  sortAsc: { skill: 'sort.sort', out: 'int[]', args: ['int[]'], build: (xs: Expr[]) => meth(meth(xs[0]!, 'slice'), 'sort', fn(['p', 'q'], bin('-', v('p'), v('q')))) },
  sortDesc: { skill: 'sort.sort', out: 'int[]', args: ['int[]'], build: (xs: Expr[]) => meth(meth(xs[0]!, 'slice'), 'sort', fn(['p', 'q'], bin('-', v('q'), v('p')))) },
  arev: { skill: 'sort.reverse', out: 'int[]', args: ['int[]'], build: (xs: Expr[]) => meth(meth(xs[0]!, 'slice'), 'reverse') },
  aindexOf: { skill: 'sort.search', out: 'int', args: ['int[]', 'int'], build: (xs: Expr[]) => meth(xs[0]!, 'indexOf', xs[1]!) },
  findIndex: { skill: 'sort.search', out: 'int', args: ['int[]', 'int=>bool'], build: (xs: Expr[]) => meth(xs[0]!, 'findIndex', xs[1]!) },
  amax: { skill: 'sort.extremum', out: 'int', args: ['int[]'], build: (xs: Expr[]) => call('Math.max', lit(0), { k: 'spread', e: xs[0]! }) },
  amin: { skill: 'sort.extremum', out: 'int', args: ['int[]'], build: (xs: Expr[]) => call('Math.min', lit(99), { k: 'spread', e: xs[0]! }) },
  // bits
  band: { skill: 'bits.and', out: 'int', args: ['int', 'int'], build: b2('&') },
  bor: { skill: 'bits.or', out: 'int', args: ['int', 'int'], build: b2('|') },
  bxor: { skill: 'bits.xor', out: 'int', args: ['int', 'int'], build: b2('^') },
  shl: { skill: 'bits.shift', out: 'int', args: ['int', 'sh'], build: b2('<<') },
  shr: { skill: 'bits.shift', out: 'int', args: ['int', 'sh'], build: b2('>>') },
  bnot: { skill: 'bits.not', out: 'int', args: ['int'], build: (xs: Expr[]) => un('~', xs[0]!), w: 0.4 },
  // records
  getX: { skill: 'record.get', out: 'int', args: ['rec'], build: (xs: Expr[]) => prop(xs[0]!, 'x') },
  getY: { skill: 'record.get', out: 'int', args: ['rec'], build: (xs: Expr[]) => prop(xs[0]!, 'y') },
  getName: { skill: 'record.get', out: 'str', args: ['rec'], build: (xs: Expr[]) => prop(xs[0]!, 'name') },
  getOk: { skill: 'record.get', out: 'bool', args: ['rec'], build: (xs: Expr[]) => prop(xs[0]!, 'ok') },
  // number theory
  even: { skill: 'numtheory.parity', out: 'bool', args: ['int'], build: (xs: Expr[]) => bin('===', bin('%', xs[0]!, lit(2)), lit(0)) },
  divides: { skill: 'numtheory.divisibility', out: 'bool', args: ['int', 'k'], build: (xs: Expr[]) => bin('===', bin('%', xs[0]!, xs[1]!), lit(0)) },
  ndigits: { skill: 'numtheory.digits', out: 'int', args: ['int'], build: (xs: Expr[]) => prop(call('String', call('Math.abs', xs[0]!)), 'length'), w: 0.5 },
  lastDigit: { skill: 'numtheory.digits', out: 'int', args: ['int'], build: (xs: Expr[]) => bin('%', call('Math.abs', xs[0]!), lit(10)), w: 0.5 },
} satisfies Record<string, Production>;

export type ProdName = keyof typeof P;
export const prods = (...names: ProdName[]): Production[] => names.map((n) => P[n]);

// The walkers below are top-level functions rather than arrows inside their callers: tsx
// (esbuild's keepNames) calls __name on every arrow bound to a name each time it is created, which
// costs more than these small walks themselves, once per candidate.

/** Counts AST nodes of a program: the structural complexity measure. */
export function size(p: Prog): number {
  return sizeStmts(p.body);
}

function sizeAll(xs: Expr[]): number {
  let n = 0;
  for (const x of xs) n += sizeExpr(x);
  return n;
}

function sizeExpr(x: Expr): number {
  switch (x.k) {
    case 'lit':
    case 'var':
      return 1;
    case 'bin':
      return 1 + sizeExpr(x.a) + sizeExpr(x.b);
    case 'un':
      return 1 + sizeExpr(x.a);
    case 'spread':
      return 1 + sizeExpr(x.e);
    case 'cond':
      return 1 + sizeExpr(x.c) + sizeExpr(x.t) + sizeExpr(x.e);
    case 'call':
      return 1 + sizeAll(x.args);
    case 'apply':
      return 1 + sizeExpr(x.f) + sizeAll(x.args);
    case 'meth':
      return 1 + sizeExpr(x.o) + sizeAll(x.args);
    case 'prop':
      return 1 + sizeExpr(x.o);
    case 'idx':
      return 1 + sizeExpr(x.o) + sizeExpr(x.i);
    case 'arr':
      return 1 + sizeAll(x.items);
    case 'obj': {
      let n = 1;
      for (const [, a] of x.fields) n += sizeExpr(a);
      return n;
    }
    case 'fn':
      return 1 + sizeExpr(x.body);
  }
}

function sizeStmts(xs: Stmt[]): number {
  let acc = 0;
  for (const st of xs) {
    switch (st.k) {
      case 'let':
        acc += 1 + sizeExpr(st.e);
        break;
      case 'set':
        acc += 1 + (st.e ? sizeExpr(st.e) : 0);
        break;
      case 'seti':
        acc += 1 + sizeExpr(st.i) + sizeExpr(st.e);
        break;
      case 'for':
        acc += 1 + sizeExpr(st.from) + sizeExpr(st.to) + sizeStmts(st.body);
        break;
      case 'forof':
        acc += 1 + sizeExpr(st.of) + sizeStmts(st.body);
        break;
      case 'while':
        acc += 1 + sizeExpr(st.c) + sizeStmts(st.body);
        break;
      case 'if':
        acc += 1 + sizeExpr(st.c) + sizeStmts(st.t) + (st.e ? sizeStmts(st.e) : 0);
        break;
      case 'ret':
        acc += sizeExpr(st.e);
        break;
    }
  }
  return acc;
}

/** Names of variables (and called functions) a program mentions anywhere. */
export function usedNames(p: Prog): Set<string> {
  const out = new Set<string>();
  usedStmts(p.body, out);
  return out;
}

function usedExpr(x: Expr, out: Set<string>): void {
  switch (x.k) {
    case 'var':
      out.add(x.n);
      return;
    case 'lit':
      return;
    case 'bin':
      usedExpr(x.a, out);
      usedExpr(x.b, out);
      return;
    case 'un':
      usedExpr(x.a, out);
      return;
    case 'spread':
      usedExpr(x.e, out);
      return;
    case 'cond':
      usedExpr(x.c, out);
      usedExpr(x.t, out);
      usedExpr(x.e, out);
      return;
    case 'call':
      out.add(x.f);
      for (const a of x.args) usedExpr(a, out);
      return;
    case 'apply':
      usedExpr(x.f, out);
      for (const a of x.args) usedExpr(a, out);
      return;
    case 'meth':
      usedExpr(x.o, out);
      for (const a of x.args) usedExpr(a, out);
      return;
    case 'prop':
      usedExpr(x.o, out);
      return;
    case 'idx':
      usedExpr(x.o, out);
      usedExpr(x.i, out);
      return;
    case 'arr':
      for (const a of x.items) usedExpr(a, out);
      return;
    case 'obj':
      for (const [, a] of x.fields) usedExpr(a, out);
      return;
    case 'fn':
      usedExpr(x.body, out);
      return;
  }
}

function usedStmts(xs: Stmt[], out: Set<string>): void {
  for (const st of xs) {
    switch (st.k) {
      case 'let':
        usedExpr(st.e, out);
        break;
      case 'set':
        out.add(st.n);
        if (st.e) usedExpr(st.e, out);
        break;
      case 'seti':
        out.add(st.o);
        usedExpr(st.i, out);
        usedExpr(st.e, out);
        break;
      case 'for':
        usedExpr(st.from, out);
        usedExpr(st.to, out);
        usedStmts(st.body, out);
        break;
      case 'forof':
        usedExpr(st.of, out);
        usedStmts(st.body, out);
        break;
      case 'while':
        usedExpr(st.c, out);
        usedStmts(st.body, out);
        break;
      case 'if':
        usedExpr(st.c, out);
        usedStmts(st.t, out);
        if (st.e) usedStmts(st.e, out);
        break;
      case 'ret':
        usedExpr(st.e, out);
        break;
    }
  }
}

/**
 * How many objects within `x` (an AST, walked as JSON.stringify would print it) have `key` set to one
 * of `values`: e.g. the method calls or boolean operators of a program, without printing it to count.
 */
export function countKeyed(x: unknown, key: string, values: ReadonlySet<string>): number {
  if (x === null || typeof x !== 'object') return 0;
  let n = 0;
  if (Array.isArray(x)) {
    for (const y of x) n += countKeyed(y, key, values);
    return n;
  }
  const o = x as Record<string, unknown>;
  const k = o[key];
  if (typeof k === 'string' && values.has(k)) n++;
  for (const f in o) n += countKeyed(o[f], key, values);
  return n;
}

/** Drops parameters the body never mentions (not for recursive programs, whose calls are positional). */
export function trimParams(p: Prog): Prog {
  const used = usedNames(p);
  if (used.has('f')) return p;
  const ps = p.ps.filter((q) => used.has(q.n));
  return ps.length === p.ps.length || ps.length === 0 ? p : { ...p, ps };
}
