// Proposer benchmark (bench/results/proposer.md). Two parts, each on paired runs (same preset,
// controller, budget and seed; seeds drawn at random with bench/stats.ts drawSeeds and printed,
// --seeds replays them):
//
// grammar    the learned grammar proposer against the fixed generators. Per run, from its store:
//   learnable share  fresh tasks whose first group (the solver's G answers in the step the task was
//                    drawn) had a solve rate strictly between 0 and 1
//   distinct         distinct programs (canonical hashes) among the fresh tasks: collapse shows here
//   mastered, probe  skills mastered at the end and held-out probe accuracy (the run's summary)
//   forked share     at checkpoints of the learned run, both proposers draw fresh tasks for every
//                    arm and that run's solver answers both sets (bench/proposer-fork.ts): the
//                    learnable share against the same solver, arms and step, without the run noise
//   and across seeds the learned/fixed ratio of learnable shares and the paired differences of the
//   rest with a 95 % interval (t distribution, n − 1 degrees of freedom). Targets (the issue):
//   learnable share ≥ 1.5×, distinct ≥ 90 % of the fixed, mastered and probe accuracy not lower
//   beyond the interval.
// self-play  the solver's own network proposing (experimental) against a generators-only run of the
//   same length: valid-proposal rate (target ≥ 90 %), learnable share by thirds of the run,
//   novelty (distinct programs, duplicates refused), held-out probe accuracy (paired difference).
//
// Writes bench/results/proposer.json (after every run; the other part's record is kept) and
// proposer.md (both parts).
//
//   npm run bench:proposer [-- --part grammar|self-play] [--seeds 3,17,42 | --n 3] [--preset smoke] [--steps 30] [--max-level 2] [--fork-every 30] [--init <checkpoint dir>] [--out bench/results] [--rerender]
//
// --init starts every run's solver from a checkpoint (solver.init), for example a `learn` run's: the
// proposer can only move the share where the solver's solve rate depends on the task, which a solver
// that guesses (the smoke preset's from random weights) does not show.
import Database from 'better-sqlite3';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createRng } from '../core/rng.js';
import { drawReference, families as FAMILIES, FIXED_CHOOSER, type Chooser } from '../generators/index.js';
import { loadPreset, startRun } from '../src/index.js';
import { forkedShares, type ForkPoint } from './proposer-fork.js';
import { drawSeeds } from './stats.js';

const { values: args } = parseArgs({
  options: {
    part: { type: 'string', default: 'grammar' },
    seeds: { type: 'string' },
    n: { type: 'string', default: '3' },
    preset: { type: 'string', default: 'smoke' },
    steps: { type: 'string' },
    'max-level': { type: 'string', default: '2' },
    controller: { type: 'string' },
    /** Steps between the forked measure's checkpoints (a multiple of the preset's checkpointEvery); default: five points over the run. */
    'fork-every': { type: 'string' },
    init: { type: 'string' },
    out: { type: 'string', default: 'bench/results' },
    rerender: { type: 'boolean', default: false },
  },
});
if (args.part !== 'grammar' && args.part !== 'self-play')
  throw new Error(`--part is grammar or self-play (got ${args.part})`);

/** Two-sided 97.5 % quantiles of Student's t for 1…10 degrees of freedom (z beyond). */
const T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228];

interface Setup {
  preset: string;
  steps: number;
  batch: number;
  group: number;
  maxLevel: number;
  controller: string;
  seeds: number[];
  /** solver.init of every run (--init) */ init?: string;
}

interface GrammarRow {
  seed: number;
  proposer: 'fixed' | 'learned';
  freshTasks: number;
  learnableShare: number;
  /** the learnable share of the fresh tasks drawn in each third of the run (absent in older records) */
  learnableByThird?: number[];
  distinctPrograms: number;
  mastered: number;
  probeAccuracy: number;
  /** learned rows: the forked measure at the run's checkpoints (absent in older records) */
  forked?: { learned: number; fixed: number; points: ForkPoint[] };
  wallS: number;
}

