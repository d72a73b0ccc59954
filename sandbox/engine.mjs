// The engine of one sandbox worker thread: a QuickJS-in-WASM runtime that runs jobs, each in a
// fresh context. Plain JavaScript on purpose: worker threads do not inherit tsx's loader, so this
// file must load as-is under node, tsx and vitest alike. worker.mjs wraps it in a message loop.
import { newQuickJSWASMModuleFromVariant } from 'quickjs-emscripten-core';
import variant from '@jitl/quickjs-wasmfile-release-sync';
import { HELPER, SUFFIX_CODES, markProgram } from './prelude.mjs';

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
const INTRINSICS = {
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

let mod = null;
let rt = null;
let rtUses = 0;
let deadline = 0;
let interrupted = false;
// The deadline is wall-clock time. QuickJS calls the interrupt handler every ~10k interpreter steps;
// the number of calls during a job measures the work it did. A job that times out after doing
// almost no work (fewer calls than half a deadline of busy-looping allows, as calibrated at
// start-up) was starved of CPU by a busy machine rather than slow, and is run once more.
let calls = 0;
let callsPerMs = 0;

function onInterrupt() {
  calls++;
  if (performance.now() > deadline) {
    interrupted = true;
    return true;
  }
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
  calls = 0;
  deadline = performance.now() + timeoutMs;
}

export async function loadModule() {
  mod = await newQuickJSWASMModuleFromVariant(variant);
}

export const engineLoaded = () => mod !== null;

/** Forgets the module and runtime after a trap: the next loadModule() starts from scratch. */
export function resetEngine() {
  rt = null;
  mod = null;
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

/** Most characters of arguments (JSON) handed to the helper in one batch. */
const BATCH_ARGS = 64 * 1024;

const isLimit = (reason) => reason === 'timeout' || reason === 'memory' || reason === 'stack';

/**
 * Runs the calls of one task (argsList: the JSON text of each call's argument list) in one fresh
 * context: the helper and the program are evaluated once, then the calls run in order, in batches,
 * each batch under one deadline of limits.timeoutMs (so every call in a batch that finishes ran
 * within its own deadline). Returns one [0, json] or [reason, detail] per call.
 *
 * A limit failure (timeout, memory, stack) counts only for a call that ran first in a fresh context
 * with a deadline of its own, as it would have alone; a call that met a limit after others ran is
 * retried from a fresh runtime. Other failures (runtime-error, non-serialisable, …) are recorded and
 * the next call continues in the same context.
 */
export function runTask(program, argsList, limits) {
  const n = argsList.length;
  const results = new Array(n);
  let k = 0;
  let retried = false;
  let helperFailures = 0;
  while (k < n) {
    const step = runInContext(program, argsList, k, limits, results, retried);
    if (step.helperFailed) {
      if (++helperFailures < 3) continue;
      for (let i = k; i < n; i++) results[i] = ['worker-crashed', 'the sandbox helper could not be loaded'];
      break;
    }
    // The same call again: it met a limit while the thread was starved; one more try, then it counts.
    retried = step.next === k;
    k = step.next;
  }
  return results;
}

/** One fresh context: runs calls from k on; returns { next } (the first call it did not settle). */
function runInContext(program, argsList, k, limits, results, retried) {
  const n = argsList.length;
  const r = runtime();
  r.setMemoryLimit(limits.memoryBytes);
  r.setMaxStackSize(limits.stackBytes);
  rtUses++;
  const ctx = r.newContext({ intrinsics: INTRINSICS });
  let dirty = false;
  let helper = null;
  try {
    // Our own code: a generous deadline (a loaded machine can stall a thread for a while).
    arm(Math.max(1000, limits.timeoutMs));
    const h = ctx.evalCode(HELPER, 'cogen.js');
    if (h.error) {
      h.error.dispose();
      dirty = true;
      return { next: k, helperFailed: true };
    }
    helper = h.value;
    arm(limits.timeoutMs);
    const res = ctx.evalCode(markProgram(program), 'task.js');
    if (res.error) {
      const out = failure(ctx, r, res.error, limits);
      res.error.dispose();
      r.setMemoryLimit(limits.memoryBytes);
      if (isLimit(out[0]) || interrupted) dirty = true;
      if (out[0] === 'timeout' && !retried && starved(limits)) return { next: k };
      // The program's top level runs the same way in every context: every call fails alike.
      for (let i = k; i < n; i++) results[i] = out;
      return { next: n };
    }
    res.value.dispose();
    let ran = 0; // calls run in this context
    while (k < n) {
      // A batch: calls k..b-1, their arguments as one JSON array.
      let b = k + 1;
      let size = argsList[k].length;
      while (b < n && size + argsList[b].length < BATCH_ARGS) size += argsList[b++].length;
      const batch = b === k + 1 ? '[' + argsList[k] + ']' : '[' + argsList.slice(k, b).join(',') + ']';
      let from = 0;
      let sHandle = ctx.newString(batch);
      while (k < b) {
        arm(limits.timeoutMs);
        const call = callHelper(ctx, helper, sHandle, from, limits.maxOutputBytes);
        if (sHandle) {
          sHandle.dispose();
          sHandle = null;
        }
        if (!call.error) {
          const text = ctx.getString(call.value);
          call.value.dispose();
          const parts = text.split('\n');
          for (const part of parts) results[k++] = success(part, limits);
          ran += parts.length;
          from += parts.length;
          continue;
        }
        // A call failed: which one, and in which phase (2: in f, 3: serialising its result)?
        const wasInterrupted = interrupted;
        const calls0 = calls;
        const [at, phase, done] = helperState(ctx, r, helper, limits);
        for (const part of done) results[k++] = success(part, limits);
        ran += done.length;
        from += done.length;
        interrupted = wasInterrupted;
        calls = calls0;
        const out = at < 0 ? ['worker-crashed', 'the sandbox helper lost its state'] : failure(ctx, r, call.error, limits, phase);
        call.error.dispose();
        r.setMemoryLimit(limits.memoryBytes);
        if (isLimit(out[0]) || interrupted || at < 0) dirty = true;
        if (isLimit(out[0]) || at < 0) {
          // Met a limit after other calls ran: retry it alone in a fresh runtime. Otherwise it
          // counts (after one more try if the deadline passed while the thread was starved).
          if (ran > 0 && at >= 0) return { next: k };
          if (out[0] === 'timeout' && !retried && starved(limits)) return { next: k };
          results[k++] = out;
          return { next: k };
        }
        if (out[0] === 'no-function') {
          for (let i = k; i < n; i++) results[i] = out;
          return { next: n };
        }
        results[k++] = out;
        ran++;
        from++;
        if (dirty) return { next: k };
      }
    }
    return { next: n };
  } finally {
    if (interrupted) dirty = true;
    if (helper) {
      try {
        helper.dispose();
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

/** Whether the deadline passed after the job did very little work (a CPU-starved thread). */
const starved = (limits) => calls < Math.max(2, callsPerMs * limits.timeoutMs * 0.5);

function callHelper(ctx, helper, sHandle, from, maxOut) {
  const a = sHandle ?? ctx.undefined;
  const fromH = ctx.newNumber(from);
  const mH = ctx.newNumber(maxOut);
  try {
    return ctx.callFunction(helper, ctx.undefined, a, fromH, mH);
  } finally {
    fromH.dispose();
    mH.dispose();
  }
}

/** After a failed helper call: [index of the failed call in its batch, phase, results before it]. */
function helperState(ctx, r, helper, limits) {
  r.setMemoryLimit(limits.memoryBytes + (1 << 20));
  arm(20);
  try {
    const q = ctx.newNumber(-1);
    const res = ctx.callFunction(helper, ctx.undefined, ctx.undefined, q);
    q.dispose();
    if (res.error) {
      res.error.dispose();
      return [-1, 0, []];
    }
    const s = ctx.getString(res.value);
    res.value.dispose();
    const c1 = s.indexOf(',');
    const c2 = s.indexOf(',', c1 + 1);
    const at = Number(s.slice(0, c1));
    const phase = Number(s.slice(c1 + 1, c2));
    const rest = s.slice(c2 + 1);
    return [at, phase, at > 0 ? rest.split('\n') : []];
  } catch {
    return [-1, 0, []];
  } finally {
    r.setMemoryLimit(limits.memoryBytes);
  }
}

function success(s, limits) {
  if (s === null) return ['non-serialisable', 'no JSON text came back'];
  if (s.length > limits.maxOutputBytes || (s.length * 3 > limits.maxOutputBytes && Buffer.byteLength(s, 'utf8') > limits.maxOutputBytes)) {
    return ['output-too-large', `result exceeds ${limits.maxOutputBytes} bytes`];
  }
  return [0, s];
}

function str(ctx, obj, key) {
  try {
    const h = ctx.getProp(obj, key);
    const v = ctx.typeof(h) === 'string' ? ctx.getString(h) : ctx.typeof(h) === 'number' ? ctx.getNumber(h) : undefined;
    h.dispose();
    return v;
  } catch {
    return undefined;
  }
}

function isNull(ctx, h) {
  try {
    return ctx.dump(h) === null;
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
function failure(ctx, r, err, limits, callPhase) {
  if (interrupted) return ['timeout', `exceeded the ${limits.timeoutMs} ms deadline`];
  // Inspection may run the program's getters: give it a little room and time of its own.
  r.setMemoryLimit(limits.memoryBytes + (1 << 20));
  arm(Math.min(limits.timeoutMs, 20));
  const phase = callPhase ?? str(ctx, ctx.global, '__cogen_phase__');
  const type = ctx.typeof(err);
  let reason = 'runtime-error';
  let detail;
  if (type === 'string') {
    const s = ctx.getString(err);
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
    const name = str(ctx, err, 'name');
    const message = str(ctx, err, 'message');
    if (interrupted) return ['timeout', `exceeded the ${limits.timeoutMs} ms deadline`];
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


/** Runs a few representative calls so that V8 has compiled the engine before real deadlines apply. */
export function warmUp() {
  const limits = { timeoutMs: 10_000, memoryBytes: 16 << 20, stackBytes: 256 << 10, maxOutputBytes: 1 << 16 };
  const progs = [
    'function f(xs, s) { return { a: xs.map((x) => x * 2).filter((x) => x % 3 !== 0).reduce((a, b) => a + b, 0), s: s.split("").reverse().join("") } }',
    'function f(xs, s) { const m = new Map(); for (const x of xs) m.set(x, (m.get(x) || 0) + 1); return [...m.keys()].sort((a, b) => a - b).concat([s.toUpperCase(), /a+/.test(s)]) }',
    'function f() { throw new Error("x") }',
    'function f( {',
  ];
  for (let i = 0; i < 30; i++) runJob(progs[i % progs.length], '[[3,1,2,3],"abc"]', limits);
  // Calibrate interpreter progress per millisecond on a busy loop (best of a few tries).
  let best = 0;
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    runInContext('function f() { for (;;) {} }', ['[]'], 0, { ...limits, timeoutMs: 20 }, [], true);
    best = Math.max(best, calls / Math.max(1, performance.now() - t));
  }
  callsPerMs = best;
  dropRuntime();
}


/** Interpreter progress per millisecond measured by warmUp() (for diagnostics). */
export const calibration = () => ({ callsPerMs });
