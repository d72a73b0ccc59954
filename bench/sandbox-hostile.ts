// The hostile mix (bench/results/sandbox-hostile.md): `npm run bench:sandbox -- --hostile` runs it
// alone; `npm run bench:sandbox` runs its in-process half after the other rows.
//
// Workload, as a new user would write it from the public API: 32 level-1 induction tasks over arith,
// array, str and loop (generateTask's drafts, checked against the generators' reference
// interpreter), 256 answers a batch, all right, or with every tenth (10 %) of one hostile kind
// (KINDS: one per way out of the sandbox or per way a step can be made expensive). Two styles of
// batch: `distinct` (every answer's text differs, as G samples do) and `repeated` (every right
// answer to a task is the same text, so verifyMany verifies it once and the hostile answers are a
// larger share of the work: the style the issue measured). Two paths, side by side in one run:
// `in-process` (verifyMany on a sandbox pool of 2 threads) and `workers` (the same batches as
// completions through NATS JetStream to one `cogen worker` process with 2 sandbox threads, as
// `cogen serve --verify` sends them). Clean and hostile batches alternate within each round; the
// figure per kind is its rate ÷ the clean rate of the same round, path and style (target ≥ 0.5).
// Every verdict of a right answer in every batch must be reward 1 with all examples passed, which
// is what the reference interpreter's outputs say; a hostile verdict's reason must be short.
import { writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { createSandbox, normaliseProgram, sandboxConfigSchema, verifyMany } from '../sandbox/index.js';
import type { DetailedVerdict, Sandbox } from '../sandbox/index.js';
import type { InductionTask, Json, Task } from '../core/task.js';
import { createRng } from '../core/rng.js';
import { deepEqual } from '../sandbox/index.js';
import { drawReference, materialise } from '../generators/index.js';
import { queueVerifier } from '../src/workers/remote.js';
import { freePort, servicePids, startNats, stopLocalServices } from '../test/setup/local-services.js';
import { cpuSeconds, proc, type Proc } from './scale/procs.js';
import { median } from './stats.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 1.5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TASKS = 32;
const ANSWERS = 256;
const FAMILIES = ['arith', 'array', 'str', 'loop'];

/** One hostile kind per way out of the sandbox and per way to make a step expensive (the issue's list). */
export const KINDS: { kind: string; answer: string }[] = [
  { kind: 'loop', answer: 'function f(a){ for(;;){} }' },
  { kind: 'error', answer: "function f(a){ throw new Error('x'.repeat(1e7)) }" },
  { kind: 'output', answer: "function f(a){ for(;;) console.log('x'.repeat(1e5), { a: [1, 2, 3] }) }" },
  { kind: 'result', answer: "function f(a){ return new Array(1e5).fill('abcdefgh') }" },
  { kind: 'string', answer: "function f(a){ let s=''; for(let i=0;i<1e9;i++) s+='x'; return s }" },
  { kind: 'array', answer: 'function f(a){ const x=[]; for(;;) x.push(x.length, [x.length]) }' },
  { kind: 'recursion', answer: 'function f(a){ return f([a]) + 1 }' },
  { kind: 'regexp', answer: "function f(a){ return /^(a+)+$/.test('a'.repeat(40) + 'b') }" },
  {
    kind: 'stringify',
    answer: "function f(a){ const x = new Array(1e4).fill('abcdefgh'); for(;;) JSON.stringify(x) }",
  },
  {
    kind: 'cyclic',
    answer: 'function f(a){ const o = { a }; o.o = o; for(;;) try { JSON.stringify(o) } catch (e) {} }',
  },
  {
    kind: 'prototype',
    answer:
      "function f(a){ Object.prototype.toJSON = function(){ return this }; Array.prototype.join = function(){ for(;;){} }; return { a: [a], get b(){ return 'y'.repeat(1e6) } } }",
  },
];

type Item = { task: Task; answer: string };
type Verify = (items: Item[]) => Promise<DetailedVerdict[]>;
/** A way to verify: its function, and the CPU seconds its processes have used so far (this one, and a worker's and NATS's). */
interface Path {
  path: string;
  verify: Verify;
  cpu: () => number;
  stop?: () => Promise<void>;
}
const ownCpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const STYLES = ['distinct', 'repeated'] as const;
type Style = (typeof STYLES)[number];

/** 32 tasks from drafts whose outputs the reference interpreter computed; a task whose examples disagree with them stops the bench. */
export async function referenceTasks(sandbox: Sandbox): Promise<InductionTask[]> {
  const tasks: InductionTask[] = [];
  const seen = new Set<string>();
  for (let i = 0; tasks.length < TASKS; i++) {
    const family = FAMILIES[i % FAMILIES.length]!;
    const { draft, outputs } = drawReference(family, createRng(`bench-hostile-${i}`), 1, 'induction');
    const m = await materialise(sandbox, draft, seen);
    if (!m.ok) continue;
    const task = m.task as InductionTask;
    for (const e of [...task.visible, ...task.hidden]) {
      const k = (draft.inputs as Json[][]).findIndex((x) => deepEqual(x, e.input));
      if (k < 0 || !deepEqual(outputs[k]!, e.output))
        throw new Error(
          `task ${task.id}: the sandbox and the reference interpreter disagree on ${JSON.stringify(e.input)}`,
        );
    }
    tasks.push(task);
  }
  return tasks;
}

function batch(tasks: Task[], style: Style, bad: string | null): Item[] {
  return Array.from({ length: ANSWERS }, (_, i) => {
    const task = tasks[i % tasks.length]!;
    const text = bad !== null && i % 10 === 3 ? bad : task.program;
    return { task, answer: style === 'distinct' ? `${text}\n// answer ${i}` : text };
  });
}

/** Every right answer: reward 1, all examples passed (the reference interpreter's outputs); every reason short. */
function check(items: Item[], verdicts: DetailedVerdict[], bad: string | null, where: string): string {
  let reason = '';
  verdicts.forEach((v, i) => {
    const hostile = bad !== null && i % 10 === 3;
    if (!hostile && (v.reward !== 1 || v.passed !== v.total))
      throw new Error(`${where}: a right answer failed: ${v.reason} (${items[i]!.answer.slice(0, 60)})`);
    if ((v.reason ?? '').length > 1024) throw new Error(`${where}: a reason of ${v.reason!.length} characters`);
    if (hostile) reason ||= v.reason ?? '';
  });
  return reason;
}

/** One batch verified: wall ms and CPU seconds, and its verdicts checked. */
async function timed(
  p: Path,
  items: Item[],
  bad: string | null,
  where: string,
): Promise<{ ms: number; cpu: number; reason: string }> {
  const [t0, c0] = [performance.now(), p.cpu()];
  const vs = await p.verify(items);
  const [ms, cpu] = [performance.now() - t0, p.cpu() - c0];
  return { ms, cpu, reason: check(items, vs, bad, where) };
}

/** Rates (answers per wall second and per CPU second) of a clean batch and a mixed one. */
interface Pair {
  clean: number;
  rate: number;
  cleanCpu: number;
  rateCpu: number;
  reason: string;
}

/**
 * A kind's rate against clean, measured in pairs: a clean batch, then a batch with the kind, again
 * and again for SECONDS, so that what else the machine does at a moment weighs on both alike. CPU
 * time too: on a machine that other jobs load, answers per CPU second are what a pool of its own
 * would see.
 */
async function paired(p: Path, clean: Item[], mixed: Item[], bad: string, where: string): Promise<Pair> {
  const sum = { tc: 0, th: 0, cc: 0, ch: 0, n: 0 };
  let reason = '';
  const t0 = performance.now();
  do {
    const c = await timed(p, clean, null, `${where}/clean`);
    const h = await timed(p, mixed, bad || null, where);
    sum.tc += c.ms;
    sum.th += h.ms;
    sum.cc += c.cpu;
    sum.ch += h.cpu;
    sum.n++;
    reason ||= h.reason;
  } while (performance.now() - t0 < 1000 * SECONDS);
  const per = (answers: number, x: number): number => (sum.n * answers) / x;
  return {
    clean: per(clean.length, sum.tc / 1000),
    rate: per(mixed.length, sum.th / 1000),
    cleanCpu: per(clean.length, sum.cc),
    rateCpu: per(mixed.length, sum.ch),
    reason,
  };
}

export interface Cell {
  path: string;
  style: Style;
  kind: string;
  /** Per round: verifications/s, and ÷ the clean rate measured in pairs with it; the same per CPU second. */
  rates: number[];
  ratios: number[];
  cpuRatios: number[];
  reason: string;
}

/** One round of a path: each kind against clean, per style; cells are appended to (or found in) `cells`. */
async function measurePath(p: Path, tasks: Task[], cells: Cell[], round: number): Promise<void> {
  const cell = (style: Style, kind: string): Cell => {
    let c = cells.find((x) => x.path === p.path && x.style === style && x.kind === kind);
    if (!c) cells.push((c = { path: p.path, style, kind, rates: [], ratios: [], cpuRatios: [], reason: '' }));
    return c;
  };
  for (const style of STYLES) {
    const clean = batch(tasks, style, null);
    const line: string[] = [];
    const cleanRates: number[] = [];
    for (const k of KINDS) {
      const r = await paired(p, clean, batch(tasks, style, k.answer), k.answer, `${p.path}/${style}/${k.kind}`);
      const c = cell(style, k.kind);
      c.rates[round] = r.rate;
      c.ratios[round] = r.rate / r.clean;
      c.cpuRatios[round] = r.rateCpu / r.cleanCpu;
      c.reason ||= r.reason;
      cleanRates.push(r.clean);
      line.push(`${k.kind} ${(r.rate / r.clean).toFixed(2)}/${(r.rateCpu / r.cleanCpu).toFixed(2)}`);
    }
    const c = cell(style, 'clean');
    c.rates[round] = median(cleanRates);
    c.ratios[round] = c.cpuRatios[round] = 1;
    process.stderr.write(
      `  round ${round + 1} ${p.path}/${style}: clean ${median(cleanRates).toFixed(0)}/s; ÷ clean (wall/cpu): ${line.join(', ')}\n`,
    );
  }
}

/** A fenced completion, as a model's reply carries its program. */
const fence = (answer: string): string => '```js\n' + answer + '\n```';

/** One `cogen worker` process on a fresh NATS JetStream, and a replica's verifier for it. */
async function workersPath(): Promise<Omit<Path, 'path'>> {
  const nats = await startNats();
  const worker: Proc = proc('worker', 'worker', await freePort(), [
    'worker',
    '--nats',
    nats,
    '--sandbox-workers',
    String(Math.min(2, availableParallelism())),
    '--concurrency',
    '2',
  ]);
  worker.start();
  await worker.healthy();
  const settings = sandboxConfigSchema.parse({});
  const verifier = await queueVerifier(nats, { sandbox: () => settings, timeoutMs: 120_000 });
  const stop = async (): Promise<void> => {
    await verifier.close();
    await worker.stop();
    await stopLocalServices();
  };
  // A bench stopped early stops its worker and NATS too.
  for (const sig of ['SIGINT', 'SIGTERM'] as const)
    process.once(sig, () => void stop().finally(() => process.exit(130)));
  return {
    verify: async (items) =>
      (await verifier.score(items.map((it) => ({ task: it.task, completion: fence(it.answer) })))).map(
        (s) => s.verdict,
      ),
    cpu: () => ownCpu() + cpuSeconds(worker.child?.pid) + cpuSeconds(servicePids.nats),
    stop,
  };
}

export interface Alone {
  kind: string;
  ms: number;
  steps: number;
  budget: number;
  native: number;
  copied: number;
  reason: string;
}

/** Each kind alone, once on each task: the median wall ms, and the most steps, native work and bytes copied out that one answer took. */
async function alone(sandbox: Sandbox, tasks: InductionTask[]): Promise<Alone[]> {
  const out: Alone[] = [];
  for (const k of [{ kind: 'right', answer: '' }, ...KINDS]) {
    const ms: number[] = [];
    const row: Alone = { kind: k.kind, ms: 0, steps: 0, budget: 0, native: 0, copied: 0, reason: '' };
    for (const [j, task] of tasks.entries()) {
      const n = normaliseProgram(`${k.answer || task.program}\n// alone ${j}`);
      if (!n.ok) throw new Error(n.reason);
      const inputs = [...task.visible, ...task.hidden].map((e) => e.input);
      const t0 = performance.now();
      const [m] = await sandbox.runTasksMetered!([{ program: n.program, inputs, budget: task.budget }]);
      ms.push(performance.now() - t0);
      row.steps = Math.max(row.steps, m!.steps);
      row.budget = Math.max(row.budget, task.budget ?? 0);
      row.native = Math.max(row.native, m!.native ?? 0);
      row.copied = Math.max(row.copied, m!.copied ?? 0);
      const bad = m!.results.find((r) => !r.ok);
      row.reason ||= bad && !bad.ok ? `${bad.reason}: ${bad.detail}` : '';
    }
    out.push({ ...row, ms: median(ms) });
  }
  return out;
}

export interface Hostile {
  cells: Cell[];
  alone: Alone[];
  load: number[][];
  /** Clean batches on the metered engine ÷ the same on the module as shipped (COGEN_SANDBOX_UNMETERED), per round: [wall, CPU]. */
  meterCost?: [number, number][];
}

/** What metering native work costs clean answers: a pool on the module as shipped, in pairs with the metered one. */
async function meterCost(sandbox: Sandbox, tasks: Task[]): Promise<[number, number][]> {
  process.env.COGEN_SANDBOX_UNMETERED = '1';
  const plain = await createSandbox({ workers: Math.min(2, availableParallelism()) });
  delete process.env.COGEN_SANDBOX_UNMETERED;
  const clean = batch(tasks, 'distinct', null);
  const out: [number, number][] = [];
  try {
    const both: Path = {
      path: 'meter',
      verify: (items) => (items === clean ? verifyMany(sandbox, items) : verifyMany(plain, items)),
      cpu: ownCpu,
    };
    for (let i = 0; i < 5; i++) await timed(both, [...clean], null, 'unmetered/warm-up');
    for (let r = 0; r < ROUNDS; r++) {
      const m = await paired(both, clean, [...clean], '', 'meter');
      out.push([m.clean / m.rate, m.cleanCpu / m.rateCpu]);
    }
  } finally {
    await plain.close();
  }
  return out;
}

/** The mix on the given paths (in-process always; workers when asked). */
export async function hostileMix(sandbox: Sandbox, withWorkers = false): Promise<Hostile> {
  const tasks = await referenceTasks(sandbox);
  const paths: Path[] = [{ path: 'in-process', verify: (items) => verifyMany(sandbox, items), cpu: ownCpu }];
  if (withWorkers) paths.push({ path: 'workers', ...(await workersPath()) });
  const cells: Cell[] = [];
  const load: number[][] = [loadavg()];
  try {
    // Warm-up: JIT, the workers' sandbox pool, the queue.
    for (const p of paths)
      for (let i = 0; i < 10; i++) await timed(p, batch(tasks, 'distinct', null), null, `${p.path}/warm-up`);
    for (let r = 0; r < ROUNDS; r++) {
      for (const p of paths) await measurePath(p, tasks, cells, r);
      load.push(loadavg());
    }
  } finally {
    for (const p of paths) await p.stop?.();
  }
  return {
    cells,
    alone: await alone(sandbox, tasks),
    load,
    meterCost: withWorkers ? await meterCost(sandbox, tasks) : undefined,
  };
}

const pct = (x: number): string => `${(x * 100).toFixed(0)} %`;

export function hostileTable(h: Hostile): string {
  const lines = [
    `hostile mix: ${ANSWERS} level-1 induction answers for ${TASKS} tasks (${FAMILIES.join(', ')}), 10 % of one kind; rate ÷ clean of the same round (median, range over ${ROUNDS} rounds); load ${h.load.map((l) => l[0]!.toFixed(2)).join(' → ')}`,
    `kind        ${[...new Set(h.cells.map((c) => `${c.path}/${c.style} (wall · cpu)`))].map((p) => p.padEnd(40)).join('')}`,
  ];
  for (const kind of ['clean', ...KINDS.map((k) => k.kind)]) {
    const row = h.cells.filter((c) => c.kind === kind);
    const range = (xs: number[]) => `${pct(median(xs))} (${pct(Math.min(...xs))}–${pct(Math.max(...xs))})`;
    const show = (c: Cell) =>
      kind === 'clean'
        ? `${median(c.rates).toFixed(0)}/s`.padEnd(40)
        : `${range(c.ratios)} · ${range(c.cpuRatios)}`.padEnd(40);
    lines.push(`${kind.padEnd(12)}${row.map(show).join('')}`);
  }
  lines.push(`target: every kind ≥ 50 % of clean, on every path and style`);
  if (h.meterCost)
    lines.push(
      `clean answers, metered ÷ unmetered engine (in pairs, per round, wall / CPU): ${h.meterCost.map(([w, c]) => `${w.toFixed(2)} / ${c.toFixed(2)}`).join(', ')}`,
    );
  lines.push(`one answer alone (median ms over the tasks; most steps / budget, native units, bytes copied out):`);
  for (const a of h.alone)
    lines.push(
      `  ${a.kind.padEnd(11)} ${a.ms.toFixed(2).padStart(6)} ms  ${`${a.steps} / ${a.budget}`.padStart(15)}  ${String(a.native).padStart(8)}  ${String(a.copied).padStart(6)} B  ${a.reason.slice(0, 70)}`,
    );
  return lines.join('\n');
}

export function hostileJson(h: Hostile): Record<string, unknown> {
  return {
    date: new Date().toISOString(),
    machine: { cores: availableParallelism(), cpu: cpus()[0]?.model ?? null, node: process.version, loadavg: h.load },
    secondsPerMeasurement: SECONDS,
    rounds: ROUNDS,
    workload: { tasks: TASKS, answers: ANSWERS, families: FAMILIES, level: 1, badShare: 0.1, kinds: KINDS },
    cells: h.cells,
    alone: h.alone,
    meterCost: h.meterCost ?? null,
    target: { shareOfClean: 0.5 },
  };
}

export async function hostileOnly(): Promise<void> {
  const sandbox = await createSandbox({ workers: Math.min(2, availableParallelism()) });
  process.stderr.write(
    `hostile mix: ${availableParallelism()} cores, ${SECONDS}s per measurement, ${ROUNDS} rounds, load ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}\n`,
  );
  const h = await hostileMix(sandbox, !process.argv.includes('--in-process'));
  await sandbox.close();
  console.log(hostileTable(h));
  writeFileSync(
    new URL('./results/sandbox-hostile.json', import.meta.url),
    JSON.stringify(hostileJson(h), null, 2) + '\n',
  );
}
