// bench:learn — does RL from random initialisation master the level-0 skills? Runs a preset (the
// `learn` preset by default: logic and arithmetic level 0, deduction) on seeds drawn at random
// (printed; `--seeds 1,23` replays), one after the other, and reads each run's store: the step at
// which each of the six level-0 skills (arith.add, arith.sub, arith.mul, logic.and, logic.or,
// logic.not) was first mastered under the run's mastery rule (learnAt and the margin above the
// probes' trivial baseline), whether it is mastered at the end, and its last probe accuracy beside
// the bar it must reach. The held-out set is the run's probes (src/run/probes.ts: balanced against
// trivial policies, never trained on). Beside the runs' greedy probes, the final policy's sampled
// pass@1 on the same probes (one answer each at the sampling temperature).
// Writes bench/results/learn-seeds.json after every seed, and every 50 steps of a seed under way
// (marked partial). Seeds in parallel: one process per seed, each with its own --out, then --merge.
//
//   npm run bench:learn [-- --seeds random:3 --steps N (default: the preset's) --backend wasm --preset learn]
//   npx tsx bench/learn.ts --merge DIR,DIR,... [--out bench/results]
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createMasteryTracker, masteryBar } from '../curricula/index.js';
import {
  answerKind,
  answerShape,
  createPolicy,
  createRng,
  loadPreset,
  renderCompact,
  RunStore,
  startRun,
  type RunConfig,
} from '../src/index.js';
import { buildProbes, latestSkillProbes } from '../src/run/testing.js';
import { sandboxOf, taskSpace } from '../src/run/testing.js';
import { verifyTasks } from '../src/run/testing.js';
import { median, seedsArg } from './stats.js';

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

export const LEVEL0_SKILLS = ['arith.add', 'arith.sub', 'arith.mul', 'logic.and', 'logic.or', 'logic.not'];

interface SkillRow {
  skill: string;
  /** First step the skill was learned (a probe round passed the mastery rule), or null. */
  firstMastered: number | null;
  masteredAtEnd: boolean;
  lastAccuracy: number | null;
  baseline: number | null;
  bar: number | null;
}
interface SeedRun {
  seed: number;
  backend: string;
  steps: number;
  stepsDone: number;
  partial: boolean;
  wallSeconds: number;
  skills: SkillRow[];
  /** Per arm: greedy held-out at each probe round; and the final policy's sampled pass@1. */
  curve: Record<string, number>[];
  sampledPass1?: Record<string, number>;
}

/** Skill rows from a run store (while the run goes on too: the store is SQLite in WAL mode). */
function readRun(dir: string): { skills: SkillRow[]; curve: Record<string, number>[]; stepsDone: number } {
  const store = RunStore.open(dir, { create: false });
  try {
    const metrics = store.metrics();
    const events = store.skillEvents();
    const plan = JSON.parse(store.getMeta('probePlan') ?? '{"skills":{}}') as {
      learnAt: number;
      margin: number;
      skills: Record<string, { baseline: number }>;
    };
    const latest = latestSkillProbes(metrics);
    const mastered = new Set<string>();
    for (const e of events) {
      if (e.event === 'learned') mastered.add(e.skillId);
      else mastered.delete(e.skillId);
    }
    const skills = LEVEL0_SKILLS.map((skill): SkillRow => {
      const set = plan.skills[skill];
      return {
        skill,
        firstMastered: events.find((e) => e.skillId === skill && e.event === 'learned')?.step ?? null,
        masteredAtEnd: mastered.has(skill),
        lastAccuracy: latest[skill]?.accuracy ?? null,
        baseline: set?.baseline ?? null,
        bar: set ? masteryBar(set.baseline, plan) : null,
      };
    });
    let clock = 0;
    const curve: Record<string, number>[] = [];
    for (const m of metrics) {
      clock += Number(m.ms) / 1000;
      const arms = Object.entries(m).filter(([k, v]) => k.startsWith('probe.') && typeof v === 'number');
      if (arms.length) curve.push({ step: Number(m.step), seconds: Math.round(clock), ...Object.fromEntries(arms) });
    }
    return { skills, curve, stepsDone: metrics.length ? Number(metrics.at(-1)!.step) : 0 };
  } finally {
    store.close();
  }
}