interface SelfPlayRow {
  seed: number;
  proposer: 'generators' | 'self-play';
  freshTasks: number;
  /** the learnable share of the fresh tasks drawn in each third of the run */
  learnableByThird: number[];
  learnableShare: number;
  distinctPrograms: number;
  probeAccuracy: number;
  /** self-play only: drafts the sandbox saw, those it found valid (accepted or duplicate), those it accepted */
  drafts?: number;
  valid?: number;
  accepted?: number;
  /** self-play only: candidates decoded, and drafts whose candidates all failed the reference interpreter */
  candidates?: number;
  exhausted?: number;
  /** self-play only: fresh tasks that came from the generators' fallback (no self-play draft passed) */
  fallback?: number;
  wallS: number;
}

type GrammarRecord = Setup & { rows: GrammarRow[]; summary: ReturnType<typeof summariseGrammar> };

interface Record_ {
  /** One record per setting (preset, steps, maxLevel, controller); a rerun of a setting replaces its record. */
  grammar?: GrammarRecord[];
  selfPlay?: Setup & { rows: SelfPlayRow[]; summary: ReturnType<typeof summariseSelfPlay> };
}

const jsonPath = join(args.out, 'proposer.json');
mkdirSync(args.out, { recursive: true });
const stored = existsSync(jsonPath) ? (JSON.parse(readFileSync(jsonPath, 'utf8')) as Record_ & { rows?: unknown }) : {};
// A record written before the self-play part holds the grammar part at its top level.
const record: Record_ = 'rows' in stored ? { grammar: [stored as unknown as GrammarRecord] } : stored;
if (record.grammar && !Array.isArray(record.grammar)) record.grammar = [record.grammar as GrammarRecord];
const sameSetting = (a: Setup, b: Setup): boolean =>
  a.preset === b.preset &&
  a.steps === b.steps &&
  a.maxLevel === b.maxLevel &&
  a.controller === b.controller &&
  a.init === b.init;
const save = () => writeFileSync(jsonPath, JSON.stringify(record, null, 2) + '\n');

/** Fresh tasks (each with its first group's solve), from a run's store. */
function freshTasks(dir: string) {
  const db = new Database(join(dir, 'run.db'), { readonly: true });
  try {
    return db
      .prepare(
        `SELECT t.id, t.hash, t.step, t.proposer, s.solved, s.attempts FROM tasks t
         JOIN task_scores s ON s.id = (SELECT MIN(id) FROM task_scores WHERE task_id = t.id)`,
      )
      .all() as { id: string; hash: string; step: number; proposer: string; solved: number; attempts: number }[];
  } finally {
    db.close();
  }
}

const learnable = (rs: { solved: number; attempts: number }[]): number =>
  rs.length ? rs.filter((r) => r.solved > 0 && r.solved < r.attempts).length / rs.length : 0;

function paired<R extends { seed: number; proposer: string }>(
  rows: R[],
  seeds: number[],
  a: string,
  b: string,
  metric: (r: R) => number,
) {
  const diffs = seeds.flatMap((s) => {
    const x = rows.find((r) => r.seed === s && r.proposer === a);
    const y = rows.find((r) => r.seed === s && r.proposer === b);
    return x && y ? [metric(y) - metric(x)] : [];
  });
  const n = diffs.length;
  const mean = n ? diffs.reduce((p, q) => p + q, 0) / n : 0;
  if (n < 2) return { mean, lo: NaN, hi: NaN, n };
  const sd = Math.sqrt(diffs.reduce((p, d) => p + (d - mean) ** 2, 0) / (n - 1));
  const half = (T975[n - 2] ?? 1.96) * (sd / Math.sqrt(n));
  return { mean, lo: mean - half, hi: mean + half, n };
}

const meanOf = <R extends { proposer: string }>(rows: R[], p: string, m: (r: R) => number): number => {
  const xs = rows.filter((r) => r.proposer === p).map(m);
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN;
};

