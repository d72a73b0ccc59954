// The engine of one sandbox worker thread: a QuickJS-in-WASM runtime that runs tasks, each in a
// fresh context. Plain JavaScript on purpose: worker threads do not inherit tsx's loader, so this
// file must load as-is under node, tsx and vitest alike. worker.mjs wraps it in a message loop.
import { newQuickJSWASMModuleFromVariant } from 'quickjs-emscripten-core';
import variant from '@jitl/quickjs-wasmfile-release-sync';
import { REPLACER, SUFFIX_CODES, markProgram } from './prelude.mjs';

// Determinism. The WASM module reads the clock and the time zone through this thread's global
// Date (gettimeofday, localtime, tzset), so freezing it here freezes QuickJS's Date.now(), new
// Date(), local time (UTC) and the seed of Math.random (taken from the clock when a context is
// made), at no cost per call. Nothing in this worker needs the real wall clock: deadlines use
// performance.now().
const FIXED_NOW = Date.UTC(2025, 0, 1);
let clockFrozen = false;

/** Replaces this thread's global Date (call it in worker threads only, never in the host's main thread). */
export function freezeClock() {
  if (clockFrozen) return;
  clockFrozen = true;
  const RealDate = Date;
  const asUtc = (...a) => (a.length >= 2 ? [RealDate.UTC(...a)] : a.length === 1 ? a : [FIXED_NOW]);
  class FixedDate extends RealDate {
    constructor(...a) {
      super(...asUtc(...a));
    }
    static now() {
      return FIXED_NOW;
    }
    getTimezoneOffset() {
      return 0;
    }
  }
  for (const k of ['FullYear', 'Month', 'Date', 'Day', 'Hours', 'Minutes', 'Seconds', 'Milliseconds']) {
    FixedDate.prototype['get' + k] = RealDate.prototype['getUTC' + k];
  }
  globalThis.Date = FixedDate;
}

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
/** A runtime is rebuilt after this many contexts, as a guard against slow leaks. */
const RECYCLE_EVERY = 5000;
const DETAIL_MAX = 300;
/**
 * Most characters of a string (an error's name or message, a thrown string) copied out of a
 * context: longer ones are cut inside the context first, so nothing large crosses to the host.
 */
const TEXT_MAX = 1024;

let mod = null;
let rt = null;
let rtUses = 0;
let deadline = 0;
let interrupted = false;
// The deadline is wall-clock time, a safety net. QuickJS calls the interrupt handler every 10,000
// interpreter steps (polls of its interrupt counter: loop back-edges, calls, regexp backtracking);
// the number of calls during a job measures the work it did. A job that times out after doing
// almost no work (fewer steps than half a deadline of busy-looping allows, as calibrated at
// start-up) was starved of CPU by a busy machine rather than slow, and is run once more.
let calls = 0;
let stepsPerMs = 0;

// Steps: the budget unit (DESIGN.md, "Sandbox"). The interrupt counter lives in the context's
// struct in WASM memory (JSContext.interrupt_counter); warmUp() finds it and checks that it behaves
// as expected (exact = true). Then the engine reads it to count every step a job takes, and lowers
// it so that the handler runs exactly when a budget is spent. If the check fails (another QuickJS
// build), steps are counted in whole handler calls (10,000 each) and a budget is enforced at that
// granularity: still deterministic, only coarser.
const COUNTER_INIT = 10_000;
const COUNTER_OFFSET = 232;
let exact = false;
let heap = null;
let ctxPtr = 0;
/** The counter's value when last read or written (the steps since then are lastSet − counter). */
let lastSet = 0;
/** Steps taken by the current job so far, in all its contexts. */
let spent = 0;
/** The job may take steps up to here (Infinity: no budget). */
let allowance = Infinity;
/** Whether the last interrupt was the budget's (else the wall-clock deadline's). */
let overBudget = false;
/** Steps at the last arm(), for the starvation check. */
let armSpent = 0;

