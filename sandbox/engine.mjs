// The engine of one sandbox worker thread: runs a task's calls in fresh QuickJS contexts and
// returns one verdict per call. Plain JavaScript on purpose: worker threads do not inherit tsx's
// loader, so these files must load as-is under node, tsx and vitest alike. worker.mjs wraps the
// engine in a message loop. Its parts, one job each:
//   engine.mjs   a task's calls in contexts: builtins taken first, arguments in, results out,
//                retries and the end of a job (this file)
//   steps.mjs    step budgets and deadlines, counted from QuickJS's interrupt counter, and the
//                wall-clock safety net
//   readout.mjs  strings and exceptions read out of a context, cut inside it; failure verdicts
//   runtime.mjs  the WASM module and the runtime under the contexts: loading, recycling, traps
//   repeat.mjs   a String.prototype.repeat the step counter can see
//   prelude.mjs  the source text a context gets (phase marker, result-rule replacer)
//   warmup.mjs   start-up: finding the counter, compiling, calibrating steps per ms
//   clock.mjs    the frozen clock that makes Date and Math.random deterministic
import { REPLACER, SUFFIX_CODES, markProgram } from './prelude.mjs';
import { FAST_REPEAT, installRepeat } from './repeat.mjs';
import { clearTextCut, failure, lengthOf, success, takeTextCut, timeoutOut } from './readout.mjs';
import { recycleRuntime, runtimeFor } from './runtime.mjs';
import {
  allowCall,
  arm,
  beginJobSteps,
  endJobSteps,
  enterContext,
  extendAllowance,
  interrupted,
  leaveContext,
  overBudget,
  overWall,
  restoreInterrupt,
  starved,
} from './steps.mjs';

