// One sandbox worker thread: a QuickJS-in-WASM runtime that runs batches of jobs, each in a fresh
// context. Plain JavaScript on purpose: worker threads do not inherit tsx's loader, so this file
// must load as-is under node, tsx and vitest alike.
//
// Protocol (see pool.ts):
//   in : { t: 'run', id, limits: {timeoutMs, memoryBytes, stackBytes, maxOutputBytes},
//          jobs: [program, argsJson][] }
//   out: { t: 'ready' } once, then { t: 'done', id, results: ([0, json] | [reason, detail])[] }
// Progress: a shared Int32Array [batch id, index of the job now running] so the pool can tell
// which job wedged the thread if it has to kill it.
import { parentPort, workerData } from 'node:worker_threads';
import { newQuickJSWASMModuleFromVariant } from 'quickjs-emscripten-core';
import variant from '@jitl/quickjs-wasmfile-release-sync';
import { callScript } from './prelude.mjs';

// Determinism. The WASM module reads the clock and the time zone through this thread's global
// Date (gettimeofday, localtime, tzset), so freezing it here freezes QuickJS's Date.now(), new
// Date(), local time (UTC) and the seed of Math.random (taken from the clock when a context is
// made), at no cost per call. Nothing in this worker needs the real wall clock: deadlines use
// performance.now().
const FIXED_NOW = Date.UTC(2025, 0, 1);
{
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
const REASONS = new Set([
  'syntax',
  'runtime-error',
  'timeout',
  'memory',
  'stack',
  'output-too-large',
  'non-serialisable',
  'forbidden',
  'no-function',
]);

const progress = workerData && workerData.progress ? new Int32Array(workerData.progress) : new Int32Array(2);

let mod = null;
let rt = null;
let rtUses = 0;
let deadline = 0;
let interrupted = false;

function onInterrupt() {
  if (performance.now() > deadline) {
    interrupted = true;
    return true;
  }
  return false;
}

async function loadModule() {
  mod = await newQuickJSWASMModuleFromVariant(variant);
}

function dropRuntime() {
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

const clip = (s) => (s.length > DETAIL_MAX ? s.slice(0, DETAIL_MAX) + '…' : s);

/** Runs one job in a fresh context; returns [0, json] or [reason, detail]. */
function runJob(program, argsJson, limits) {
  const r = runtime();
  r.setMemoryLimit(limits.memoryBytes);
  r.setMaxStackSize(limits.stackBytes);
  interrupted = false;
  deadline = performance.now() + limits.timeoutMs;
  rtUses++;
  const ctx = r.newContext({ intrinsics: INTRINSICS });
  let dirty = false;
  let out;
  try {
    const res = ctx.evalCode(callScript(program, argsJson, limits.maxOutputBytes), 'task.js');
    if (res.error) {
      out = failure(ctx, r, res.error, limits);
      res.error.dispose();
      if (out[0] === 'memory' || out[0] === 'stack' || out[0] === 'timeout') dirty = true;
    } else {
      const h = res.value;
      const s = ctx.typeof(h) === 'string' ? ctx.getString(h) : null;
      h.dispose();
      out = success(s, limits);
    }
  } finally {
    if (interrupted) dirty = true;
    // Pending promise jobs keep the context alive inside the runtime: drop the whole runtime.
    if (r.hasPendingJob()) dirty = true;
    try {
      ctx.dispose();
    } catch {
      dirty = true;
    }
  }
  if (dirty || rtUses >= RECYCLE_EVERY) dropRuntime();
  return out;
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

/** Why a call failed: the exception that escaped the script, read carefully. */
function failure(ctx, r, err, limits) {
  if (interrupted) return ['timeout', `exceeded the ${limits.timeoutMs} ms deadline`];
  // Inspection may run the program's getters: give it a little room and time of its own.
  r.setMemoryLimit(limits.memoryBytes + (1 << 20));
  deadline = performance.now() + Math.min(limits.timeoutMs, 20);
  const phase = str(ctx, ctx.global, '__cogen_phase__');
  const type = ctx.typeof(err);
  let reason = 'runtime-error';
  let detail;
  if (type === 'string') {
    const s = ctx.getString(err);
    if (s.charCodeAt(0) === 1) {
      const nl = s.indexOf('\n');
      const named = s.slice(1, nl < 0 ? s.length : nl);
      if (REASONS.has(named)) return [named, clip(nl < 0 ? '' : s.slice(nl + 1))];
    }
    detail = `thrown: ${JSON.stringify(s)}`;
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

/** Runs jobs[start..] until done or until the engine must be reloaded; returns the next index. */
function runFrom(jobs, start, limits, results) {
  for (let i = start; i < jobs.length; i++) {
    Atomics.store(progress, 1, i);
    const job = jobs[i];
    try {
      results[i] = runJob(job[0], job[1], limits);
    } catch (e) {
      // A trap inside the WASM module (or a host-side stack overflow while calling into it):
      // the module may be corrupt, so it is rebuilt before the next job.
      results[i] = ['worker-crashed', clip(`engine failure: ${e && e.message ? e.message : String(e)}`)];
      rt = null;
      mod = null;
      return i + 1;
    }
  }
  return jobs.length;
}

/** Runs a few representative calls so that V8 has compiled the engine before real deadlines apply. */
function warmUp() {
  const limits = { timeoutMs: 10_000, memoryBytes: 16 << 20, stackBytes: 256 << 10, maxOutputBytes: 1 << 16 };
  const progs = [
    'function f(xs, s) { return { a: xs.map((x) => x * 2).filter((x) => x % 3 !== 0).reduce((a, b) => a + b, 0), s: s.split("").reverse().join("") } }',
    'function f(xs, s) { const m = new Map(); for (const x of xs) m.set(x, (m.get(x) || 0) + 1); return [...m.keys()].sort((a, b) => a - b).concat([s.toUpperCase(), /a+/.test(s)]) }',
    'function f() { throw new Error("x") }',
    'function f( {',
  ];
  for (let i = 0; i < 30; i++) runJob(progs[i % progs.length], '[[3,1,2,3],"abc"]', limits);
  dropRuntime();
}

async function main() {
  await loadModule();
  warmUp();
  parentPort.on('message', async (msg) => {
    if (msg.t !== 'run') return;
    const { id, jobs, limits } = msg;
    const results = new Array(jobs.length);
    Atomics.store(progress, 0, id);
    let next = 0;
    while (next < jobs.length) {
      if (!mod) await loadModule();
      next = runFrom(jobs, next, limits, results);
    }
    parentPort.postMessage({ t: 'done', id, results });
  });
  parentPort.postMessage({ t: 'ready' });
}

main().catch((e) => {
  // Cannot even load the engine: let the pool see an error and replace this thread.
  throw e;
});
