// The reference interpreter: runs a program tree on JSON inputs, so that generators reject drafts
// whose values would leave the JSON-like, integer-only world before the sandbox ever sees them.
import type { Json } from '../../core/task.js';
import { countNodes, someNode, v, type Expr, type Node, type Prog, type Stmt } from './tree.js';
import { block, define, Env, findScope, lookup, UNBOUND } from './scope.js';
import { cloneJson, DEFAULT_BOUNDS, isTidy, type ValueBounds } from './values.js';
import { binaryOp, NO_OP } from '../operators.js';

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
  'map',
  'filter',
  'reduce',
  'some',
  'every',
  'findIndex',
  'indexOf',
  'includes',
  'slice',
  'concat',
  'reverse',
  'sort',
  'join',
  'split',
  'toUpperCase',
  'toLowerCase',
  'repeat',
  'charAt',
  'replaceAll',
  'startsWith',
  'endsWith',
  'padStart',
  'trim',
  'at',
  'lastIndexOf',
  'charCodeAt',
  'toString',
]);

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
/** Calls of f deep: the recursion family's grown levels recur up to 840 deep (n < 10d + 10, d ≤ 83; docs/levels.md); the sandbox's stack held 1,100 such calls. */
const MAX_DEPTH = 1000;

function tick(run: Run): void {
  if (++run.steps > STEP_LIMIT) throw new EvalError('step limit');
}

