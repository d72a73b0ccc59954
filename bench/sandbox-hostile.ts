// The hostile mix of bench:sandbox (bench/results/sandbox-hostile.md): see bench/sandbox.ts's
// header for what it measures. `npm run bench:sandbox -- --hostile` runs only this part and keeps
// the other rows of the results file.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { newQuickJSWASMModuleFromVariant } from 'quickjs-emscripten-core';
import variant from '@jitl/quickjs-wasmfile-release-sync';
import { createSandbox, verifyMany } from '../sandbox/index.js';
import { verifyManyMetered } from '../sandbox/testing.js';
import type { Sandbox } from '../sandbox/index.js';
import type { Task } from '../core/task.js';
import { createRng } from '../core/rng.js';
import { families, generateTask } from '../generators/index.js';
import { INTRINSICS } from '../sandbox/testing.js';
import { median } from './stats.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

// ---------------------------------------------------------------- the hostile mix
const HOSTILE_KINDS: { kind: string; answer: string }[] = [
  { kind: 'loop', answer: 'function f(a){ for(;;){} }' },
  { kind: 'string', answer: "function f(a){ let s=''; for(let i=0;i<1e9;i++) s+='x'; return s }" },
  { kind: 'throw', answer: "function f(a){ throw new Error('x'.repeat(1e7)) }" },
];
const HOSTILE_TASKS = 32;
const HOSTILE_ANSWERS = 256;

interface HostileRow {
  kind: string;
  /** Median verifications/s, and the median and range of (this ÷ clean of the same round). */
  rate: number;
  ratio: number;
  ratioMin: number;
  ratioMax: number;
  /** One answer alone, against each task: wall ms (worst, median); the worst one's budget and steps spent. */
  worstMs: number;
  medianMs: number;
  budget: number;
  steps: number;
  /** The budgets over the tasks (smallest, largest). */
  budgetMin: number;
  budgetMax: number;
  reason: string;
}

export async function hostileMix(sandbox: Sandbox): Promise<{
  rows: HostileRow[];
  clean: number;
  rounds: number[][];
  reset: { contextMicros: number; runtimeMicros: number };
}> {
  const tasks: Task[] = [];
  for (let i = 0; tasks.length < HOSTILE_TASKS; i++) {
    const fam = families[i % families.length]!;
    tasks.push(
      await generateTask(sandbox, {
        family: fam.id,
        level: i % Math.min(fam.levels, 4),
        type: 'induction',
        rng: createRng(`bench-hostile-${i}`),
      }),
    );
  }
  // Distinct texts (verifyMany verifies identical answers to a task once).
  const batch = (bad: string | null) =>
    Array.from({ length: HOSTILE_ANSWERS }, (_, i) => {
      const task = tasks[i % HOSTILE_TASKS]!;
      return { task, answer: `${bad !== null && i % 10 === 3 ? bad : task.program}\n// answer ${i}` };
    });
  const clean = batch(null);
  const mixes = HOSTILE_KINDS.map((k) => ({ ...k, items: batch(k.answer) }));
  const rate = async (items: { task: Task; answer: string }[], check: boolean): Promise<number> => {
    let n = 0;
    const t0 = performance.now();
    do {
      const vs = await verifyMany(sandbox, items);
      if (check)
        vs.forEach((v, i) => {
          if (v.reward !== 1) throw new Error(`a right answer failed: ${items[i]!.answer.slice(0, 80)}: ${v.reason}`);
        });
      n += items.length;
    } while (performance.now() - t0 < 1000 * SECONDS);
    return n / ((performance.now() - t0) / 1000);
  };
  await rate(clean, true);
  const rounds: number[][] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const row = [await rate(clean, true)];
    for (const m of mixes) row.push(await rate(m.items, false));
    rounds.push(row);
    process.stderr.write(
      `  hostile round ${r + 1}: clean ${row[0]!.toFixed(0)}/s, ${mixes.map((m, k) => `${m.kind} ${row[k + 1]!.toFixed(0)}/s`).join(', ')}\n`,
    );
  }
  const rows: HostileRow[] = [];
  for (const [k, m] of mixes.entries()) {
    const ratios = rounds.map((row) => row[k + 1]! / row[0]!);
    const ms: number[] = [];
    const budgets: number[] = [];
    let worst = { ms: -1, budget: 0, steps: 0, reason: '' };
    for (const [j, task] of tasks.entries()) {
      const t0 = performance.now();
      const [v] = await verifyManyMetered(sandbox, [{ task, answer: `${m.answer}\n// alone ${j}` }]);
      const took = performance.now() - t0;
      ms.push(took);
      budgets.push(v!.budget ?? 0);
      if (took > worst.ms)
        worst = { ms: took, budget: v!.budget ?? 0, steps: v!.steps ?? 0, reason: v!.verdict.reason ?? '' };
    }
    rows.push({
      kind: m.kind,
      rate: median(rounds.map((row) => row[k + 1]!)),
      ratio: median(ratios),
      ratioMin: Math.min(...ratios),
      ratioMax: Math.max(...ratios),
      worstMs: worst.ms,
      medianMs: median(ms),
      budget: worst.budget,
      steps: worst.steps,
      budgetMin: Math.min(...budgets),
      budgetMax: Math.max(...budgets),
      reason: worst.reason.slice(0, 50),
    });
  }
  return { rows, clean: median(rounds.map((row) => row[0]!)), rounds, reset: await resetMicros() };
}

