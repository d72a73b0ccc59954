// Learning benchmark (issues 5 and 20): from random initialisation, with the learnability curriculum,
// how many solver steps and how much wall time until greedy exact-match on held-out tasks reaches
//   ≥ 95% on boolean-logic level-0 tasks and ≥ 80% on single-digit arithmetic level-0 deduction,
// on several seeds drawn at random (printed; `--seeds 1,23` replays), run one after the other. Each
// seed gets a row (the step and wall time each target was first reached, the final and best
// accuracy, the mean of the last 500 steps); the summary is the median over seeds, and seeds that
// miss are counted, not dropped. The held-out set is the loop's probe set (drawn first, balanced
// against trivial policies, excluded from training by dedup). Writes bench/results/learn-seeds.json
// after every seed, and every 50 steps of a seed under way (its row marked partial, from the steps
// done), so that a run stopped early still reports what it reached (bench/results/learn.json is the
// recorded single-seed run of issue 5). Seeds in parallel: one process per seed, each with its own
// --out, then --merge those folders into one learn-seeds.json (the summary over all their seeds).
//
//   npm run bench:learn [-- --seeds random:3 --steps N (default: the preset's) --backend wasm --preset learn]
//   npx tsx bench/learn.ts --merge DIR,DIR,... [--out bench/results]
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadPreset, RunStore, startRun } from '../src/index.js';
import { drawSeeds, mean as meanOf, median as medianOf } from './stats.js';

const { values: args } = parseArgs({
  options: {
    steps: { type: 'string' },
    seeds: { type: 'string', default: 'random:3' },
    backend: { type: 'string', default: 'auto' },
    preset: { type: 'string', default: 'learn' },
    out: { type: 'string', default: 'bench/results' },
    merge: { type: 'string' },
  },
});

const TARGETS = [
  { key: 'probe.logic/0/deduction', label: 'logic L0 deduction', target: 0.95 },
  { key: 'probe.arith/0/deduction', label: 'arith L0 deduction', target: 0.8 },
];
/** The window of the "mean of the last steps" column, in solver steps. */
const TAIL = 500;

const drawn = args.merge ? null : /^random:(\d+)$/.exec(args.seeds);
const seeds = drawn ? drawSeeds(Number(drawn[1])) : args.merge ? [] : args.seeds.split(',').map(Number);
if (!args.merge && (seeds.length === 0 || seeds.some((s) => !Number.isInteger(s)))) throw new Error(`--seeds: expected random:N or a list of integers, got "${args.seeds}"`);
if (!args.merge) console.log(`bench:learn: preset ${args.preset}, seeds${drawn ? ' (drawn at random)' : ''} ${seeds.join(',')}`);

interface TargetRow {
  task: string;
  target: number;
  final: number | null;
  best: number | null;
  tailMean: number | null;
  reachedAtStep: number | null;
  reachedAfterSeconds: number | null;
}
interface SeedRun {
  seed: number;
  backend: string;
  steps: number;
  /** Steps done: less than `steps` in a partial row (the seed still running, or stopped). */
  stepsDone: number;
  partial: boolean;
  wallSeconds: number;
  results: TargetRow[];
  curve: Record<string, number>[];
}

/** A statistic of no values is null in the JSON (NaN is not JSON). */
const orNull = (f: (xs: number[]) => number) => (xs: number[]): number | null => (xs.length ? f(xs) : null);
const mean = orNull(meanOf);
const median = orNull(medianOf);

async function runSeed(seed: number): Promise<SeedRun> {
  const config = loadPreset(args.preset, { seed, ...(args.steps ? { steps: Number(args.steps) } : {}), solver: { backend: args.backend } });
  const runsDir = join(tmpdir(), `cogen-bench-learn-${process.pid}`);
  const started = Date.now();
  const runId = `learn-${seed}`;
  process.stderr.write(`seed ${seed}: run store ${join(runsDir, runId)}\n`);
  const summary = await startRun(config, {
    runsDir,
    preset: args.preset,
    runId,
    log: (line) => process.stderr.write(`${line}\n`),
    onProgress: (p) => {
      if (p.step % 50 !== 0) return;
      process.stderr.write(`seed ${seed} step ${p.step}: reward ${p.meanReward.toFixed(3)} solve ${(100 * p.solveRate).toFixed(1)}%\n`);
      write([...runs, seedRow(seed, join(runsDir, runId), { backend: '', steps: config.steps, started, partial: true })]);
    },
  });
  return seedRow(seed, summary.dir, { backend: summary.backend, steps: summary.steps, started, partial: false });
}

