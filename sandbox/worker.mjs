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
import { PRELUDE } from './prelude.mjs';

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
const RECYCLE_EVERY = 4000;
const DETAIL_MAX = 300;

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

function newRuntime() {
  if (rt) {
    try {
      rt.dispose();
    } catch {
      // a runtime in a bad state is dropped with its module
      mod = null;
    }
  }
  rt = null;
  rtUses = 0;
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
    const code = `${PRELUDE}(${JSON.stringify(program)},${JSON.stringify(argsJson)},${limits.maxOutputBytes | 0})`;
    const res = ctx.evalCode(code, 'task.js');
    if (res.error) {
      dirty = true;
      out = escaped(ctx, r, res.error, limits);
      res.error.dispose();
    } else {
      const h = res.value;
      const s = ctx.typeof(h) === 'string' ? ctx.getString(h) : null;
      h.dispose();
      out = decode(s, limits);
    }
  } finally {
    if (interrupted) dirty = true;
    if (r.hasPendingJob()) dirty = true; // promise jobs hold the context: drop the whole runtime
    try {
      ctx.dispose();
    } catch {
      dirty = true;
    }
  }
  if (dirty || rtUses >= RECYCLE_EVERY) newRuntime();
  return out;
}

/** The prelude's answer: 'v' + JSON, or 'e' + reason + '\n' + detail. */
function decode(s, limits) {
  if (s === null) return ['non-serialisable', 'sandbox returned no string'];
  if (s.charCodeAt(0) === 118 /* v */) {
    const json = s.slice(1);
    if (json.length > limits.maxOutputBytes || Buffer.byteLength(json, 'utf8') > limits.maxOutputBytes) {
      return ['output-too-large', `result exceeds ${limits.maxOutputBytes} bytes`];
    }
    try {
      JSON.parse(json);
    } catch {
      return ['non-serialisable', 'result is not valid JSON'];
    }
    return [0, json];
  }
  const nl = s.indexOf('\n');
  const reason = nl < 0 ? s.slice(1) : s.slice(1, nl);
  const detail = nl < 0 ? '' : s.slice(nl + 1);
  return [REASONS.has(reason) ? reason : 'runtime-error', clip(detail)];
}

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

/** An exception escaped the prelude's own try/catch: an interrupt, or the limits hit in the catch. */
function escaped(ctx, r, errHandle, limits) {
  if (interrupted) return ['timeout', `exceeded the ${limits.timeoutMs} ms deadline`];
  // Give the inspection a little room of its own.
  r.setMemoryLimit(limits.memoryBytes + (1 << 20));
  deadline = performance.now() + 20;
  let msg = '';
  try {
    const m = ctx.getProp(errHandle, 'message');
    if (ctx.typeof(m) === 'string') msg = ctx.getString(m);
    m.dispose();
  } catch {
    msg = '';
  }
  if (/out of memory|string too long/i.test(msg)) return ['memory', `exceeded the ${limits.memoryBytes} byte memory cap`];
  if (/stack overflow|call stack/i.test(msg)) return ['stack', 'stack overflow'];
  if (interrupted) return ['timeout', `exceeded the ${limits.timeoutMs} ms deadline`];
  return ['runtime-error', clip(msg || 'uncaught exception')];
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

async function main() {
  await loadModule();
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
