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
//   rest with a 95 % interval (t distribution, n − 1 degrees of freedom). Targets (proposer.md):
//   learnable share ≥ 1.5×, distinct ≥ 90 % of the fixed, mastered and probe accuracy not lower
//   beyond the interval.
// self-play  the solver's own network proposing (experimental) against a generators-only run of the
//   same length: valid-proposal rate (target ≥ 90 %), learnable share by thirds of the run,
//   novelty (distinct programs, duplicates refused), held-out probe accuracy (paired difference).
//
// Writes bench/results/proposer.json (after every run; the other part's record is kept) and
// proposer.md (both parts; the summaries and the report are in bench/proposer-report.ts).
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
import { forkedShares } from './proposer-fork.js';
import { drawSeeds } from './stats.js';
import {
  proposerMarkdown,
  summariseGrammar,
  summariseSelfPlay,
  type GrammarRecord,
  type GrammarRow,
  type Record_,
  type SelfPlayRow,
  type Setup,
} from './proposer-report.js';

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
const md = proposerMarkdown(record);
writeFileSync(join(args.out, 'proposer.md'), md);
console.log(md);
