// One sandbox worker thread: the engine (engine.mjs, whose top comment maps its files) behind a
// message loop. Plain JavaScript, so that it loads in a worker thread under node, tsx and vitest
// alike; pool.ts starts it from its file URL, and it finds its siblings by relative imports.
//
// Protocol (see pool.ts):
//   in : { t: 'run', id, limits: {timeoutMs, memoryBytes, stackBytes, maxOutputBytes},
//          jobs: [program, argsJson[], budget?, per?][] }   (a job = one task: one fresh context;
//          budget: steps for the job ('task') or for each call ('call'), see engine.mjs runTask)
//   out: { t: 'ready' } once (after a warm-up), then
//        { t: 'done', id, results: ([0, json] | [reason, detail])[][], steps: number[],
//          native: number[], copied: number[] } per message (what each job spent, in all its
//          contexts: steps, native work in meter.mjs's units, bytes of text copied out of QuickJS)
// Progress: a shared Int32Array [message id, index of the job now running, step counter bumped by
// the engine before every deadline it arms], so that the pool can tell a slow task from a wedged
// thread, and which job wedged it if it has to kill it.
import { parentPort, workerData } from 'node:worker_threads';
import { freezeClock } from './clock.mjs';
import { runTask } from './engine.mjs';
import { clip } from './readout.mjs';
import { engineLoaded, loadModule, resetEngine } from './runtime.mjs';
import { copiedBytes } from './readout.mjs';
import { lastJobNative, lastJobSteps, setClockForTest, setProgress } from './steps.mjs';
import { warmUp } from './warmup.mjs';

const progress = new Int32Array(workerData.progress);
setProgress(progress);
// Tests only (createSandbox's clockJumpsMs): the safety net's clock jumps forward by the next of
// these at every read, as a thread starved of CPU sees it.
if (Array.isArray(workerData.clockJumpsMs) && workerData.clockJumpsMs.length > 0) {
  const jumps = workerData.clockJumpsMs;
  let offset = 0;
  let i = 0;
  setClockForTest(() => performance.now() + (offset += jumps[i++ % jumps.length]));
}

/** Runs jobs[start..] until done or until the engine must be reloaded; returns the next index. */
function runFrom(jobs, start, limits, results, { steps, native, copied }) {
  for (let i = start; i < jobs.length; i++) {
    Atomics.store(progress, 1, i);
    const job = jobs[i];
    try {
      results[i] = runTask(job[0], job[1], limits, job[2], job[3]);
      steps[i] = lastJobSteps();
      native[i] = lastJobNative();
      copied[i] = copiedBytes();
    } catch (e) {
      // A trap inside the WASM module (or a host-side stack overflow while calling into it):
      // the module may be corrupt, so it is rebuilt before the next job.
      const failed = ['worker-crashed', clip(`engine failure: ${e && e.message ? e.message : String(e)}`)];
      results[i] = job[1].map(() => failed);
      steps[i] = lastJobSteps();
      native[i] = lastJobNative();
      copied[i] = copiedBytes();
      resetEngine();
      return i + 1;
    }
  }
  return jobs.length;
}

async function main() {
  freezeClock();
  await loadModule();
  warmUp();
  parentPort.on('message', async (msg) => {
    if (msg.t !== 'run') return;
    const { id, jobs, limits } = msg;
    const results = new Array(jobs.length);
    const meters = { steps: [], native: [], copied: [] };
    for (const k in meters) meters[k] = new Array(jobs.length).fill(0);
    Atomics.store(progress, 0, id);
    let next = 0;
    while (next < jobs.length) {
      if (!engineLoaded()) await loadModule();
      next = runFrom(jobs, next, limits, results, meters);
    }
    parentPort.postMessage({ t: 'done', id, results, ...meters });
  });
  parentPort.postMessage({ t: 'ready' });
}

main().catch((e) => {
  // Cannot even load the engine: let the pool see an error and replace this thread.
  throw e;
});