/** The final checkpoint's sampled pass@1 on the run's probes (drawn again, as the run drew them), per arm. */
async function sampledPass1(config: RunConfig, dir: string): Promise<Record<string, number>> {
  const store = RunStore.open(dir, { create: false });
  const ckpt = store.latestCheckpoint();
  store.close();
  if (!ckpt) return {};
  const { arms, skills } = taskSpace(config);
  const sandbox = await sandboxOf(config);
  const probes = await buildProbes(
    sandbox,
    arms,
    skills,
    { perArm: config.probes.perArm, mastery: createMasteryTracker(config.curriculum.mastery).opts },
    createRng(`${config.seed}/probes`),
    new Set(),
    renderCompact,
  );
  const policy = await createPolicy(config.solver, { seed: config.seed, totalSteps: config.steps, log: () => {} });
  await policy.load(ckpt.path);
  const answers = (
    await policy.sample(
      probes.map((p) => ({ text: p.prompt, kind: answerKind(p.task.type), shape: answerShape(p.task) })),
      1,
    )
  ).answers.map((g) => g[0]!);
  policy.dispose();
  const verdicts = await verifyTasks(
    sandbox,
    probes.map((p, i) => ({ task: p.task, answer: answers[i]! })),
  );
  await sandbox.close();
  const byArm: Record<string, number[]> = {};
  probes.forEach((p, i) =>
    (byArm[`${p.task.family}/${p.task.level}/${p.task.type}`] ??= []).push(verdicts[i]!.reward >= 1 ? 1 : 0),
  );
  return Object.fromEntries(Object.entries(byArm).map(([k, xs]) => [k, xs.reduce((a, b) => a + b, 0) / xs.length]));
}

const runs: SeedRun[] = [];
const startedAll = Date.now();
const { seeds, drawn } = args.merge ? { seeds: [], drawn: false } : seedsArg(args.seeds);

async function runSeed(seed: number): Promise<SeedRun> {
  const config = loadPreset(args.preset, {
    seed,
    ...(args.steps ? { steps: Number(args.steps) } : {}),
    solver: { backend: args.backend },
  });
  const runsDir = join(tmpdir(), `cogen-bench-learn-${process.pid}`);
  const started = Date.now();
  const runId = `learn-${seed}`;
  const dir = join(runsDir, runId);
  process.stderr.write(`seed ${seed}: run store ${dir}\n`);
  const row = (partial: boolean, backend = ''): SeedRun => ({
    seed,
    backend,
    steps: config.steps,
    partial,
    wallSeconds: (Date.now() - started) / 1000,
    ...readRun(dir),
  });
  const summary = await startRun(config, {
    runsDir,
    preset: args.preset,
    runId,
    log: (line) => process.stderr.write(`${line}\n`),
    onProgress: (p) => {
      if (p.step % 50 !== 0) return;
      process.stderr.write(
        `seed ${seed} step ${p.step}: reward ${p.meanReward.toFixed(3)} solve ${(100 * p.solveRate).toFixed(1)}% skills ${p.skillsMastered}\n`,
      );
      write([...runs, row(true)]);
    },
  });
  return { ...row(false, summary.backend), sampledPass1: await sampledPass1(config, summary.dir) };
}

const f3 = (x: number | null | undefined): string => (x === null || x === undefined ? '-' : x.toFixed(3));
/** Per skill over seeds: how many mastered it, the median first step (a seed that never did counts as beyond every step). */
const summarise = (rows: SeedRun[]) => ({
  level0MasteredPerSeed: rows.map((r) => r.skills.filter((s) => s.firstMastered !== null).length),
  medianLevel0Mastered: median(rows.map((r) => r.skills.filter((s) => s.firstMastered !== null).length)),
  skills: LEVEL0_SKILLS.map((skill) => {
    const s = rows.map((r) => r.skills.find((x) => x.skill === skill)!);
    const by = s.filter((x) => x.firstMastered !== null).length;
    return {
      skill,
      masteredBy: by,
      seeds: s.length,
      medianFirstStep: by * 2 > s.length ? median(s.map((x) => x.firstMastered ?? Infinity)) : null,
      masteredAtEnd: s.filter((x) => x.masteredAtEnd).length,
    };
  }),
});

