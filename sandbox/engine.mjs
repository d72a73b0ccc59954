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

/** Most characters of arguments (JSON) parsed with one JSON.parse inside the context. */
const BATCH_ARGS = 64 * 1024;

const isLimit = (reason) => reason === 'timeout' || reason === 'memory' || reason === 'stack';

/**
 * Runs the calls of one task (argsList: the JSON text of each call's argument list) in one fresh
 * context and returns one [0, json] or [reason, detail] per call.
 *
 * The host drives the context directly through the engine's API, with no wrapper script to parse
 * (parsing is most of what a context costs after creating it): right after the context is made,
 * before the program runs, it takes handles to the builtins it needs (JSON.parse, JSON.stringify,
 * Reflect.apply, Array.isArray, Object.getPrototypeOf, Object.prototype), so a program that
 * replaces them changes only what it sees itself. Then it evaluates the program once, parses the
 * arguments of a batch of calls with one JSON.parse, and for each call arms its own deadline, calls
 * f, and serialises the result: numbers and booleans on the host, strings with JSON.stringify,
 * objects with JSON.stringify and the result-rule replacer (compiled once per context, on the
 * first object result).
 *
 * A limit failure (timeout, memory, stack) counts only for a call that ran first in a fresh
 * context, as it would have alone; a call that met a limit after others ran in its context is
 * retried from a fresh runtime. Other failures (runtime-error, non-serialisable, …) are recorded
 * and the next call continues in the same context.
 */
export function runTask(program, argsList, limits) {
  const n = argsList.length;
  const results = new Array(n);
  let k = 0;
  let retried = false;
  while (k < n) {
    const next = runInContext(program, argsList, k, limits, results, retried);
    // The same call again: it met a limit while the thread was starved; one more try, then it counts.
    retried = next === k;
    k = next;
  }
  return results;
}

/** One fresh context: settles calls from k on; returns the index of the first call it did not settle. */
function runInContext(program, argsList, k, limits, results, retried) {
  const n = argsList.length;
  const r = runtime();
  r.setMemoryLimit(limits.memoryBytes);
  r.setMaxStackSize(limits.stackBytes);
  rtUses++;
  const ctx = r.newContext({ intrinsics: INTRINSICS });
  const held = [];
  const hold = (h) => (held.push(h), h);
  let dirty = false;
  let ran = 0; // calls run in this context
  /** A failure at call k: record it (→ k + 1), or retry k in a fresh runtime (→ k). */
  const fail = (out) => {
    if (isLimit(out[0]) || interrupted) dirty = true;
    if (isLimit(out[0])) {
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
    let replacer = null;

    arm(limits.timeoutMs);
    const res = ctx.evalCode(markProgram(program), 'task.js');
    if (res.error) {
      const out = failure(ctx, r, res.error, limits);
      res.error.dispose();
      if (isLimit(out[0]) || interrupted) dirty = true;
      if (out[0] === 'timeout' && !retried && starved(limits)) return k;
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
      const out = interrupted ? ['timeout', `exceeded the ${limits.timeoutMs} ms deadline`] : SUFFIX_CODES.f;
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
        const out = failure(ctx, r, pr.error, limits, 0);
        pr.error.dispose();
        r.setMemoryLimit(limits.memoryBytes);
        return fail(out);
      }
      const batch = pr.value;
      try {
        for (let j = 0; k < b; j++) {
          arm(limits.timeoutMs);
          const args = ctx.getProp(batch, j);
          const cr = ctx.callFunction(apply, ctx.undefined, f, ctx.undefined, args);
          args.dispose();
          if (cr.error) {
            const out = failure(ctx, r, cr.error, limits, 2);
            cr.error.dispose();
            r.setMemoryLimit(limits.memoryBytes);
            const next = fail(out);
            if (next === k || dirty) return next;
            k = next;
            ran++;
            continue;
          }
          const v = cr.value;
          const late = interrupted;
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
                out = failure(ctx, r, sr.error, limits, 3);
                sr.error.dispose();
                r.setMemoryLimit(limits.memoryBytes);
              } else {
                const st = ctx.typeof(sr.value) === 'string' ? ctx.getString(sr.value) : null;
                sr.value.dispose();
                out = st === null ? SUFFIX_CODES.u : success(st, limits);
              }
            }
          } finally {
            v.dispose();
          }
          // The deadline passed during the call even though it returned (an async f turns the
          // interrupt into a rejected promise): a timeout all the same.
          if (late || interrupted) out = ['timeout', `exceeded the ${limits.timeoutMs} ms deadline`];
          if (out[0] !== 0) {
            const next = fail(out);
            if (next === k || dirty) return next;
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
    if (interrupted) dirty = true;
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

/** Whether the deadline passed after the job did very little work (a CPU-starved thread). */
const starved = (limits) => calls < Math.max(2, callsPerMs * limits.timeoutMs * 0.5);

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