function summariseGrammar(rows: GrammarRow[], seeds: number[]) {
  const of = (p: string, m: (r: GrammarRow) => number) => meanOf(rows, p, m);
  const ratio = of('learned', (r) => r.learnableShare) / of('fixed', (r) => r.learnableShare);
  const distinct = of('learned', (r) => r.distinctPrograms) / of('fixed', (r) => r.distinctPrograms);
  const mastered = paired(rows, seeds, 'fixed', 'learned', (r) => r.mastered);
  const probe = paired(rows, seeds, 'fixed', 'learned', (r) => r.probeAccuracy);
  // over the seeds whose rows have thirds (older records do not)
  const withThirds = rows.filter((r) => r.learnableByThird);
  const last = (p: string) => meanOf(withThirds, p, (r) => r.learnableByThird![2]!);
  return {
    learnableShare: {
      fixed: of('fixed', (r) => r.learnableShare),
      learned: of('learned', (r) => r.learnableShare),
      ratio,
      target: 1.5,
      met: ratio >= 1.5,
    },
    /** The same in the last third of the run, when the learned proposer has learned (not the target's measure). */
    learnableShareLastThird: {
      fixed: last('fixed'),
      learned: last('learned'),
      ratio: last('learned') / last('fixed'),
      n: withThirds.length / 2,
    },
    distinctPrograms: {
      fixed: of('fixed', (r) => r.distinctPrograms),
      learned: of('learned', (r) => r.distinctPrograms),
      ratio: distinct,
      target: 0.9,
      met: distinct >= 0.9,
    },
    // "Not lower beyond the interval": the interval of the paired difference reaches 0 or above.
    mastered: { ...mastered, met: !(mastered.hi < 0) },
    probeAccuracy: { ...probe, met: !(probe.hi < 0) },
    forked: summariseForked(rows),
  };
}

/** The forked measure over the seeds that have it: means, their ratio, the paired difference, and per arm pooled over seeds and checkpoints. */
function summariseForked(rows: GrammarRow[]) {
  const fs = rows.flatMap((r) => (r.forked ? [r.forked] : []));
  if (fs.length === 0) return undefined;
  const m = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const learned = m(fs.map((f) => f.learned));
  const fixed = m(fs.map((f) => f.fixed));
  const diff = paired(
    fs.flatMap((f, i) => [
      { seed: i, proposer: 'fixed', v: f.fixed },
      { seed: i, proposer: 'learned', v: f.learned },
    ]),
    fs.map((_, i) => i),
    'fixed',
    'learned',
    (r) => r.v,
  );
  const arms = [...new Set(fs.flatMap((f) => f.points.flatMap((p) => Object.keys(p.byArm))))].sort();
  const pooled = (arm: string, k: keyof ForkPoint['byArm'][string]) =>
    m(fs.flatMap((f) => f.points.map((p) => p.byArm[arm]?.[k] ?? NaN)).filter(Number.isFinite));
  const byArm = Object.fromEntries(
    arms.map((a) => [
      a,
      {
        learned: pooled(a, 'learned'),
        fixed: pooled(a, 'fixed'),
        learnedNone: pooled(a, 'learnedNone'),
        fixedNone: pooled(a, 'fixedNone'),
        learnedAll: pooled(a, 'learnedAll'),
        fixedAll: pooled(a, 'fixedAll'),
      },
    ]),
  );
  return { n: fs.length, learned, fixed, ratio: learned / fixed, paired: diff, byArm };
}

/**
 * Candidates the fixed generators decode per draft (the reference interpreter refuses the rest), over
 * the code arms of the setting drawn evenly: the baseline for the self-play decoder's count. (A run's
 * controller weighs arms unevenly, so this is an approximation of the same mix.)
 */
function generatorCandidatesPerDraft(preset: string, maxLevel: number): number {
  const config = loadPreset(preset, { maxLevel });
  let candidates = 0;
  let drafts = 0;
  const counting: Chooser = {
    ...FIXED_CHOOSER,
    begin: () => {
      candidates++;
    },
  };
  for (const fam of FAMILIES.filter((x) => config.families.includes(x.id))) {
    for (let level = 0; level <= Math.min(maxLevel, fam.levels - 1); level++) {
      for (const type of config.types) {
        for (let i = 0; i < 100; i++) {
          drawReference(fam.id, createRng(`candidates/${fam.id}/${level}/${type}/${i}`), level, type, counting);
          drafts++;
        }
      }
    }
  }
  return candidates / Math.max(1, drafts);
}

