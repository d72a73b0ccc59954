// The engine of one sandbox worker thread: runs a task's calls in fresh QuickJS contexts and
// returns one verdict per call. Plain JavaScript on purpose: worker threads do not inherit tsx's
// loader, so these files must load as-is under node, tsx and vitest alike. worker.mjs wraps the
// engine in a message loop. Its parts, one job each:
//   engine.mjs   a task's calls in contexts: arguments in, results out, retries and the end
//                of a job (this file)
//   context.mjs  one fresh context: made, its builtins taken first, f found, disposed after
//   steps.mjs    step budgets and deadlines, counted from QuickJS's interrupt counter, and the
//                wall-clock safety net
//   readout.mjs  strings and exceptions read out of a context, cut inside it; failure verdicts
//   runtime.mjs  the WASM module and the runtime under the contexts: loading, recycling, traps
//   repeat.mjs   a String.prototype.repeat the step counter can see
//   prelude.mjs  the source text a context gets (phase marker, result-rule replacer)
//   warmup.mjs   start-up: finding the counter, compiling, calibrating steps per ms
//   clock.mjs    the frozen clock that makes Date and Math.random deterministic
import { closeContext, findF, hold, openContext, takeBuiltins } from './context.mjs';
import { REPLACER, SUFFIX_CODES, markProgram } from './prelude.mjs';
import { clearTextCut, failure, lengthOf, success, takeTextCut, timeoutOut } from './readout.mjs';
import {
  allowCall,
  arm,
  beginJobSteps,
  endJobSteps,
  extendAllowance,
  interrupted,
  overBudget,
  overWall,
  restoreInterrupt,
  starved,
} from './steps.mjs';

export { INTRINSICS } from './context.mjs';

/** Runs one job in a fresh context; returns [0, json] or [reason, detail]. */
export function runJob(program, argsJson, limits) {
  return runTask(program, [argsJson], limits)[0];
}

/** The deadline (and wall-clock safety net) of the engine's own work: parsing arguments, compiling the replacer (ms; pool.ts's OWN_DEADLINE_MS). */
const OWN_MS = 1000;

/** Most characters of arguments (JSON) parsed with one JSON.parse inside the context. */
const BATCH_ARGS = 64 * 1024;

const isLimit = (reason) => reason === 'timeout' || reason === 'memory' || reason === 'stack';
/** Failures that end an answer's verification when its calls share one budget. */
const isHardLimit = (reason) => isLimit(reason) || reason === 'output-too-large';

/**
 * Runs the calls of one task (argsList: the JSON text of each call's argument list) in one fresh
 * context and returns one [0, json] or [reason, detail] per call.
 *
 * The host drives the context directly through the engine's API, with no wrapper script to parse
 * (parsing is most of what a context costs after creating it): right after the context is made,
 * before the program runs, it takes handles to the builtins it needs (JSON.parse, JSON.stringify,
 * Reflect.apply, Array.isArray, Object.getPrototypeOf, Object.prototype, String.prototype.slice), so
 * a program that replaces them changes only what it sees itself. Then it evaluates the program
 * once, parses the arguments of a batch of calls with one JSON.parse, and for each call arms its
 * own deadline, calls f, and serialises the result: numbers and booleans on the host, strings with
 * JSON.stringify, objects with JSON.stringify and the result-rule replacer (compiled once per
 * context, on the first object result). Text longer than a cap is cut (or refused) inside the
 * context, before it is copied out.
 *
 * Budget (optional): a number of steps, for all the job's work ('task': one answer's calls share
 * it) or for each call ('call': each call is one answer; the program's top level gets one too).
 * Steps are counted in every context the job uses; spending the budget is a 'timeout'.
 *
 * Without a budget: a limit failure (timeout, memory, stack) counts only for a call that ran first
 * in a fresh context, as it would have alone; a call that met a limit after others ran in its
 * context is retried in a fresh context. Other failures (runtime-error, non-serialisable, …) are
 * recorded and the next call continues in the same context.
 *
 * With a 'task' budget the first limit failure (budget or deadline, memory, stack, output size,
 * or an error whose message or thrown text exceeds TEXT_MAX in readout.mjs) ends the job: the
 * remaining calls are not run. A call that met memory or stack after others ran is retried in a
 * fresh context (on the same budget), and a deadline (not budget) timeout of a starved thread once
 * more with one more budget, but only while every earlier call succeeded (else the answer has
 * failed whatever the retry says). With a 'call' budget each call gets its own; a call that spends
 * it fails alone and the next continues in a fresh context.
 */
export function runTask(program, argsList, limits, budget, per) {
  const n = argsList.length;
  const results = new Array(n);
  const job = {
    budget: budget > 0 ? budget : 0,
    per: budget > 0 ? (per === 'call' ? 'call' : 'task') : null,
    extra: 0,
    failed: false,
  };
  beginJobSteps(job.per === 'task' ? job.budget : Infinity);
  clearTextCut();
  let k = 0;
  let retried = false;
  try {
    while (k < n) {
      const next = runInContext(program, argsList, k, limits, results, retried, job);
      // The same call again: it met a limit while the thread was starved; one more try, then it counts.
      retried = next === k;
      k = next;
    }
  } finally {
    endJobSteps();
  }
  return results;
}