function counterView() {
  const buf = mod.module.HEAPU8.buffer;
  if (!heap || heap.buffer !== buf) heap = new Int32Array(buf);
  return heap;
}

/** Brings `spent` up to date with the counter (steps taken since it was last read or written). */
function sync() {
  if (!exact || !ctxPtr) return;
  const c = counterView()[(ctxPtr + COUNTER_OFFSET) >> 2];
  spent += lastSet - c;
  lastSet = c;
}

/**
 * Sets the counter so that the handler runs within COUNTER_INIT steps, or at the first step past
 * the allowance (a job may take `allowance` steps; the attempt at one more stops it).
 */
function setCounter() {
  if (!exact || !ctxPtr) return;
  const left = allowance - spent + 1;
  const next = left >= COUNTER_INIT ? COUNTER_INIT : Math.max(1, left);
  counterView()[(ctxPtr + COUNTER_OFFSET) >> 2] = next;
  lastSet = next;
}

function onInterrupt() {
  calls++;
  if (exact && ctxPtr) {
    const c = counterView()[(ctxPtr + COUNTER_OFFSET) >> 2];
    // Either the interpreter's counter ran down from lastSet to 0 and QuickJS has just reset it to
    // COUNTER_INIT (lastSet steps, at least 1), or the regexp engine, which keeps a counter of its
    // own, calls in after 10,000 of its steps: those, plus the interpreter's steps since the last
    // read. (With lastSet = c = COUNTER_INIT the two readings agree.)
    spent += c === COUNTER_INIT ? Math.max(1, lastSet) : lastSet - c + COUNTER_INIT;
    lastSet = c;
  } else spent += COUNTER_INIT;
  if (spent > allowance) {
    // The step that would pass the allowance is not taken.
    if (exact && ctxPtr) spent = Math.max(allowance, spent - 1);
    overBudget = true;
    interrupted = true;
    return true;
  }
  if (performance.now() > deadline) {
    interrupted = true;
    return true;
  }
  setCounter();
  return false;
}

/** The worker's progress array: [message id, job index, step]; the step moves at every arm(). */
let progress = null;
export function setProgress(arr) {
  progress = arr;
}

function arm(timeoutMs) {
  if (progress) Atomics.add(progress, 2, 1);
  interrupted = false;
  overBudget = false;
  calls = 0;
  sync();
  armSpent = spent;
  setCounter();
  deadline = performance.now() + timeoutMs;
}

export async function loadModule() {
  mod = await newQuickJSWASMModuleFromVariant(variant);
  heap = null;
}

export const engineLoaded = () => mod !== null;

/** Forgets the module and runtime after a trap: the next loadModule() starts from scratch. */
export function resetEngine() {
  rt = null;
  mod = null;
  ctxPtr = 0;
}

export function dropRuntime() {
  const old = rt;
  rt = null;
  rtUses = 0;
  if (old) {
    try {
      old.dispose();
    } catch {
      // a runtime that cannot be freed cleanly takes its module with it
      mod = null;
    }
  }
}

function runtime() {
  if (!rt) {
    rt = mod.newRuntime();
    rt.setInterruptHandler(onInterrupt);
  }
  return rt;
}

export const clip = (s) => (s.length > DETAIL_MAX ? s.slice(0, DETAIL_MAX) + '…' : s);

/** Runs one job in a fresh context; returns [0, json] or [reason, detail]. */
export function runJob(program, argsJson, limits) {
  return runTask(program, [argsJson], limits)[0];
}

/** Most characters of arguments (JSON) parsed with one JSON.parse inside the context. */
const BATCH_ARGS = 64 * 1024;

const isLimit = (reason) => reason === 'timeout' || reason === 'memory' || reason === 'stack';
/** Failures that end an answer's verification when its calls share one budget. */
const isHardLimit = (reason) => isLimit(reason) || reason === 'output-too-large';
/** Set when failure() had to cut a thrown text (over TEXT_MAX): the error channel's output cap. */
let textCut = false;