function summariseSelfPlay(rows: SelfPlayRow[], seeds: number[], generatorCandidates: number) {
  const sp = rows.filter((r) => r.proposer === 'self-play');
  const sum = (m: (r: SelfPlayRow) => number) => sp.reduce((a, r) => a + m(r), 0);
  const validRate =
    sum((r) => r.valid ?? 0) /
    Math.max(
      1,
      sum((r) => r.drafts ?? 0),
    );
  return {
    validRate: { value: validRate, target: 0.9, met: validRate >= 0.9 },
    acceptedRate:
      sum((r) => r.accepted ?? 0) /
      Math.max(
        1,
        sum((r) => r.drafts ?? 0),
      ),
    candidatesPerDraft:
      sum((r) => r.candidates ?? 0) /
      Math.max(
        1,
        sum((r) => (r.drafts ?? 0) + (r.exhausted ?? 0)),
      ),
    /** Share of the programs decoded (candidates) that the reference interpreter and the sandbox found valid. */
    validPerCandidate:
      sum((r) => r.valid ?? 0) /
      Math.max(
        1,
        sum((r) => r.candidates ?? 0),
      ),
    generatorCandidatesPerDraft: generatorCandidates,
    learnableByThird: {
      generators: [0, 1, 2].map((k) => meanOf(rows, 'generators', (r) => r.learnableByThird[k]!)),
      selfPlay: [0, 1, 2].map((k) => meanOf(rows, 'self-play', (r) => r.learnableByThird[k]!)),
    },
    distinctPrograms: {
      generators: meanOf(rows, 'generators', (r) => r.distinctPrograms),
      selfPlay: meanOf(rows, 'self-play', (r) => r.distinctPrograms),
    },
    probeAccuracy: {
      generators: meanOf(rows, 'generators', (r) => r.probeAccuracy),
      selfPlay: meanOf(rows, 'self-play', (r) => r.probeAccuracy),
      paired: paired(rows, seeds, 'generators', 'self-play', (r) => r.probeAccuracy),
    },
  };
}

async function runPart(): Promise<void> {
  const seeds = args.seeds ? args.seeds.split(',').map(Number) : drawSeeds(Number(args.n));
  const over = {
    solver: { backend: 'wasm', ...(args.init ? { init: args.init } : {}) },
    maxLevel: Number(args['max-level']),
    ...(args.steps ? { steps: Number(args.steps) } : {}),
    ...(args.controller ? { curriculum: { controller: args.controller } } : {}),
  };
  const base = loadPreset(args.preset, over);
  const setup: Setup = {
    preset: args.preset,
    steps: base.steps,
    batch: base.batch,
    group: base.group,
    maxLevel: Number(args['max-level']),
    controller: base.curriculum.controller,
    seeds,
    ...(args.init ? { init: args.init } : {}),
  };
  console.log(
    `bench:proposer --part ${args.part} — preset ${args.preset} (${base.steps} steps × ${base.batch} tasks × ${base.group} answers, maxLevel ${base.maxLevel}, controller ${base.curriculum.controller}), seeds ${seeds.join(',')} (replay with --seeds ${seeds.join(',')})`,
  );
  const runsDir = join(tmpdir(), `cogen-bench-proposer-${process.pid}`);
  mkdirSync(runsDir, { recursive: true });
  const arms = args.part === 'grammar' ? (['fixed', 'learned'] as const) : (['generators', 'self-play'] as const);
  const grammarRows: GrammarRow[] = [];
  const selfPlayRows: SelfPlayRow[] = [];
  for (const seed of seeds) {
    for (const proposer of arms) {
      const proposerConfig =
        proposer === 'learned'
          ? { proposer: { learned: { enabled: true } } }
          : proposer === 'self-play'
            ? { proposer: { selfPlay: { enabled: true } } }
            : {};
      const config = loadPreset(args.preset, { ...over, seed, ...proposerConfig });
      const t0 = Date.now();
      const summary = await startRun(config, { runsDir, preset: args.preset, runId: `${proposer}-${seed}` });
      const wallS = (Date.now() - t0) / 1000;
      const tasks = freshTasks(summary.dir);
      const forked = proposer === 'learned' ? await forkedMeasure(summary.dir, config) : undefined;
      const common = {
        seed,
        freshTasks: tasks.length,
        learnableShare: learnable(tasks),
        distinctPrograms: new Set(tasks.map((r) => r.hash)).size,
        probeAccuracy: summary.probeAccuracy,
        wallS,
      };
      const third = (k: number) => tasks.filter((t) => Math.min(2, Math.floor(((t.step - 1) * 3) / base.steps)) === k);
      if (proposer === 'fixed' || proposer === 'learned') {
        const row: GrammarRow = {
          ...common,
          proposer,
          learnableByThird: [0, 1, 2].map((k) => learnable(third(k))),
          mastered: summary.skillsMastered.length,
          ...(forked ? { forked } : {}),
        };
        grammarRows.push(row);
        const rec: GrammarRecord = { ...setup, rows: grammarRows, summary: summariseGrammar(grammarRows, seeds) };
        record.grammar = [...(record.grammar ?? []).filter((r) => !sameSetting(r, setup)), rec];
        console.log(
          `seed ${seed} ${proposer.padEnd(7)}  fresh ${row.freshTasks}  learnable ${(100 * row.learnableShare).toFixed(1)}% (${row.learnableByThird!.map((x) => `${(100 * x).toFixed(0)}%`).join(' / ')})  distinct ${row.distinctPrograms}  mastered ${row.mastered}  probe ${(100 * row.probeAccuracy).toFixed(1)}%${forked ? `  forked: learned ${(100 * forked.learned).toFixed(1)}% fixed ${(100 * forked.fixed).toFixed(1)}%` : ''}  ${wallS.toFixed(0)} s`,
        );
      } else {
        const row: SelfPlayRow = { ...common, proposer, learnableByThird: [0, 1, 2].map((k) => learnable(third(k))) };
        if (proposer === 'self-play') Object.assign(row, selfPlayCounts(summary.dir, tasks));
        selfPlayRows.push(row);
        record.selfPlay = {
          ...setup,
          rows: selfPlayRows,
          summary: summariseSelfPlay(selfPlayRows, seeds, generatorCandidatesPerDraft(args.preset, setup.maxLevel)),
        };
        console.log(
          `seed ${seed} ${proposer.padEnd(10)}  fresh ${row.freshTasks}  learnable ${row.learnableByThird.map((x) => `${(100 * x).toFixed(0)}%`).join(' / ')}  distinct ${row.distinctPrograms}  probe ${(100 * row.probeAccuracy).toFixed(1)}%${row.drafts !== undefined ? `  valid ${row.valid}/${row.drafts}  accepted ${row.accepted}  candidates ${row.candidates}  fallback ${row.fallback}` : ''}  ${wallS.toFixed(0)} s`,
        );
      }
      rmSync(summary.dir, { recursive: true, force: true });
      save();
    }
  }
  rmSync(runsDir, { recursive: true, force: true });
}