/** One fresh context: settles calls from k on; returns the index of the first call it did not settle. */
function runInContext(program, argsList, k, limits, results, retried, job) {
  const { r, ctx } = openContext(limits);
  const c = {
    argsList,
    n: argsList.length,
    k, // the next call to settle
    limits,
    results,
    retried,
    job,
    r,
    ctx,
    held: [], // handles disposed with the context
    // dirty: drop the runtime afterwards (memory trouble, pending jobs); a budget or deadline
    // interrupt needs only the fresh context the next call gets anyway.
    dirty: false,
    fresh: false, // the next call must run in a fresh context
    ran: 0, // calls run in this context
    replacer: null, // the result-rule replacer, compiled on the first object result
  };
  try {
    const host = takeBuiltins(c, program, job.budget);
    const failed = runTopLevel(c, program, host);
    if (failed !== undefined) return failed;
    const f = findF(c, host, limits);
    if (!f || ctx.typeof(f) !== 'function') {
      // (f may be a global getter that loops)
      return settleRest(c, interrupted ? timeoutOut(limits, job.budget) : SUFFIX_CODES.f);
    }
    while (c.k < c.n) {
      const stop = runBatch(c, host, f);
      if (stop !== undefined) return stop;
    }
    return c.n;
  } finally {
    closeContext(c);
  }
}

/** Gives call k (or the program's top level) its allowance before it runs. */
function startCall(c) {
  if (c.job.per === 'call') allowCall(c.job.budget);
}

/** Settles calls k..n-1 alike; returns n. */
function settleRest(c, out) {
  for (let i = c.k; i < c.n; i++) c.results[i] = out;
  return c.n;
}

/** Ends the job at call k: the remaining calls are not run. */
function endJob(c, out) {
  c.results[c.k] = out;
  const skipped = [out[0], `not run: an earlier call failed (${out[0]})`];
  for (let i = c.k + 1; i < c.n; i++) c.results[i] = skipped;
  return c.n;
}

/** A failure at call k: record it (→ k + 1), or retry k in a fresh context (→ k). */
function fail(c, out) {
  const { job, k } = c;
  if (out[0] === 'memory') c.dirty = true;
  if (isLimit(out[0]) || interrupted) c.fresh = true;
  const budgetOut = out[0] === 'timeout' && overBudget;
  const oversized = takeTextCut();
  if (job.per === 'task') {
    // An error whose text exceeds the cap is over the output cap too: it ends the answer.
    if (oversized) return endJob(c, out);
    if (isHardLimit(out[0])) {
      if (!job.failed && !c.retried) {
        if ((out[0] === 'memory' || out[0] === 'stack') && c.ran > 0) return k;
        if (out[0] === 'timeout' && !budgetOut && starved() && job.extra === 0) {
          job.extra = 1;
          extendAllowance(job.budget);
          return k;
        }
      }
      return endJob(c, out);
    }
    job.failed = true;
  } else if (isLimit(out[0]) && !budgetOut) {
    if (c.ran > 0) return k;
    if (out[0] === 'timeout' && !c.retried && starved()) return k;
  }
  c.results[k] = out;
  return k + 1;
}

/** A failed call: settles it; returns the index to stop at when this context is done, else undefined. */
function settleFailure(c, out) {
  const next = fail(c, out);
  if (next === c.k || c.fresh || c.dirty) return next;
  c.k = next;
  c.ran++;
  return undefined;
}

/** Runs the program's top level; returns the index to stop at when it failed, else undefined. */
function runTopLevel(c, program, host) {
  const { ctx, r, limits } = c;
  startCall(c);
  arm(limits.timeoutMs);
  const res = ctx.evalCode(markProgram(program), 'task.js');
  if (res.error) {
    const out = failure(ctx, r, res.error, limits, undefined, host.tools);
    res.error.dispose();
    if (out[0] === 'memory') c.dirty = true;
    if (out[0] === 'timeout' && !overBudget && !c.retried && starved()) return c.k;
    // The program's top level runs the same way in every context: every call fails alike.
    return settleRest(c, out);
  }
  res.value.dispose();
  return undefined;
}

/**
 * A batch: calls k..b-1, their arguments parsed with one JSON.parse, each call run and settled.
 * Returns the index to stop at when this context is done, else undefined.
 */