/** Steps taken by the last runTask (all its contexts). */
let lastSteps = 0;
export const lastJobSteps = () => lastSteps;

const timeoutOut = (limits, budget) =>
  overBudget ? ['timeout', `exceeded its budget of ${budget} steps`] : ['timeout', `exceeded the ${limits.timeoutMs} ms deadline`];

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
 * or an error whose message or thrown text exceeds TEXT_MAX) ends the job: the remaining calls are
 * not run. A call that met memory or stack after others ran is retried in a fresh context (on the
 * same budget), and a deadline (not budget) timeout of a starved thread once more with one more
 * budget, but only while every earlier call succeeded (else the answer has failed whatever the
 * retry says). With a 'call' budget each call gets its own; a
 * call that spends it fails alone and the next continues in a fresh context.
 */
export function runTask(program, argsList, limits, budget, per) {
  const n = argsList.length;
  const results = new Array(n);
  const job = { budget: budget > 0 ? budget : 0, per: budget > 0 ? (per === 'call' ? 'call' : 'task') : null, extra: 0, failed: false };
  spent = 0;
  textCut = false;
  allowance = job.per === 'task' ? job.budget : Infinity;
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
    lastSteps = spent;
    allowance = Infinity;
  }
  return results;
}

/** One fresh context: settles calls from k on; returns the index of the first call it did not settle. */
function runInContext(program, argsList, k, limits, results, retried, job) {
  const n = argsList.length;
  const r = runtime();
  r.setMemoryLimit(limits.memoryBytes);
  r.setMaxStackSize(limits.stackBytes);
  rtUses++;
  const ctx = r.newContext({ intrinsics: INTRINSICS });
  ctxPtr = ctx.ctx.value;
  lastSet = 0;
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
    if (perCall) {
      sync();
      allowance = spent + job.budget;
    }
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
    const oversized = textCut;
    textCut = false;
    if (job.per === 'task') {
      // An error whose text exceeds the cap is over the output cap too: it ends the answer.
      if (oversized) return endJob(out);
      if (isHardLimit(out[0])) {
        if (!job.failed && !retried) {
          if ((out[0] === 'memory' || out[0] === 'stack') && ran > 0) return k;
          if (out[0] === 'timeout' && !budgetOut && starved(limits) && job.extra === 0) {
            job.extra = 1;
            allowance += job.budget;
            return k;
          }
        }
        return endJob(out);
      }
      job.failed = true;
    } else if (isLimit(out[0]) && !budgetOut) {
      if (ran > 0) return k;
      if (out[0] === 'timeout' && !retried && starved(limits)) return k;
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
    const tools = { slice, budget: job.budget };
    if (FAST_REPEAT) installRepeat(ctx, stringProto, hold);
    let replacer = null;

    startCall();
    arm(limits.timeoutMs);
    const res = ctx.evalCode(markProgram(program), 'task.js');
    if (res.error) {
      const out = failure(ctx, r, res.error, limits, undefined, tools);
      res.error.dispose();
      if (out[0] === 'memory') dirty = true;
      if (out[0] === 'timeout' && !overBudget && !retried && starved(limits)) return k;
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
      arm(Math.max(1000, limits.timeoutMs));
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
              const sr = t === 'string' ? ctx.callFunction(stringify, json, v) : replacer ? ctx.callFunction(stringify, json, v, replacer) : null;
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
                const st = !isStr ? null : lengthOf(ctx, sr.value) > limits.maxOutputBytes ? '' : ctx.getString(sr.value);
                sr.value.dispose();
                out = st === null ? SUFFIX_CODES.u : st === '' && isStr ? ['output-too-large', `result exceeds ${limits.maxOutputBytes} bytes`] : success(st, limits);
              }
            }
          } finally {
            v.dispose();
          }
          // The deadline passed during the call even though it returned (an async f turns the
          // interrupt into a rejected promise): a timeout all the same.
          if (late || interrupted) {
            if (late) overBudget = lateBudget;
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
    sync();
    ctxPtr = 0;
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
    if (dirty || rtUses >= RECYCLE_EVERY) dropRuntime();
  }
}

