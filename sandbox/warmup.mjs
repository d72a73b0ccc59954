// A worker thread's start-up, before it says it is ready: find QuickJS's interrupt counter (so that
// steps are counted exactly), run a few representative calls so that V8 has compiled the engine
// before real work arrives, and measure interpreter progress per millisecond (for diagnostics:
// deadlines use a fixed rate, steps.mjs, never this measurement, which depends on the load).
import { INTRINSICS, runJob, runTask } from './engine.mjs';
import { dropRuntime, runtime } from './runtime.mjs';
import { findCounter, lastJobSteps, setStepsPerMs } from './steps.mjs';

export function warmUp() {
  const r = runtime();
  r.setMemoryLimit(16 << 20);
  findCounter(() => r.newContext({ intrinsics: INTRINSICS }));
  const limits = { timeoutMs: 10_000, memoryBytes: 16 << 20, stackBytes: 256 << 10, maxOutputBytes: 1 << 16 };
  const progs = [
    'function f(xs, s) { return { a: xs.map((x) => x * 2).filter((x) => x % 3 !== 0).reduce((a, b) => a + b, 0), s: s.split("").reverse().join("") } }',
    'function f(xs, s) { const m = new Map(); for (const x of xs) m.set(x, (m.get(x) || 0) + 1); return [...m.keys()].sort((a, b) => a - b).concat([s.toUpperCase(), /a+/.test(s)]) }',
    'function f() { throw new Error("x") }',
    'function f( {',
  ];
  for (let i = 0; i < 30; i++) runJob(progs[i % progs.length], '[[3,1,2,3],"abc"]', limits);
  for (let i = 0; i < 10; i++)
    runTask(progs[i % 2], ['[[3,1,2,3],"abc"]', '[[1],"x"]'], limits, 100_000, i % 4 < 2 ? 'task' : 'call');
  // Calibrate interpreter progress (steps) per millisecond on a busy loop (best of a few tries).
  let best = 0;
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    runTask('function f() { for (;;) {} }', ['[]'], { ...limits, timeoutMs: 20 });
    best = Math.max(best, lastJobSteps() / Math.max(1, performance.now() - t));
  }
  setStepsPerMs(best);
  dropRuntime();
}