function evalExpr(e: Expr, env: Env, run: Run): unknown {
  tick(run);
  switch (e.kind) {
    case 'lit':
      return typeof e.value === 'object' && e.value !== null ? cloneJson(e.value) : e.value;
    case 'var': {
      const x = lookup(env, e.name);
      if (x === UNBOUND) throw new EvalError(`unbound ${e.name}`);
      return x;
    }
    case 'bin': {
      if (e.op === '&&') return (evalExpr(e.left, env, run) as boolean) && evalExpr(e.right, env, run);
      if (e.op === '||') return (evalExpr(e.left, env, run) as boolean) || evalExpr(e.right, env, run);
      const r = binaryOp(e.op, evalExpr(e.left, env, run), evalExpr(e.right, env, run));
      if (r === NO_OP) throw new EvalError(`op ${e.op}`);
      return r;
    }
    case 'un': {
      const a = evalExpr(e.arg, env, run);
      return e.op === '!' ? !a : e.op === '-' ? -(a as number) : ~(a as number);
    }
    case 'cond':
      return evalExpr(e.test, env, run) ? evalExpr(e.consequent, env, run) : evalExpr(e.alternate, env, run);
    case 'call': {
      const args: unknown[] = [];
      for (const a of e.args) {
        if (a.kind === 'spread') args.push(...(evalExpr(a.arg, env, run) as unknown[]));
        else args.push(evalExpr(a, env, run));
      }
      if (e.callee === 'f') return run.memo ? callMemo(run, args) : callProgram(run, args);
      const g = GLOBALS[e.callee];
      if (g) return (g as (...xs: unknown[]) => unknown)(...args);
      const local = lookup(env, e.callee);
      if (typeof local === 'function') return (local as (...xs: unknown[]) => unknown)(...args);
      throw new EvalError(`unknown function ${e.callee}`);
    }
    case 'apply': {
      const g = evalExpr(e.callee, env, run);
      if (typeof g !== 'function') throw new EvalError('apply of a non-function');
      return (g as (...xs: unknown[]) => unknown)(...evalAll(e.args, env, run));
    }
    case 'meth': {
      const o = evalExpr(e.object, env, run) as Record<string, (...xs: unknown[]) => unknown>;
      if (!METHODS.has(e.method) || o === null || o === undefined || typeof o[e.method] !== 'function') {
        throw new EvalError(`method ${e.method}`);
      }
      return o[e.method]!(...evalAll(e.args, env, run));
    }
    case 'prop': {
      const o = evalExpr(e.object, env, run) as Record<string, unknown>;
      if (o === null || o === undefined) throw new EvalError('property of null');
      return o[e.name];
    }
    case 'idx': {
      const o = evalExpr(e.object, env, run) as Record<string, unknown>;
      const i = evalExpr(e.index, env, run) as string;
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
        for (let i = 0; i < e.params.length; i++) define(inner, e.params[i]!, args[i]);
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
    switch (s.kind) {
      case 'let':
        define(env, s.name, evalExpr(s.init, env, run));
        break;
      case 'set': {
        const found = findScope(env, s.name);
        if (!found) throw new EvalError(`assignment to unbound ${s.name}`);
        const [scope, i] = found;
        if (s.op === '++') scope.vals[i] = (scope.vals[i] as number) + 1;
        else {
          const x = evalExpr(s.value!, env, run) as number;
          const cur = scope.vals[i] as number;
          scope.vals[i] = s.op === '=' ? x : s.op === '+=' ? cur + x : s.op === '-=' ? cur - x : cur * x;
        }
        break;
      }
      case 'seti': {
        const o = evalExpr(v(s.name), env, run) as Record<string, unknown>;
        o[evalExpr(s.index, env, run) as string] = evalExpr(s.value, env, run);
        break;
      }
      case 'for': {
        // The loop variable is the only name in `inner` (a body that declares gets its own scope).
        const inner = new Env(env);
        define(inner, s.name, evalExpr(s.from, env, run));
        while ((inner.vals[0] as number) < (evalExpr(s.to, inner, run) as number)) {
          const r = execStmts(s.body, block(s.body, inner), run);
          if (r) return r;
          inner.vals[0] = (inner.vals[0] as number) + 1;
        }
        break;
      }
      case 'forof': {
        const xs = evalExpr(s.iterable, env, run) as Iterable<unknown>;
        for (const x of xs) {
          const inner = new Env(env);
          define(inner, s.name, x);
          const r = execStmts(s.body, inner, run);
          if (r) return r;
        }
        break;
      }
      case 'while':
        while (evalExpr(s.test, env, run)) {
          const r = execStmts(s.body, block(s.body, env), run);
          if (r) return r;
        }
        break;
      case 'if': {
        const r = evalExpr(s.test, env, run)
          ? execStmts(s.consequent, block(s.consequent, env), run)
          : s.alternate
            ? execStmts(s.alternate, block(s.alternate, env), run)
            : undefined;
        if (r) return r;
        break;
      }
      case 'ret':
        return { [RETURN]: true, value: evalExpr(s.value, env, run) };
    }
  }
  return undefined;
}

function callProgram(run: Run, args: unknown[]): unknown {
  if (++run.depth > MAX_DEPTH) throw new EvalError('recursion depth');
  if (run.depth > run.peak) run.peak = run.depth;
  const env = new Env(null);
  const ps = run.prog.params;
  for (let i = 0; i < ps.length; i++) define(env, ps[i]!.name, args[i]);
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
    else if (
      Array.isArray(a) &&
      a.every((x) => (typeof x === 'number' && Number.isFinite(x) && !Object.is(x, -0)) || typeof x === 'string')
    ) {
      key += `a${JSON.stringify(a)},`;
    } else return undefined;
  }
  return key;
}

function evalAll(xs: Expr[], env: Env, run: Run): unknown[] {
  const out: unknown[] = new Array(xs.length);
  for (let i = 0; i < xs.length; i++) out[i] = evalExpr(xs[i]!, env, run);
  return out;
}

/**
 * Whether calls of f may be memoised: f calls itself at two or more sites (so plain evaluation
 * repeats work) and nothing mutates a value in place (no index assignment, sort or reverse), so a
 * call's result depends on its arguments alone and a shared result is never changed afterwards.
 */
function memoisable(p: Prog): boolean {
  return countNodes(p.body, isSelfCall) >= 2 && !someNode(p.body, mutatesInPlace);
}

function isSelfCall(n: Node): boolean {
  return n.kind === 'call' && n.callee === 'f';
}

function mutatesInPlace(n: Node): boolean {
  return n.kind === 'seti' || (n.kind === 'meth' && (n.method === 'sort' || n.method === 'reverse'));
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