/** A seed's row, read from its run store (while the run goes on, too: the store is SQLite in WAL mode). */
function seedRow(seed: number, dir: string, o: { backend: string; steps: number; started: number; partial: boolean }): SeedRun {
  const store = RunStore.open(dir, { create: false });
  const metrics = store.metrics();
  store.close();
  // Wall time per step is in the metrics (ms); the curve's clock is their running sum.
  let clock = 0;
  const curve: Record<string, number>[] = [];
  for (const m of metrics) {
    clock += Number(m.ms) / 1000;
    if (!TARGETS.some((t) => typeof m[t.key] === 'number')) continue;
    curve.push({ step: Number(m.step), seconds: Math.round(clock * 10) / 10, ...Object.fromEntries(TARGETS.map((t) => [t.label, Number(m[t.key] ?? NaN)])), reward: Number(m.meanReward) });
  }
  const results = TARGETS.map((t): TargetRow => {
    const points = curve.filter((p) => Number.isFinite(p[t.label]));
    const hit = points.find((p) => p[t.label]! >= t.target);
    const last = points.at(-1);
    const tail = points.filter((p) => p.step! > (last?.step ?? 0) - TAIL).map((p) => p[t.label]!);
    return {
      task: t.label,
      target: t.target,
      final: last?.[t.label] ?? null,
      best: points.length ? Math.max(...points.map((p) => p[t.label]!)) : null,
      tailMean: mean(tail),
      reachedAtStep: hit?.step ?? null,
      reachedAfterSeconds: hit?.seconds ?? null,
    };
  });
  const stepsDone = metrics.length ? Number(metrics.at(-1)!.step) : 0;
  return { seed, backend: o.backend, steps: o.steps, stepsDone, partial: o.partial, wallSeconds: (Date.now() - o.started) / 1000, results, curve };
}

const f3 = (x: number | null): string => (x === null ? '-' : x.toFixed(3));
const runs: SeedRun[] = [];
const startedAll = Date.now();
const summarise = (runs: SeedRun[]) =>
  TARGETS.map((t) => {
    const rows = runs.map((r) => r.results.find((x) => x.task === t.label)!);
    const reached = rows.filter((r) => r.reachedAtStep !== null);
    return {
      task: t.label,
      target: t.target,
      seeds: rows.length,
      reachedBy: reached.length,
      medianFinal: median(rows.flatMap((r) => (r.final === null ? [] : [r.final]))),
      medianTailMean: median(rows.flatMap((r) => (r.tailMean === null ? [] : [r.tailMean]))),
      // A seed that never reached the target counts as beyond every step, so the median exists only when most seeds reached it.
      medianStepReached: reached.length * 2 > rows.length ? median(rows.map((r) => r.reachedAtStep ?? Infinity)) : null,
    };
  });
interface Report {
  date: string;
  preset: string;
  seeds: number[];
  seedsDrawn: boolean;
  wallSeconds: number;
  summary: ReturnType<typeof summarise>;
  runs: SeedRun[];
}

function write(rows: SeedRun[], wallSeconds = (Date.now() - startedAll) / 1000, seedsDrawn = drawn !== null): void {
  const report: Report = { date: new Date().toISOString(), preset: args.preset, seeds: rows.map((r) => r.seed), seedsDrawn, wallSeconds, summary: summarise(rows), runs: rows };
  mkdirSync(args.out, { recursive: true });
  writeFileSync(join(args.out, 'learn-seeds.json'), JSON.stringify(report, null, 2) + '\n');
}

function printSeed(run: SeedRun): void {
  const done = run.partial ? `${run.stepsDone} of ${run.steps} steps (partial)` : `${run.steps} steps`;
  console.log(`\nseed ${run.seed}: ${done}, ${run.backend || 'backend not recorded yet'}, ${run.wallSeconds.toFixed(0)} s wall`);
  console.log('| held-out set | target | final | best | mean of last 500 steps | reached at step | after (s) |');
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  for (const r of run.results) console.log(`| ${r.task} | ${r.target} | ${f3(r.final)} | ${f3(r.best)} | ${f3(r.tailMean)} | ${r.reachedAtStep ?? 'not reached'} | ${r.reachedAfterSeconds ?? '-'} |`);
}

function printSummary(rows: SeedRun[], wallSeconds: number): void {
  console.log(`\nbench:learn over ${rows.length} seeds (${rows.map((r) => r.seed).join(', ')}), ${wallSeconds.toFixed(0)} s wall in all${rows.some((r) => r.partial) ? '; partial rows count as far as they got' : ''}`);
  console.log('| held-out set | target | seeds that reached it | median step reached | median final | median mean of last 500 steps |');
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const s of summarise(rows)) console.log(`| ${s.task} | ${s.target} | ${s.reachedBy} of ${s.seeds} | ${s.medianStepReached ?? 'not reached by most'} | ${f3(s.medianFinal)} | ${f3(s.medianTailMean)} |`);
  console.log(`wrote ${join(args.out, 'learn-seeds.json')}`);
}

if (args.merge) {
  // Seeds run in parallel, one process and --out folder each: their rows in one report; the wall
  // time is the longest of theirs (they ran side by side).
  const reports = args.merge.split(',').map((dir) => JSON.parse(readFileSync(join(dir, 'learn-seeds.json'), 'utf8')) as Report);
  const rows = reports.flatMap((r) => r.runs);
  const wall = Math.max(...reports.map((r) => r.wallSeconds));
  write(rows, wall, reports.every((r) => r.seedsDrawn));
  rows.forEach(printSeed);
  printSummary(rows, wall);
} else {
  for (const seed of seeds) {
    const run = await runSeed(seed);
    runs.push(run);
    printSeed(run);
    write(runs);
  }
  printSummary(runs, (Date.now() - startedAll) / 1000);
}