function write(
  rows: SeedRun[],
  wallSeconds = (Date.now() - startedAll) / 1000,
  seedsDrawn = drawn,
  preset = args.preset,
): void {
  mkdirSync(args.out, { recursive: true });
  writeFileSync(
    join(args.out, 'learn-seeds.json'),
    JSON.stringify(
      {
        date: new Date().toISOString(),
        preset,
        seeds: rows.map((r) => r.seed),
        seedsDrawn,
        wallSeconds,
        summary: summarise(rows),
        runs: rows,
      },
      null,
      2,
    ) + '\n',
  );
}

function printSeed(run: SeedRun): void {
  console.log(
    `\nseed ${run.seed}: ${run.partial ? `${run.stepsDone} of ${run.steps} steps (partial)` : `${run.steps} steps`}, ${run.backend || 'backend not recorded yet'}, ${run.wallSeconds.toFixed(0)} s wall`,
  );
  console.log(
    '| skill | first mastered at step | mastered at the end | last probe accuracy | needs | trivial baseline |',
  );
  console.log('| --- | --- | --- | --- | --- | --- |');
  for (const s of run.skills)
    console.log(
      `| ${s.skill} | ${s.firstMastered ?? 'never'} | ${s.masteredAtEnd ? 'yes' : 'no'} | ${f3(s.lastAccuracy)} | ${f3(s.bar)} | ${f3(s.baseline)} |`,
    );
  const last = run.curve.at(-1);
  if (last)
    console.log(
      `greedy held-out at step ${last.step}: ${Object.entries(last)
        .filter(([k]) => k.startsWith('probe.'))
        .map(([k, v]) => `${k.slice(6)} ${f3(v)}`)
        .join(', ')}${
        run.sampledPass1
          ? `; sampled pass@1: ${Object.entries(run.sampledPass1)
              .map(([k, v]) => `${k} ${f3(v)}`)
              .join(', ')}`
          : ''
      }`,
    );
}

function printSummary(rows: SeedRun[], wallSeconds: number, preset = args.preset): void {
  const s = summarise(rows);
  console.log(
    `\nbench:learn, preset ${preset}, ${rows.length} seeds (${rows.map((r) => r.seed).join(', ')}), ${wallSeconds.toFixed(0)} s wall`,
  );
  console.log(
    `level-0 skills mastered per seed: ${s.level0MasteredPerSeed.join(', ')} of 6; median ${s.medianLevel0Mastered}`,
  );
  console.log('| skill | seeds that mastered it | median first step | mastered at the end |');
  console.log('| --- | --- | --- | --- |');
  for (const k of s.skills)
    console.log(
      `| ${k.skill} | ${k.masteredBy} of ${k.seeds} | ${k.medianFirstStep ?? 'not by most'} | ${k.masteredAtEnd} of ${k.seeds} |`,
    );
  console.log(`wrote ${join(args.out, 'learn-seeds.json')}`);
}

if (args.merge) {
  // Seeds run in parallel, one process and --out folder each; the wall time is the longest of theirs.
  const reports = args.merge.split(',').map(
    (dir) =>
      JSON.parse(readFileSync(join(dir, 'learn-seeds.json'), 'utf8')) as {
        runs: SeedRun[];
        wallSeconds: number;
        seedsDrawn: boolean;
        preset: string;
      },
  );
  const rows = reports.flatMap((r) => r.runs);
  const wall = Math.max(...reports.map((r) => r.wallSeconds));
  // the merged runs' own preset (this process's --preset is only its default)
  const preset = [...new Set(reports.map((r) => r.preset))].join(',');
  write(
    rows,
    wall,
    reports.every((r) => r.seedsDrawn),
    preset,
  );
  rows.forEach(printSeed);
  printSummary(rows, wall, preset);
} else {
  console.log(`bench:learn: preset ${args.preset}, seeds${drawn ? ' (drawn at random)' : ''} ${seeds.join(',')}`);
  for (const seed of seeds) {
    const run = await runSeed(seed);
    runs.push(run);
    printSeed(run);
    write(runs);
  }
  printSummary(runs, (Date.now() - startedAll) / 1000);
}
