// The engine of one sandbox worker thread: runs a task's calls in fresh QuickJS contexts and
// returns one verdict per call. Plain JavaScript on purpose: worker threads do not inherit tsx's
// loader, so these files must load as-is under node, tsx and vitest alike. worker.mjs wraps the
// engine in a message loop. Its parts, one job each:
//   engine.mjs   a task's calls in contexts: arguments in, results out, retries and the end
//                of a job (this file)
//   context.mjs  one fresh context: made, its builtins taken first, f found, disposed after
//   steps.mjs    step budgets and deadlines, counted from QuickJS's interrupt counter, native
//                work (meter.mjs) and the wall-clock safety net
//   meter.mjs    the QuickJS module rewritten so that its native work is counted (work.mjs:
//                its globals)
//   result.mjs   a call's result read out: JSON text made, measured and refused inside the context
//   readout.mjs  strings and exceptions read out of a context, measured inside it; failure verdicts
//   runtime.mjs  the WASM module and the runtime under the contexts: loading, recycling, traps
//   repeat.mjs   a String.prototype.repeat the step counter can see
//   prelude.mjs  the source text a context gets (phase marker, result-rule replacer)
//   warmup.mjs   start-up: finding the counter, compiling, calibrating steps per ms
//   clock.mjs    the frozen clock that makes Date and Math.random deterministic
import { closeContext, findF, openContext, takeBuiltins } from './context.mjs';
import { countedBytes } from './runtime.mjs';
import { SUFFIX_CODES, markProgram } from './prelude.mjs';
import { OWN_MS, readResult } from './result.mjs';
import { beginCopied, failure, memoryCap, timeoutOut } from './readout.mjs';
import {
  allowCall,
  arm,
  beginJobSteps,
  discardNative,
  endJobSteps,
  extendAllowance,
  interrupted,
  nativeOver,
  overBudget,
  overNative,
  overWall,
  parseThenRun,
  parsed,
  restoreInterrupt,
} from './steps.mjs';

export { INTRINSICS } from './context.mjs';

/** Runs one job in a fresh context; returns [0, json] or [reason, detail]. */
export function runJob(program, argsJson, limits) {
  return runTask(program, [argsJson], limits)[0];
}

/**
 * An answer's memory cap: what the runtime counts when its context is ready, plus MEMORY_BASE and
 * BYTES_PER_STEP a step of its budget, within limits.memoryBytes (a budget of 20,000 steps: 144 KiB
 * more). QuickJS built for WebAssembly cannot read a block's size, so it counts 8 bytes an
 * allocation against its limit (runtime.mjs, countedBytes), and the limit bounds each single
 * allocation rather than the total (docs/sandbox.md): this cap keeps one native operation (a string
 * flattened, an array filled, a large JSON.stringify) to what the budget allows, and the native work
 * meter (steps.mjs) bounds the total, every allocation and every byte written being work.
 */
export const BYTES_PER_STEP = 4;
const MEMORY_BASE = 64 * 1024;

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
  beginCopied();
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
    utf8: null, // the UTF-8 length helper, compiled on the first long result
  };
  try {
    const host = takeBuiltins(c, program, job.budget);
    capMemory(c);
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

/** With a budget, the context's memory cap comes down to the answer's (c.limits then carries it, for every later use and message). */
function capMemory(c) {
  const { job, limits, r } = c;
  if (!(job.budget > 0)) return;
  const counted = countedBytes(r);
  if (counted < 0) return;
  const cap = Math.min(limits.memoryBytes, counted + MEMORY_BASE + job.budget * BYTES_PER_STEP);
  if (cap >= limits.memoryBytes) return;
  const allowed = MEMORY_BASE + job.budget * BYTES_PER_STEP;
  // (the message names what the answer was allowed, not the cap, which depends on the runtime's history)
  c.limits = {
    ...limits,
    memoryCap: cap,
    memoryNote: `its memory cap of ${allowed} bytes (${BYTES_PER_STEP} a step of its budget)`,
  };
  r.setMemoryLimit(cap);
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
  if (job.per === 'task') {
    // (An error whose text is over the cap fails as 'output-too-large': it ends the answer too.)
    if (isHardLimit(out[0])) {
      if (!job.failed && !c.retried) {
        if ((out[0] === 'memory' || out[0] === 'stack') && c.ran > 0) return k;
        if (out[0] === 'timeout' && !budgetOut && overWall && job.extra === 0) {
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
    if (out[0] === 'timeout' && !c.retried && overWall) return k;
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
  // What the engine did in the context so far (taking its builtins) is not the program's work.
  discardNative();
  startCall(c);
  arm(limits.timeoutMs);
  parseThenRun();
  const res = ctx.evalCode(markProgram(program), 'task.js');
  parsed();
  if (res.error) {
    const out = failure(ctx, r, res.error, limits, undefined, host.tools);
    res.error.dispose();
    if (out[0] === 'memory') c.dirty = true;
    if (out[0] === 'timeout' && !overBudget && !c.retried && overWall) return c.k;
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
  discardNative();
  if (pr.error) {
    const out = failure(ctx, r, pr.error, limits, 0, host.tools);
    pr.error.dispose();
    r.setMemoryLimit(memoryCap(limits));
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
    r.setMemoryLimit(memoryCap(limits));
    return settleFailure(c, out);
  }
  const v = cr.value;
  // (or its last native operation ran the units out after the interpreter's last poll)
  const late = interrupted || nativeOver();
  const lateBudget = overBudget;
  const lateWall = overWall;
  const lateNative = overNative;
  let out;
  try {
    out = readResult(c, host, v);
  } finally {
    v.dispose();
  }
  // The deadline passed during the call even though it returned (an async f turns the
  // interrupt into a rejected promise): a timeout all the same.
  if (late || interrupted || nativeOver()) {
    if (late) restoreInterrupt(lateBudget, lateWall, lateNative);
    out = timeoutOut(limits, c.job.budget);
  }
  if (out[0] !== 0) return settleFailure(c, out);
  c.results[c.k++] = out;
  c.ran++;
  return undefined;
}