/** The forked measure of a learned run (bench/proposer-fork.ts), 32 draws per arm and proposer at each point. */
async function forkedMeasure(dir: string, config: ReturnType<typeof loadPreset>): Promise<GrammarRow['forked']> {
  const every = args['fork-every']
    ? Number(args['fork-every'])
    : config.checkpointEvery * Math.max(1, Math.ceil(config.steps / 5 / config.checkpointEvery));
  const points = await forkedShares(dir, config, { perArm: 32, every });
  const m = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  return { learned: m(points.map((p) => p.learned)), fixed: m(points.map((p) => p.fixed)), points };
}

/** A self-play run's drafts by outcome (proposals rows) and its decoding counts (metrics). */
function selfPlayCounts(dir: string, tasks: { proposer: string }[]): Partial<SelfPlayRow> {
  const db = new Database(join(dir, 'run.db'), { readonly: true });
  try {
    const outcomes = db.prepare('SELECT outcome, COUNT(*) AS n FROM proposals GROUP BY outcome').all() as {
      outcome: string;
      n: number;
    }[];
    const n = (o: string) => outcomes.find((x) => x.outcome === o)?.n ?? 0;
    const sent = outcomes.filter((x) => x.outcome !== 'exhausted').reduce((a, x) => a + x.n, 0);
    const metrics = (db.prepare('SELECT data FROM metrics').all() as { data: string }[]).map(
      (r) => JSON.parse(r.data) as Record<string, number>,
    );
    return {
      drafts: sent,
      valid: n('accepted') + n('duplicate'),
      accepted: n('accepted'),
      exhausted: n('exhausted'),
      candidates: metrics.reduce((a, m) => a + (m['selfPlay.candidates'] ?? 0), 0),
      fallback: tasks.filter((t) => t.proposer !== 'self-play@1').length,
    };
  } finally {
    db.close();
  }
}