/**
 * String.prototype.repeat builds its result one copy at a time, in a native loop the interrupt
 * counter does not see ('x'.repeat(1e7) takes ~100 ms, more than a whole budget, on every call).
 * Each context gets a repeat of the same behaviour that builds long results by doubling
 * (String.prototype.concat: about log2(count) concatenations, which QuickJS keeps as ropes) and
 * leaves everything else (short results, odd receivers or counts, errors) to the original. Made
 * through the engine's API, so no source text is parsed per context.
 */
const FAST_REPEAT = process.env.COGEN_SANDBOX_NATIVE_REPEAT !== '1';
/** Results shorter than this are left to the original repeat. */
const REPEAT_MIN = 4096;
/** QuickJS's longest string (JS_STRING_LEN_MAX): beyond it the original throws its RangeError. */
const STRING_MAX = 2 ** 30 - 1;

function installRepeat(ctx, stringProto, hold) {
  const original = hold(ctx.getProp(stringProto, 'repeat'));
  const concat = hold(ctx.getProp(stringProto, 'concat'));
  const fn = ctx.newFunction('repeat', function (count) {
    if (ctx.typeof(this) === 'string' && count !== undefined && ctx.typeof(count) === 'number') {
      const n = Math.trunc(ctx.getNumber(count));
      const len = lengthOf(ctx, this);
      if (n > 1 && len > 0 && len * n >= REPEAT_MIN && len * n <= STRING_MAX) return doubling(ctx, concat, this, n);
    }
    return count === undefined ? ctx.callFunction(original, this) : ctx.callFunction(original, this, count);
  });
  try {
    ctx.defineProp(stringProto, 'repeat', { value: fn, configurable: true, enumerable: false, writable: true });
  } finally {
    fn.dispose();
  }
}

/** s repeated n times (n ≥ 2) by doubling; the call result of the last concatenation. */
function doubling(ctx, concat, s, n) {
  let acc = null;
  let pow = s.dup();
  try {
    for (;;) {
      if (n % 2 === 1) {
        const r = acc ? ctx.callFunction(concat, acc, pow) : { value: pow.dup() };
        if (r.error) return r;
        acc?.dispose();
        acc = r.value;
      }
      n = Math.floor(n / 2);
      if (n === 0) break;
      const r = ctx.callFunction(concat, pow, pow);
      if (r.error) return r;
      pow.dispose();
      pow = r.value;
    }
    const out = acc;
    acc = null;
    return { value: out };
  } finally {
    pow.dispose();
    acc?.dispose();
  }
}

/** The length of a string handle, read inside the context (-1 if it cannot be read). */
function lengthOf(ctx, h) {
  try {
    const l = ctx.getProp(h, 'length');
    const x = ctx.typeof(l) === 'number' ? ctx.getNumber(l) : -1;
    l.dispose();
    return x;
  } catch {
    return -1;
  }
}

/** A string handle's text, cut to TEXT_MAX characters inside the context before it is copied out. */
function shortString(ctx, h, slice) {
  const len = lengthOf(ctx, h);
  if (len <= TEXT_MAX) return ctx.getString(h);
  textCut = true;
  if (!slice) return undefined;
  const from = ctx.newNumber(0);
  const to = ctx.newNumber(TEXT_MAX);
  const cut = ctx.callFunction(slice, h, from, to);
  from.dispose();
  to.dispose();
  if (cut.error) {
    cut.error.dispose();
    return undefined;
  }
  const s = ctx.typeof(cut.value) === 'string' ? ctx.getString(cut.value) : undefined;
  cut.value.dispose();
  return s === undefined ? undefined : s + '…';
}

