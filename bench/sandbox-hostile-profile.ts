// Where a hostile answer's time goes (bench/results/sandbox-hostile.md): each kind of the hostile mix
// (sandbox-hostile.ts), and a right answer, verified N times against the mix's tasks by the engine
// in this thread (no pool), with V8's CPU profiler on, each kind on its own. Self time is summed by
// where the code lives: inside QuickJS (the WebAssembly module), the glue that moves handles and
// strings in and out of it (quickjs-emscripten), the engine's reading out and serialising
// (readout.mjs, result.mjs), the rest of the engine, V8's GC, and other JS. Also µs per answer
// (wall and this process's CPU) and the most steps, native units and bytes copied out one answer
// took. The stages beyond one engine (the pool's messages, the queue, the reply) are what the mix's
// two paths differ by (sandbox-hostile.ts).
//   npx tsx bench/sandbox-hostile-profile.ts [N]     (COGEN_SANDBOX_UNMETERED=1: the module as shipped)
import { Session } from 'node:inspector/promises';
import { loadavg } from 'node:os';
import { createSandbox, normaliseProgram, resolveLimits, DEFAULT_LIMITS } from '../sandbox/index.js';
import { runInThread, startInThread } from '../sandbox/testing.js';
import { KINDS, referenceTasks } from './sandbox-hostile.js';

const N = Number(process.argv[2] ?? 200);

interface Node {
  id: number;
  callFrame: { functionName: string; url: string };
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const PLACES = ['QuickJS (wasm)', 'glue (in/out)', 'reading out', 'engine', 'V8 GC', 'other JS'] as const;

function place(n: Node): (typeof PLACES)[number] | null {
  const { url, functionName: f } = n.callFrame;
  if (url.startsWith('wasm://') || f.startsWith('wasm-function') || f.startsWith('$')) return 'QuickJS (wasm)';
  if (url.includes('quickjs-emscripten') || url.includes('emscripten-module')) return 'glue (in/out)';
  if (/sandbox\/(readout|result)\.mjs/.test(url)) return 'reading out';
  if (url.includes('/sandbox/')) return 'engine';
  if (f === '(garbage collector)') return 'V8 GC';
  // (the inspector's own dispatch: stopping the profiler)
  if (f === '(idle)' || f === '(program)' || f === '(root)' || (f === 'dispatch' && url === '')) return null;
  return 'other JS';
}

/** Self time (ms) by place. */
function byPlace(p: Profile): Record<string, number> {
  const dt = new Map<number, number>();
  p.samples.forEach((s, i) => dt.set(s, (dt.get(s) ?? 0) + (p.timeDeltas[i] ?? 0)));
  const out: Record<string, number> = Object.fromEntries(PLACES.map((k) => [k, 0]));
  for (const n of p.nodes) {
    const k = place(n);
    if (k) out[k]! += (dt.get(n.id) ?? 0) / 1000;
  }
  return out;
}

async function main(): Promise<void> {
  const sandbox = await createSandbox({ workers: 1 });
  const tasks = await referenceTasks(sandbox);
  await sandbox.close();
  await startInThread();
  const limits = resolveLimits(DEFAULT_LIMITS);
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  console.log(
    `where the time goes: ${N} answers a kind, one engine in this thread${process.env.COGEN_SANDBOX_UNMETERED === '1' ? ' (unmetered)' : ''}; load ${loadavg()[0]!.toFixed(2)}`,
  );
  console.log(
    `kind        µs wall  µs cpu   ${PLACES.map((p) => p.padEnd(15)).join('')}most steps / native / copied out`,
  );
  for (const k of [{ kind: 'right', answer: '' }, ...KINDS]) {
    const jobs = Array.from({ length: N }, (_, i) => {
      const task = tasks[i % tasks.length]!;
      const n = normaliseProgram(`${k.answer || task.program}\n// ${i}`);
      if (!n.ok) throw new Error(n.reason);
      const args = [...task.visible, ...task.hidden].map((e) => JSON.stringify(e.input));
      return { program: n.program, args, budget: task.budget };
    });
    runInThread(jobs[0]!.program, jobs[0]!.args, limits, jobs[0]!.budget);
    const most = { steps: 0, native: 0, copied: 0 };
    await session.post('Profiler.start');
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (const j of jobs) {
      const m = runInThread(j.program, j.args, limits, j.budget);
      most.steps = Math.max(most.steps, m.steps);
      most.native = Math.max(most.native, m.native);
      most.copied = Math.max(most.copied, m.copied);
    }
    const wall = ((performance.now() - t0) * 1000) / N;
    const cpu = process.cpuUsage(cpu0);
    const { profile } = (await session.post('Profiler.stop')) as { profile: Profile };
    const places = byPlace(profile);
    const total = Object.values(places).reduce((a, b) => a + b, 0);
    console.log(
      `${k.kind.padEnd(11)} ${wall.toFixed(0).padStart(7)} ${((cpu.user + cpu.system) / N).toFixed(0).padStart(7)}   ` +
        PLACES.map((p) => `${((100 * places[p]!) / total).toFixed(0)} %`.padEnd(15)).join('') +
        `${most.steps} / ${most.native} / ${most.copied} B`,
    );
  }
}

await main();