if (!args.rerender) await runPart();
else {
  // the summaries again from the rows (records merged by hand, or written by an older version)
  for (const g of record.grammar ?? []) g.summary = summariseGrammar(g.rows, g.seeds);
  if (record.selfPlay)
    record.selfPlay.summary = summariseSelfPlay(
      record.selfPlay.rows,
      record.selfPlay.seeds,
      generatorCandidatesPerDraft(record.selfPlay.preset, record.selfPlay.maxLevel),
    );
}
save();
const f = (x: number, d = 3) => (Number.isFinite(x) ? x.toFixed(d) : '-');
const pc = (x: number) => (Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : '-');
const setupLine = (s: Setup) =>
  `Preset \`${s.preset}\` (${s.steps} steps × ${s.batch} tasks × ${s.group} answers, maxLevel ${s.maxLevel}, controller ${s.controller}, wasm${s.init ? `, solver from ${s.init}` : ''}), seeds ${s.seeds.join(', ')} (drawn at random; \`--seeds ${s.seeds.join(',')}\` replays them).`;
const md = [
  '# bench:proposer — proposers that learn against the fixed generators',
  '',
  `Generated by bench/proposer.ts (\`npm run bench:proposer -- --part grammar|self-play\`); ${new Date().toISOString().slice(0, 10)}.`,
  '',
];
for (const g of record.grammar ?? []) {
  const s = g.summary;
  md.push(
    `## Learned grammar proposer against the fixed generators (controller ${g.controller}${g.init ? ', solver started from a checkpoint' : ''})`,
    '',
    setupLine(g),
    '',
    '| seed | proposer | fresh tasks | learnable share | by thirds of the run | distinct programs | mastered | probe accuracy | wall s |',
    '|---|---|---|---|---|---|---|---|---|',
    ...g.rows.map(
      (r) =>
        `| ${r.seed} | ${r.proposer} | ${r.freshTasks} | ${pc(r.learnableShare)} | ${r.learnableByThird?.map(pc).join(' / ') ?? '-'} | ${r.distinctPrograms} | ${r.mastered} | ${pc(r.probeAccuracy)} | ${r.wallS.toFixed(0)} |`,
    ),
    '',
    '| measure | fixed | learned | learned vs fixed | target | met |',
    '|---|---|---|---|---|---|',
    `| learnable share (mean over the run) | ${f(s.learnableShare.fixed)} | ${f(s.learnableShare.learned)} | ×${f(s.learnableShare.ratio, 2)} | ≥ ×1.5 | ${s.learnableShare.met ? 'yes' : 'no'} |`,
    ...(s.learnableShareLastThird
      ? [
          `| learnable share, last third of the run (${s.learnableShareLastThird.n} seeds with thirds; not the target's measure) | ${f(s.learnableShareLastThird.fixed)} | ${f(s.learnableShareLastThird.learned)} | ×${f(s.learnableShareLastThird.ratio, 2)} | | |`,
        ]
      : []),
    `| distinct programs (mean) | ${f(s.distinctPrograms.fixed, 1)} | ${f(s.distinctPrograms.learned, 1)} | ×${f(s.distinctPrograms.ratio, 2)} | ≥ ×0.9 | ${s.distinctPrograms.met ? 'yes' : 'no'} |`,
    `| skills mastered, paired difference | | | ${f(s.mastered.mean, 2)} [${f(s.mastered.lo, 2)}, ${f(s.mastered.hi, 2)}] | interval reaches ≥ 0 | ${s.mastered.met ? 'yes' : 'no'} |`,
    `| probe accuracy, paired difference | | | ${f(s.probeAccuracy.mean)} [${f(s.probeAccuracy.lo)}, ${f(s.probeAccuracy.hi)}] | interval reaches ≥ 0 | ${s.probeAccuracy.met ? 'yes' : 'no'} |`,
    '',
    ...forkedLines(g),
  );
}
/** The forked measure's tables: per seed and checkpoint, and per arm pooled (band, no answer right, all right). */
function forkedLines(g: GrammarRecord): string[] {
  const s = g.summary.forked;
  if (!s) return [];
  const rows = g.rows.filter((r) => r.forked);
  return [
    `Forked measure (${s.n} seeds): at checkpoints of each learned run, 32 fresh tasks per arm from each proposer (the learned one in its state at that step), answered by that run's solver at that step (${g.group} samples each).`,
    '',
    '| seed | learnable share at each checkpoint, learned / fixed | mean learned | mean fixed |',
    '|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.seed} | ${r.forked!.points.map((p) => `${p.step}: ${pc(p.learned)} / ${pc(p.fixed)}`).join(', ')} | ${pc(r.forked!.learned)} | ${pc(r.forked!.fixed)} |`,
    ),
    '',
    '| arm (pooled over seeds and checkpoints) | learnable, learned / fixed | none right, learned / fixed | all right, learned / fixed |',
    '|---|---|---|---|',
    ...Object.entries(s.byArm).map(
      ([a, v]) =>
        `| ${a} | ${pc(v.learned)} / ${pc(v.fixed)} | ${pc(v.learnedNone)} / ${pc(v.fixedNone)} | ${pc(v.learnedAll)} / ${pc(v.fixedAll)} |`,
    ),
    '',
    '| measure | fixed | learned | learned vs fixed | paired difference (95 %) |',
    '|---|---|---|---|---|',
    `| forked learnable share (mean over checkpoints and seeds) | ${f(s.fixed)} | ${f(s.learned)} | ×${f(s.ratio, 2)} | ${f(s.paired.mean)} [${f(s.paired.lo)}, ${f(s.paired.hi)}] |`,
    '',
  ];
}