/** Whether the deadline passed after the job did very little work (a CPU-starved thread). */
function starved(limits) {
  sync();
  return spent - armSpent < Math.max(2 * COUNTER_INIT, stepsPerMs * limits.timeoutMs * 0.5);
}

/** The result-rule replacer, built from the builtins captured before the program ran. */
function makeReplacer(ctx, isArray, protoOf, objectProto) {
  arm(1000);
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

function success(s, limits) {
  if (s === null) return ['non-serialisable', 'no JSON text came back'];
  if (s.length > limits.maxOutputBytes || (s.length * 3 > limits.maxOutputBytes && Buffer.byteLength(s, 'utf8') > limits.maxOutputBytes)) {
    return ['output-too-large', `result exceeds ${limits.maxOutputBytes} bytes`];
  }
  return [0, s];
}

/** A property of an error: a number, or a string cut inside the context (undefined otherwise). */
function str(ctx, obj, key, slice) {
  try {
    const h = ctx.getProp(obj, key);
    const t = ctx.typeof(h);
    const v = t === 'string' ? shortString(ctx, h, slice) : t === 'number' ? ctx.getNumber(h) : undefined;
    h.dispose();
    return v;
  } catch {
    return undefined;
  }
}

/** Whether a handle is null, compared inside the context (dumping an object would copy it out). */
function isNull(ctx, h) {
  try {
    return ctx.sameValue(h, ctx.null);
  } catch {
    return false;
  }
}

/** Whether the runtime holds at least half of its memory cap (read on failure paths only). */
function nearLimit(r, limits) {
  try {
    const h = r.computeMemoryUsage();
    const usage = r.getSystemContext().dump(h);
    h.dispose();
    const used = usage ? Number(usage.malloc_size ?? usage.memory_used_size ?? 0) : 0;
    return used >= limits.memoryBytes * 0.5;
  } catch {
    return false;
  }
}

/** Why a call failed: the exception that escaped the script, read carefully. */
function failure(ctx, r, err, limits, callPhase, tools) {
  textCut = false;
  if (interrupted) return timeoutOut(limits, tools.budget);
  // Inspection may run the program's getters: give it a little room and time of its own.
  r.setMemoryLimit(limits.memoryBytes + (1 << 20));
  arm(Math.min(limits.timeoutMs, 20));
  const phase = callPhase ?? str(ctx, ctx.global, '__cogen_phase__');
  const type = ctx.typeof(err);
  let reason = 'runtime-error';
  let detail;
  if (type === 'string') {
    const s = shortString(ctx, err, tools.slice) ?? '';
    if (s.charCodeAt(0) === 1 && Object.hasOwn(SUFFIX_CODES, s.slice(1))) {
      const [reason, detail] = SUFFIX_CODES[s.slice(1)];
      return [reason, reason === 'output-too-large' ? `the result exceeds ${limits.maxOutputBytes} bytes` : detail];
    }
    detail = `thrown: ${JSON.stringify(s)}`;
  } else if (type === 'object' && isNull(ctx, err)) {
    // QuickJS throws null when it runs out of memory while creating the 'out of memory' error.
    if (nearLimit(r, limits)) return ['memory', `exceeded the ${limits.memoryBytes} byte memory cap`];
    detail = 'thrown: null';
  } else if (type === 'object' || type === 'function') {
    const name = str(ctx, err, 'name', tools.slice);
    const message = str(ctx, err, 'message', tools.slice);
    if (interrupted) return timeoutOut(limits, tools.budget);
    if (message === 'out of memory' || message === 'string too long') return ['memory', `exceeded the ${limits.memoryBytes} byte memory cap (${message})`];
    if (message === 'stack overflow' || message === 'Maximum call stack size exceeded') return ['stack', `exceeded the ${limits.stackBytes} byte stack cap`];
    if (name === 'SyntaxError' && phase === undefined) return ['syntax', clip(`SyntaxError: ${message}`)];
    if (typeof message === 'string' && message.startsWith('forbidden:')) return ['forbidden', clip(message)];
    detail = typeof name === 'string' && typeof message === 'string' ? `${name}: ${message}` : `non-Error ${type} thrown`;
  } else {
    let v = '?';
    try {
      v = type === 'number' ? String(ctx.getNumber(err)) : type;
    } catch {
      // keep '?'
    }
    detail = `thrown: ${v}`;
  }
  if (phase === 3) reason = 'non-serialisable';
  return [reason, clip(phase === 3 ? `exception during serialisation: ${detail}` : detail)];
}


/**
 * Checks that the interrupt counter is where the engine expects it in this QuickJS build (its
 * value and how it runs down on known code); sets `exact` accordingly.
 */
function findCounter() {
  exact = false;
  const r = runtime();
  r.setMemoryLimit(16 << 20);
  let ctx = null;
  try {
    ctx = r.newContext({ intrinsics: INTRINSICS });
    const p = ctx.ctx.value;
    const at = (p + COUNTER_OFFSET) >> 2;
    if (p <= 0 || (p + COUNTER_OFFSET) % 4 !== 0 || counterView()[at] !== 0) return;
    const run = (code) => {
      deadline = performance.now() + 10_000;
      calls = 0;
      const res = ctx.evalCode(code, 'cogen.js');
      const ok = !res.error;
      (res.error ?? res.value).dispose();
      return ok;
    };
    // The first step of a fresh context (counter 0) calls the handler, which resets it to 10,000.
    if (!run('for (let i = 0; i < 100; i++) {}') || calls !== 1) return;
    const c1 = counterView()[at];
    if (!(c1 > 9000 && c1 < COUNTER_INIT)) return;
    const used = COUNTER_INIT - c1 + 1;
    // The same code again takes the same steps, without a handler call.
    if (!run('for (let i = 0; i < 100; i++) {}') || calls !== 0 || c1 - counterView()[at] !== used) return;
    // Lowering the counter brings the handler forward.
    counterView()[at] = 5;
    if (!run('for (let i = 0; i < 100; i++) {}') || calls !== 1) return;
    exact = true;
  } catch {
    exact = false;
  } finally {
    ctx?.dispose();
    ctxPtr = 0;
    allowance = Infinity;
  }
}

/** Runs a few representative calls so that V8 has compiled the engine before real deadlines apply. */
export function warmUp() {
  findCounter();
  const limits = { timeoutMs: 10_000, memoryBytes: 16 << 20, stackBytes: 256 << 10, maxOutputBytes: 1 << 16 };
  const progs = [
    'function f(xs, s) { return { a: xs.map((x) => x * 2).filter((x) => x % 3 !== 0).reduce((a, b) => a + b, 0), s: s.split("").reverse().join("") } }',
    'function f(xs, s) { const m = new Map(); for (const x of xs) m.set(x, (m.get(x) || 0) + 1); return [...m.keys()].sort((a, b) => a - b).concat([s.toUpperCase(), /a+/.test(s)]) }',
    'function f() { throw new Error("x") }',
    'function f( {',
  ];
  for (let i = 0; i < 30; i++) runJob(progs[i % progs.length], '[[3,1,2,3],"abc"]', limits);
  for (let i = 0; i < 10; i++) runTask(progs[i % 2], ['[[3,1,2,3],"abc"]', '[[1],"x"]'], limits, 100_000, i % 4 < 2 ? 'task' : 'call');
  // Calibrate interpreter progress (steps) per millisecond on a busy loop (best of a few tries).
  let best = 0;
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    runTask('function f() { for (;;) {} }', ['[]'], { ...limits, timeoutMs: 20 });
    best = Math.max(best, lastSteps / Math.max(1, performance.now() - t));
  }
  stepsPerMs = best;
  dropRuntime();
}


/** Interpreter progress per millisecond measured by warmUp(), and whether steps are counted exactly (for diagnostics). */
export const calibration = () => ({ stepsPerMs, exact });
