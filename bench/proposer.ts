// Proposer benchmark (issue 24): the learned grammar proposer against the fixed generators, on the
// same preset, controller, budget and seeds (paired runs; seeds drawn at random and printed, --seeds
// replays them). Per run, from its run store:
//   learnable share  fresh tasks whose first group (the solver's G answers in the step the task was
//                    drawn) had a solve rate strictly between 0 and 1
//   distinct         distinct programs (canonical hashes) among the fresh tasks: collapse shows here
//   mastered, probe  skills mastered at the end and held-out probe accuracy (the run's summary)
// and across seeds the learned/fixed ratio of learnable shares and the paired differences of the
// rest with a 95 % interval (t distribution, n − 1 degrees of freedom). Targets (the issue):
// learnable share ≥ 1.5×, distinct ≥ 90 % of the fixed, mastered and probe accuracy not lower beyond
// the interval. Writes bench/results/proposer.json (after every run) and proposer.md.
//
//   npm run bench:proposer [-- --seeds 3,17,42 | --n 3] [--preset smoke] [--steps 30] [--max-level 0] [--out bench/results]
import Database from 'better-sqlite3';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadPreset, startRun } from '../src/index.js';

const { values: args } = parseArgs({
  options: {
    seeds: { type: 'string' },
    n: { type: 'string', default: '3' },
    preset: { type: 'string', default: 'smoke' },
    steps: { type: 'string' },
    'max-level': { type: 'string' },
    out: { type: 'string', default: 'bench/results' },
  },
});

const seeds = args.seeds ? args.seeds.split(',').map(Number) : Array.from({ length: Number(args.n) }, () => Math.floor(Math.random() * 1_000_000));
const over = { solver: { backend: 'wasm' }, ...(args.steps ? { steps: Number(args.steps) } : {}), ...(args['max-level'] ? { maxLevel: Number(args['max-level']) } : {}) };
const base = loadPreset(args.preset, over);
console.log(`bench:proposer — preset ${args.preset} (${base.steps} steps × ${base.batch} tasks × ${base.group} answers, maxLevel ${base.maxLevel}, controller ${base.curriculum.controller}), seeds ${seeds.join(',')} (replay with --seeds ${seeds.join(',')})`);

/** Two-sided 97.5 % quantiles of Student's t for 1…10 degrees of freedom (z beyond). */
const T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228];

const PROPOSERS = ['fixed', 'learned'] as const;
type Proposer = (typeof PROPOSERS)[number];

interface Row {
  seed: number;
  proposer: Proposer;
  freshTasks: number;
  learnableShare: number;
  distinctPrograms: number;
  mastered: number;
  probeAccuracy: number;
  wallS: number;
}

/** Fresh tasks, the share whose first group was learnable, and their distinct programs. */
function measure(dir: string): Pick<Row, 'freshTasks' | 'learnableShare' | 'distinctPrograms'> {
  const db = new Database(join(dir, 'run.db'), { readonly: true });
  try {
    const rows = db
      .prepare(
        `SELECT t.id, t.hash, s.solved, s.attempts FROM tasks t
         JOIN task_scores s ON s.id = (SELECT MIN(id) FROM task_scores WHERE task_id = t.id)`,
      )
      .all() as { id: string; hash: string; solved: number; attempts: number }[];
    const learnable = rows.filter((r) => r.solved > 0 && r.solved < r.attempts).length;
    return { freshTasks: rows.length, learnableShare: rows.length ? learnable / rows.length : 0, distinctPrograms: new Set(rows.map((r) => r.hash)).size };
  } finally {
    db.close();
  }
}

const rows: Row[] = [];
const runsDir = join(tmpdir(), `cogen-bench-proposer-${process.pid}`);
mkdirSync(runsDir, { recursive: true });
mkdirSync(args.out, { recursive: true });
const jsonPath = join(args.out, 'proposer.json');
const save = () => writeFileSync(jsonPath, JSON.stringify({ preset: args.preset, steps: base.steps, batch: base.batch, group: base.group, maxLevel: base.maxLevel, controller: base.curriculum.controller, seeds, rows, summary: summarise() }, null, 2) + '\n');

for (const seed of seeds) {
  for (const proposer of PROPOSERS) {
    const config = loadPreset(args.preset, { ...over, seed, ...(proposer === 'learned' ? { proposer: { learned: { enabled: true } } } : {}) });
    const t0 = Date.now();
    const summary = await startRun(config, { runsDir, preset: args.preset, runId: `${proposer}-${seed}` });
    const row: Row = { seed, proposer, ...measure(summary.dir), mastered: summary.skillsMastered.length, probeAccuracy: summary.probeAccuracy, wallS: (Date.now() - t0) / 1000 };
    rows.push(row);
    console.log(`seed ${seed} ${proposer.padEnd(7)}  fresh ${row.freshTasks}  learnable ${(100 * row.learnableShare).toFixed(1)}%  distinct ${row.distinctPrograms}  mastered ${row.mastered}  probe ${(100 * row.probeAccuracy).toFixed(1)}%  ${row.wallS.toFixed(0)} s`);
    rmSync(summary.dir, { recursive: true, force: true });
    save();
  }
}
rmSync(runsDir, { recursive: true, force: true });