function runBatch(c, host, f) {
  const { ctx, r, limits, argsList, n, k } = c;
  let b = k + 1;
  let size = argsList[k].length;
  while (b < n && size + argsList[b].length < BATCH_ARGS) size += argsList[b++].length;
  const text = b === k + 1 ? '[' + argsList[k] + ']' : '[' + argsList.slice(k, b).join(',') + ']';
  arm(Math.max(OWN_MS, limits.timeoutMs), Math.max(OWN_MS, limits.timeoutMs));
  const sh = ctx.newString(text);
  const pr = ctx.callFunction(host.parse, host.json, sh);
  sh.dispose();
  if (pr.error) {
    const out = failure(ctx, r, pr.error, limits, 0, host.tools);
    pr.error.dispose();
    r.setMemoryLimit(limits.memoryBytes);
    return fail(c, out);
  }
  const batch = pr.value;
  try {
    for (let j = 0; c.k < b; j++) {
      const stop = runCall(c, host, f, batch, j);
      if (stop !== undefined) return stop;
    }
  } finally {
    batch.dispose();
  }
  return undefined;
}

/** Call k, on the batch's j-th arguments: runs and settles it; returns the index to stop at, or undefined. */
function runCall(c, host, f, batch, j) {
  const { ctx, r, limits } = c;
  startCall(c);
  arm(limits.timeoutMs);
  const args = ctx.getProp(batch, j);
  const cr = ctx.callFunction(host.apply, ctx.undefined, f, ctx.undefined, args);
  args.dispose();
  if (cr.error) {
    const out = failure(ctx, r, cr.error, limits, 2, host.tools);
    cr.error.dispose();
    r.setMemoryLimit(limits.memoryBytes);
    return settleFailure(c, out);
  }
  const v = cr.value;
  const late = interrupted;
  const lateBudget = overBudget;
  const lateWall = overWall;
  let out;
  try {
    out = readResult(c, host, v);
  } finally {
    v.dispose();
  }
  // The deadline passed during the call even though it returned (an async f turns the
  // interrupt into a rejected promise): a timeout all the same.
  if (late || interrupted) {
    if (late) restoreInterrupt(lateBudget, lateWall);
    out = timeoutOut(limits, c.job.budget);
  }
  if (out[0] !== 0) return settleFailure(c, out);
  c.results[c.k++] = out;
  c.ran++;
  return undefined;
}

/** A call's result as [0, json] or a failure: numbers and booleans read on the host, the rest as JSON text. */
function readResult(c, host, v) {
  const { ctx, limits } = c;
  const t = ctx.typeof(v);
  if (t === 'number') {
    const x = ctx.getNumber(v);
    return Number.isFinite(x) ? [0, x === 0 ? '0' : String(x)] : SUFFIX_CODES.n;
  }
  if (t === 'boolean') return [0, ctx.dump(v) ? 'true' : 'false'];
  if (t === 'undefined') return SUFFIX_CODES.u;
  if (t === 'function' || t === 'symbol' || t === 'bigint') return SUFFIX_CODES[t];
  if (t === 'string' && lengthOf(ctx, v) > limits.maxOutputBytes) {
    // (its JSON text is longer still: refuse it before copying anything)
    return ['output-too-large', `result exceeds ${limits.maxOutputBytes} bytes`];
  }
  return stringifyResult(c, host, v, t);
}

/** A string or object result as JSON text, made inside the context (objects with the result-rule replacer). */
function stringifyResult(c, host, v, t) {
  const { ctx, r, limits } = c;
  if (t !== 'string' && !c.replacer) {
    c.replacer = makeReplacer(ctx, host.isArray, host.protoOf, host.objectProto);
    if (c.replacer) hold(c, c.replacer);
    arm(limits.timeoutMs);
  }
  const sr =
    t === 'string'
      ? ctx.callFunction(host.stringify, host.json, v)
      : c.replacer
        ? ctx.callFunction(host.stringify, host.json, v, c.replacer)
        : null;
  if (!sr) {
    // Our own small function could not be made: the runtime is out of room.
    c.dirty = true;
    return ['memory', `exceeded the ${limits.memoryBytes} byte memory cap`];
  }
  if (sr.error) {
    const out = failure(ctx, r, sr.error, limits, 3, host.tools);
    sr.error.dispose();
    r.setMemoryLimit(limits.memoryBytes);
    return out;
  }
  const isStr = ctx.typeof(sr.value) === 'string';
  // The JSON text's length is read inside the context: a text over the cap never crosses.
  const st = !isStr ? null : lengthOf(ctx, sr.value) > limits.maxOutputBytes ? '' : ctx.getString(sr.value);
  sr.value.dispose();
  return st === null
    ? SUFFIX_CODES.u
    : st === '' && isStr
      ? ['output-too-large', `result exceeds ${limits.maxOutputBytes} bytes`]
      : success(st, limits);
}

/** The result-rule replacer, built from the builtins captured before the program ran. */
function makeReplacer(ctx, isArray, protoOf, objectProto) {
  arm(OWN_MS, OWN_MS);
  const fr = ctx.evalCode(REPLACER, 'cogen.js');
  if (fr.error) {
    fr.error.dispose();
    return null;
  }
  const made = ctx.callFunction(fr.value, ctx.undefined, isArray, protoOf, objectProto);
  fr.value.dispose();
  if (made.error) {
    made.error.dispose();
    return null;
  }
  return made.value;
}