export function hostileTable(h: Awaited<ReturnType<typeof hostileMix>>): string {
  return [
    `hostile mix: ${HOSTILE_ANSWERS} induction answers for ${HOSTILE_TASKS} tasks, 10 % of one bad kind; clean ${h.clean.toFixed(0)} verif/s (median of ${h.rounds.length} rounds)`,
    `kind      verif/s   ÷clean (median, range)   one answer: worst ms (median)   its budget / steps spent   budgets over tasks   reason`,
    ...h.rows.map(
      (r) =>
        `${r.kind.padEnd(8)} ${r.rate.toFixed(0).padStart(8)}   ${(r.ratio * 100).toFixed(0).padStart(4)}% (${(r.ratioMin * 100).toFixed(0)}–${(r.ratioMax * 100).toFixed(0)} %)      ` +
        `${r.worstMs.toFixed(1).padStart(8)} (${r.medianMs.toFixed(1)})            ${`${r.budget} / ${r.steps}`.padStart(22)}   ${`${r.budgetMin}–${r.budgetMax}`.padStart(18)}   ${r.reason}`,
    ),
    `target: each kind ≥ 25 % of clean · reset: fresh context ${h.reset.contextMicros.toFixed(0)} µs, fresh runtime + context ${h.reset.runtimeMicros.toFixed(0)} µs`,
  ].join('\n');
}

/** µs for a fresh context on a used runtime vs a fresh runtime with its context (interleaved, medians). */
async function resetMicros(): Promise<{ contextMicros: number; runtimeMicros: number }> {
  const mod = await newQuickJSWASMModuleFromVariant(
    variant as unknown as Parameters<typeof newQuickJSWASMModuleFromVariant>[0],
  );
  const rt = mod.newRuntime();
  rt.setMemoryLimit(16 << 20);
  const ctxOnce = () => rt.newContext({ intrinsics: INTRINSICS }).dispose();
  const rtOnce = () => {
    const r = mod.newRuntime();
    r.setMemoryLimit(16 << 20);
    r.newContext({ intrinsics: INTRINSICS }).dispose();
    r.dispose();
  };
  const time = (f: () => void, n: number) => {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) f();
    return ((performance.now() - t0) * 1000) / n;
  };
  for (let i = 0; i < 100; i++) {
    ctxOnce();
    rtOnce();
  }
  const a: number[] = [];
  const b: number[] = [];
  for (let k = 0; k < 10; k++) {
    a.push(time(ctxOnce, 200));
    b.push(time(rtOnce, 200));
  }
  rt.dispose();
  return { contextMicros: median(a), runtimeMicros: median(b) };
}

export async function hostileOnly(): Promise<void> {
  const sandbox = await createSandbox();
  process.stderr.write(
    `sandbox bench, hostile mix only: ${availableParallelism()} cores, ${SECONDS}s per measurement, ${ROUNDS} rounds, load ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}\n`,
  );
  const h = await hostileMix(sandbox);
  await sandbox.close();
  console.log(hostileTable(h));
  const file = new URL('./results/sandbox.json', import.meta.url);
  const old = existsSync(file)
    ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>)
    : { bench: 'sandbox' };
  writeFileSync(file, JSON.stringify({ ...old, hostile: hostileJson(h) }, null, 2) + '\n');
}

export function hostileJson(h: Awaited<ReturnType<typeof hostileMix>>): Record<string, unknown> {
  return {
    date: new Date().toISOString(),
    machine: {
      cores: availableParallelism(),
      cpu: cpus()[0]?.model ?? null,
      node: process.version,
      loadavg: loadavg(),
    },
    secondsPerMeasurement: SECONDS,
    workload: {
      tasks: HOSTILE_TASKS,
      answers: HOSTILE_ANSWERS,
      badShare: 0.1,
      kinds: Object.fromEntries(HOSTILE_KINDS.map((k) => [k.kind, k.answer])),
    },
    cleanRate: h.clean,
    rows: h.rows,
    rounds_raw: h.rounds,
    reset: h.reset,
    target: { shareOfClean: 0.25 },
  };
}