function paired(metric: (r: Row) => number): { mean: number; lo: number; hi: number; n: number } {
  const diffs = seeds.flatMap((s) => {
    const f = rows.find((r) => r.seed === s && r.proposer === 'fixed');
    const l = rows.find((r) => r.seed === s && r.proposer === 'learned');
    return f && l ? [metric(l) - metric(f)] : [];
  });
  const n = diffs.length;
  const mean = n ? diffs.reduce((a, b) => a + b, 0) / n : 0;
  if (n < 2) return { mean, lo: NaN, hi: NaN, n };
  const sd = Math.sqrt(diffs.reduce((a, d) => a + (d - mean) ** 2, 0) / (n - 1));
  const half = (T975[n - 2] ?? 1.96) * (sd / Math.sqrt(n));
  return { mean, lo: mean - half, hi: mean + half, n };
}

function summarise() {
  const of = (p: Proposer, m: (r: Row) => number) => {
    const xs = rows.filter((r) => r.proposer === p).map(m);
    return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN;
  };
  const ratio = of('learned', (r) => r.learnableShare) / of('fixed', (r) => r.learnableShare);
  const distinct = of('learned', (r) => r.distinctPrograms) / of('fixed', (r) => r.distinctPrograms);
  const mastered = paired((r) => r.mastered);
  const probe = paired((r) => r.probeAccuracy);
  return {
    learnableShare: { fixed: of('fixed', (r) => r.learnableShare), learned: of('learned', (r) => r.learnableShare), ratio, target: 1.5, met: ratio >= 1.5 },
    distinctPrograms: { fixed: of('fixed', (r) => r.distinctPrograms), learned: of('learned', (r) => r.distinctPrograms), ratio: distinct, target: 0.9, met: distinct >= 0.9 },
    // "Not lower beyond the interval": the interval of the paired difference reaches 0 or above.
    mastered: { ...mastered, met: !(mastered.hi < 0) },
    probeAccuracy: { ...probe, met: !(probe.hi < 0) },
  };
}

const s = summarise();
save();
const f = (x: number, d = 3) => (Number.isFinite(x) ? x.toFixed(d) : '-');
const md = [
  '# bench:proposer — learned grammar proposer against the fixed generators',
  '',
  `Preset \`${args.preset}\` (${base.steps} steps × ${base.batch} tasks × ${base.group} answers, maxLevel ${base.maxLevel}, controller ${base.curriculum.controller}, wasm), seeds ${seeds.join(', ')} (random, printed; \`npm run bench:proposer -- --seeds ${seeds.join(',')}\` replays them). Generated by bench/proposer.ts; ${new Date().toISOString().slice(0, 10)}.`,
  '',
  '| seed | proposer | fresh tasks | learnable share | distinct programs | mastered | probe accuracy | wall s |',
  '|---|---|---|---|---|---|---|---|',
  ...rows.map((r) => `| ${r.seed} | ${r.proposer} | ${r.freshTasks} | ${(100 * r.learnableShare).toFixed(1)}% | ${r.distinctPrograms} | ${r.mastered} | ${(100 * r.probeAccuracy).toFixed(1)}% | ${r.wallS.toFixed(0)} |`),
  '',
  '| measure | fixed | learned | learned vs fixed | target | met |',
  '|---|---|---|---|---|---|',
  `| learnable share (mean) | ${f(s.learnableShare.fixed)} | ${f(s.learnableShare.learned)} | ×${f(s.learnableShare.ratio, 2)} | ≥ ×1.5 | ${s.learnableShare.met ? 'yes' : 'no'} |`,
  `| distinct programs (mean) | ${f(s.distinctPrograms.fixed, 1)} | ${f(s.distinctPrograms.learned, 1)} | ×${f(s.distinctPrograms.ratio, 2)} | ≥ ×0.9 | ${s.distinctPrograms.met ? 'yes' : 'no'} |`,
  `| skills mastered, paired difference | | | ${f(s.mastered.mean, 2)} [${f(s.mastered.lo, 2)}, ${f(s.mastered.hi, 2)}] | interval reaches ≥ 0 | ${s.mastered.met ? 'yes' : 'no'} |`,
  `| probe accuracy, paired difference | | | ${f(s.probeAccuracy.mean)} [${f(s.probeAccuracy.lo)}, ${f(s.probeAccuracy.hi)}] | interval reaches ≥ 0 | ${s.probeAccuracy.met ? 'yes' : 'no'} |`,
  '',
];
writeFileSync(join(args.out, 'proposer.md'), md.join('\n'));
console.log(md.slice(4).join('\n'));