/** Language features every context gets. No TypedArrays (hence no SharedArrayBuffer/Atomics). */
export const INTRINSICS = {
  BaseObjects: true,
  Eval: true,
  JSON: true,
  RegExp: true,
  MapSet: true,
  Date: true,
  Proxy: true,
  Promise: true,
};

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
  const n = argsList.length;
  const r = runtimeFor(limits);
  const ctx = r.newContext({ intrinsics: INTRINSICS });
  enterContext(ctx.ctx.value);
  const held = [];
  const hold = (h) => (held.push(h), h);
  // dirty: drop the runtime afterwards (memory trouble, pending jobs); a budget or deadline
  // interrupt needs only the fresh context the next call gets anyway.
  let dirty = false;
  let fresh = false; // the next call must run in a fresh context
  let ran = 0; // calls run in this context
  const perCall = job.per === 'call';
  /** Gives call k (or the program's top level) its allowance before it runs. */
  const startCall = () => {
    if (perCall) allowCall(job.budget);
  };
  /** Ends the job at call k: the remaining calls are not run. */
  const endJob = (out) => {
    results[k] = out;
    const skipped = [out[0], `not run: an earlier call failed (${out[0]})`];
    for (let i = k + 1; i < n; i++) results[i] = skipped;
    return n;
  };
  /** A failure at call k: record it (→ k + 1), or retry k in a fresh context (→ k). */
  const fail = (out) => {
    if (out[0] === 'memory') dirty = true;
    if (isLimit(out[0]) || interrupted) fresh = true;
    const budgetOut = out[0] === 'timeout' && overBudget;
    const oversized = takeTextCut();
    if (job.per === 'task') {
      // An error whose text exceeds the cap is over the output cap too: it ends the answer.
      if (oversized) return endJob(out);
      if (isHardLimit(out[0])) {
        if (!job.failed && !retried) {
          if ((out[0] === 'memory' || out[0] === 'stack') && ran > 0) return k;
          if (out[0] === 'timeout' && !budgetOut && starved() && job.extra === 0) {
            job.extra = 1;
            extendAllowance(job.budget);
            return k;
          }
        }
        return endJob(out);
      }
      job.failed = true;
    } else if (isLimit(out[0]) && !budgetOut) {
      if (ran > 0) return k;
      if (out[0] === 'timeout' && !retried && starved()) return k;
    }
    results[k] = out;
    return k + 1;
  };
  try {
    // The builtins the host uses, taken before the program can touch them.
    const g = ctx.global;
    const json = hold(ctx.getProp(g, 'JSON'));
    const parse = hold(ctx.getProp(json, 'parse'));
    const stringify = hold(ctx.getProp(json, 'stringify'));
    const reflect = hold(ctx.getProp(g, 'Reflect'));
    const apply = hold(ctx.getProp(reflect, 'apply'));
    const objectCtor = hold(ctx.getProp(g, 'Object'));
    const protoOf = hold(ctx.getProp(objectCtor, 'getPrototypeOf'));
    const objectProto = hold(ctx.getProp(objectCtor, 'prototype'));
    const arrayCtor = hold(ctx.getProp(g, 'Array'));
    const isArray = hold(ctx.getProp(arrayCtor, 'isArray'));
    const stringCtor = hold(ctx.getProp(g, 'String'));
    const stringProto = hold(ctx.getProp(stringCtor, 'prototype'));
    const slice = hold(ctx.getProp(stringProto, 'slice'));
    const tools = { slice, budget: job.budget, canThrow: /\bthrow\b/.test(program) };
    if (FAST_REPEAT) installRepeat(ctx, stringProto, hold);
    let replacer = null;

    startCall();
    arm(limits.timeoutMs);
    const res = ctx.evalCode(markProgram(program), 'task.js');
    if (res.error) {
      const out = failure(ctx, r, res.error, limits, undefined, tools);
      res.error.dispose();
      if (out[0] === 'memory') dirty = true;
      if (out[0] === 'timeout' && !overBudget && !retried && starved()) return k;
      // The program's top level runs the same way in every context: every call fails alike.
      for (let i = k; i < n; i++) results[i] = out;
      return n;
    }
    res.value.dispose();
    // f: a property of the global object (function f, var f), else a global lexical binding (let,
    // const), which only a script can read.
    arm(limits.timeoutMs);
    let f = null;
    try {
      f = hold(ctx.getProp(g, 'f'));
    } catch {
      // a throwing getter: no usable f
    }
    if (f && ctx.typeof(f) === 'undefined' && !interrupted) {
      const fr = ctx.evalCode('f', 'cogen.js');
      f = fr.error ? null : hold(fr.value);
      if (fr.error) fr.error.dispose();
    }
    if (!f || ctx.typeof(f) !== 'function') {
      // (f may be a global getter that loops)
      const out = interrupted ? timeoutOut(limits, job.budget) : SUFFIX_CODES.f;
      for (let i = k; i < n; i++) results[i] = out;
      return n;
    }

    while (k < n) {
      // A batch: calls k..b-1, their arguments parsed with one JSON.parse.
      let b = k + 1;
      let size = argsList[k].length;
      while (b < n && size + argsList[b].length < BATCH_ARGS) size += argsList[b++].length;
      const text = b === k + 1 ? '[' + argsList[k] + ']' : '[' + argsList.slice(k, b).join(',') + ']';
      arm(Math.max(OWN_MS, limits.timeoutMs), Math.max(OWN_MS, limits.timeoutMs));
      const sh = ctx.newString(text);
      const pr = ctx.callFunction(parse, json, sh);
      sh.dispose();
      if (pr.error) {
        const out = failure(ctx, r, pr.error, limits, 0, tools);
        pr.error.dispose();
        r.setMemoryLimit(limits.memoryBytes);
        return fail(out);
      }
      const batch = pr.value;
      try {
        for (let j = 0; k < b; j++) {
          startCall();
          arm(limits.timeoutMs);
          const args = ctx.getProp(batch, j);
          const cr = ctx.callFunction(apply, ctx.undefined, f, ctx.undefined, args);
          args.dispose();
          if (cr.error) {
            const out = failure(ctx, r, cr.error, limits, 2, tools);
            cr.error.dispose();
            r.setMemoryLimit(limits.memoryBytes);
            const next = fail(out);
            if (next === k || fresh || dirty) return next;
            k = next;
            ran++;
            continue;
          }
          const v = cr.value;
          const late = interrupted;
          const lateBudget = overBudget;
          const lateWall = overWall;
          let out;
          try {
            const t = ctx.typeof(v);
            if (t === 'number') {
              const x = ctx.getNumber(v);
              out = Number.isFinite(x) ? [0, x === 0 ? '0' : String(x)] : SUFFIX_CODES.n;
            } else if (t === 'boolean') {
              out = [0, ctx.dump(v) ? 'true' : 'false'];
            } else if (t === 'undefined') {
              out = SUFFIX_CODES.u;
            } else if (t === 'function' || t === 'symbol' || t === 'bigint') {
              out = SUFFIX_CODES[t];
            } else if (t === 'string' && lengthOf(ctx, v) > limits.maxOutputBytes) {
              // (its JSON text is longer still: refuse it before copying anything)
              out = ['output-too-large', `result exceeds ${limits.maxOutputBytes} bytes`];
            } else {
              if (t !== 'string' && !replacer) {
                replacer = makeReplacer(ctx, isArray, protoOf, objectProto);
                if (replacer) hold(replacer);
                arm(limits.timeoutMs);
              }
              const sr =
                t === 'string'
                  ? ctx.callFunction(stringify, json, v)
                  : replacer
                    ? ctx.callFunction(stringify, json, v, replacer)
                    : null;
              if (!sr) {
                // Our own small function could not be made: the runtime is out of room.
                dirty = true;
                out = ['memory', `exceeded the ${limits.memoryBytes} byte memory cap`];
              } else if (sr.error) {
                out = failure(ctx, r, sr.error, limits, 3, tools);
                sr.error.dispose();
                r.setMemoryLimit(limits.memoryBytes);
              } else {
                const isStr = ctx.typeof(sr.value) === 'string';
                // The JSON text's length is read inside the context: a text over the cap never crosses.
                const st = !isStr
                  ? null
                  : lengthOf(ctx, sr.value) > limits.maxOutputBytes
                    ? ''
                    : ctx.getString(sr.value);
                sr.value.dispose();
                out =
                  st === null
                    ? SUFFIX_CODES.u
                    : st === '' && isStr
                      ? ['output-too-large', `result exceeds ${limits.maxOutputBytes} bytes`]
                      : success(st, limits);
              }
            }
          } finally {
            v.dispose();
          }
          // The deadline passed during the call even though it returned (an async f turns the
          // interrupt into a rejected promise): a timeout all the same.
          if (late || interrupted) {
            if (late) restoreInterrupt(lateBudget, lateWall);
            out = timeoutOut(limits, job.budget);
          }
          if (out[0] !== 0) {
            const next = fail(out);
            if (next === k || fresh || dirty) return next;
            k = next;
          } else results[k++] = out;
          ran++;
        }
      } finally {
        batch.dispose();
      }
    }
    return n;
  } finally {
    leaveContext();
    for (const h of held) {
      try {
        h.dispose();
      } catch {
        dirty = true;
      }
    }
    // Pending promise jobs keep the context alive inside the runtime: drop the whole runtime.
    try {
      if (r.hasPendingJob()) dirty = true;
    } catch {
      dirty = true;
    }
    try {
      ctx.dispose();
    } catch {
      dirty = true;
    }
    recycleRuntime(dirty);
  }
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