const sp = record.selfPlay;
if (sp) {
  const s = sp.summary;
  md.push(
    "## Self-play (experimental): the solver's network proposes, against a generators-only run",
    '',
    setupLine(sp),
    '',
    '| seed | proposer | fresh tasks | learnable share, thirds of the run | distinct programs | probe accuracy | drafts valid / sent | accepted (new) | candidates decoded | fresh tasks from the fallback | wall s |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
    ...sp.rows.map(
      (r) =>
        `| ${r.seed} | ${r.proposer} | ${r.freshTasks} | ${r.learnableByThird.map(pc).join(' / ')} | ${r.distinctPrograms} | ${pc(r.probeAccuracy)} | ${r.drafts === undefined ? '' : `${r.valid} / ${r.drafts}`} | ${r.accepted ?? ''} | ${r.candidates ?? ''} | ${r.fallback ?? ''} | ${r.wallS.toFixed(0)} |`,
    ),
    '',
    '| measure | generators | self-play | target | met |',
    '|---|---|---|---|---|',
    `| valid-proposal rate (sandbox: runs, deterministic, in limits; duplicates count as valid) | | ${pc(s.validRate.value)} | ≥ 90% | ${s.validRate.met ? 'yes' : 'no'} |`,
    `| accepted as new tasks (no duplicate) / drafts sent | | ${pc(s.acceptedRate)} | | |`,
    `| candidates decoded per draft (the rest refused by the reference interpreter; generators: drawn evenly over the arms) | ${f(s.generatorCandidatesPerDraft, 2)} | ${f(s.candidatesPerDraft, 2)} | | |`,
    `| valid programs / programs decoded (candidate level: the interpreter's refusals count as invalid; generators: drafts / candidates) | ${pc(1 / s.generatorCandidatesPerDraft)} | ${pc(s.validPerCandidate)} | ≥ 90% | ${s.validPerCandidate >= 0.9 ? 'yes' : 'no'} |`,
    ...[0, 1, 2].map(
      (k) =>
        `| learnable share, third ${k + 1} of the run (mean) | ${pc(s.learnableByThird.generators[k]!)} | ${pc(s.learnableByThird.selfPlay[k]!)} | | |`,
    ),
    `| distinct programs among fresh tasks (mean) | ${f(s.distinctPrograms.generators, 1)} | ${f(s.distinctPrograms.selfPlay, 1)} | | |`,
    `| held-out probe accuracy (mean) | ${pc(s.probeAccuracy.generators)} | ${pc(s.probeAccuracy.selfPlay)} | | |`,
    `| probe accuracy, paired difference self-play − generators | | ${f(s.probeAccuracy.paired.mean)} [${f(s.probeAccuracy.paired.lo)}, ${f(s.probeAccuracy.paired.hi)}] | reported | |`,
    '',
  );
}
writeFileSync(join(args.out, 'proposer.md'), md.join('\n'));
console.log(md.join('\n'));
