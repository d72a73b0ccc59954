// The engine in the calling thread, for benchmarks that profile it (bench/sandbox-hostile-profile.ts):
// the same start-up as a pool's worker thread (worker.mjs), and jobs run directly, so that a CPU
// profile of this thread shows where a job's time goes. Never used by the house (testing.ts only).
import { freezeClock } from './clock.mjs';
import { runTask } from './engine.mjs';
import { copiedBytes } from './readout.mjs';
import { loadModule } from './runtime.mjs';
import { lastJobNative, lastJobSteps } from './steps.mjs';
import { warmUp } from './warmup.mjs';

/** Loads and warms the engine in this thread (freezing this thread's clock, as a worker's is). */
export async function startInThread() {
  freezeClock();
  await loadModule();
  warmUp();
}

/** One job (a task's calls in one fresh context) in this thread: its results and meters. */
export function runInThread(program, argsList, limits, budget) {
  const results = runTask(program, argsList, limits, budget, 'task');
  return { results, steps: lastJobSteps(), native: lastJobNative(), copied: copiedBytes() };
}
