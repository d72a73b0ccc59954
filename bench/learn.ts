// Learning benchmark (issue 5): from random initialisation, with the learnability curriculum, how many
// solver steps and how much wall time until greedy exact-match on held-out tasks reaches
//   ≥ 95% on boolean-logic level-0 tasks and ≥ 80% on single-digit arithmetic level-0 deduction.
// The held-out set is the loop's probe set (drawn first, excluded from training by dedup). Records the
// curve in bench/results/learn.json.
//
//   npm run bench:learn [-- --steps N (default: the preset's) --seed 1 --backend wasm --preset learn]
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadPreset, RunStore, startRun } from '../src/index.js';

const { values: args } = parseArgs({
  options: {
    steps: { type: 'string' },
    seed: { type: 'string', default: '1' },
    backend: { type: 'string', default: 'auto' },
    preset: { type: 'string', default: 'learn' },
    out: { type: 'string', default: 'bench/results' },
  },
});

const TARGETS = [
  { key: 'probe.logic/0/deduction', label: 'logic L0 deduction', target: 0.95 },
  { key: 'probe.arith/0/deduction', label: 'arith L0 deduction', target: 0.8 },
];

const config = loadPreset(args.preset, { seed: Number(args.seed), ...(args.steps ? { steps: Number(args.steps) } : {}), solver: { backend: args.backend } });
const runsDir = join(tmpdir(), `cogen-bench-learn-${process.pid}`);
const reached = new Map<string, { step: number; seconds: number }>();
const started = Date.now();
let backend = '';
const summary = await startRun(config, {
  runsDir,
  preset: args.preset,
  runId: 'learn',
  log: (line) => {
    if (line.startsWith('solver backend')) backend = line;
    process.stderr.write(`${line}\n`);
  },
  onProgress: (p) => {
    if (p.step % 10 === 0) process.stderr.write(`step ${p.step}: reward ${p.meanReward.toFixed(3)} solve ${(100 * p.solveRate).toFixed(1)}%\n`);
  },
});

const store = RunStore.open(summary.dir, { create: false });
const metrics = store.metrics();
store.close();
const curve = metrics
  .filter((m) => TARGETS.some((t) => typeof m[t.key] === 'number'))
  .map((m) => ({ step: Number(m.step), seconds: 0, ...Object.fromEntries(TARGETS.map((t) => [t.label, Number(m[t.key] ?? NaN)])), reward: Number(m.meanReward) }));
// Wall time per step is in the metrics (ms); the curve's clock is their running sum.
let clock = 0;
const msByStep = new Map(metrics.map((m) => [Number(m.step), Number(m.ms)]));
for (const point of curve) {
  clock = [...msByStep].filter(([s]) => s <= point.step).reduce((a, [, ms]) => a + ms, 0) / 1000;
  point.seconds = Math.round(clock * 10) / 10;
  for (const t of TARGETS) {
    const acc = (point as Record<string, number>)[t.label]!;
    if (acc >= t.target && !reached.has(t.label)) reached.set(t.label, { step: point.step, seconds: point.seconds });
  }
}

const rows = TARGETS.map((t) => {
  const last = curve.at(-1) as Record<string, number> | undefined;
  const r = reached.get(t.label);
  return { task: t.label, target: t.target, final: last?.[t.label] ?? null, reachedAtStep: r?.step ?? null, reachedAfterSeconds: r?.seconds ?? null };
});
console.log(`\nbench:learn — ${summary.steps} steps, ${backend || summary.backend}, ${(Date.now() - started) / 1000}s wall`);
console.log('| held-out set | target | final | reached at step | after (s) |');
console.log('| --- | --- | --- | --- | --- |');
for (const r of rows) console.log(`| ${r.task} | ${r.target} | ${r.final?.toFixed(3)} | ${r.reachedAtStep ?? 'not reached'} | ${r.reachedAfterSeconds ?? '-'} |`);
mkdirSync(args.out, { recursive: true });
writeFileSync(
  join(args.out, 'learn.json'),
  JSON.stringify({ date: new Date().toISOString(), config: { seed: config.seed, steps: config.steps, batch: config.batch, group: config.group, solver: config.solver }, backend: summary.backend, wallSeconds: (Date.now() - started) / 1000, results: rows, curve }, null, 2),
);
console.log(`wrote ${join(args.out, 'learn.json')}`);
