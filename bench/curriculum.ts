// The headline curriculum benchmark (bench/results/curriculum.md): the same solver, the same budget
// of solver steps, several seeds; every controller against `uniform` and `hardest`. For each run it
// records the held-out probe accuracy curve (the loop's probes, every K steps), skill events (steps
// to master), and, at the end, greedy accuracy per family and level on one fixed held-out set
// shared by all runs. Writes bench/results/curriculum.{json,md,svg}.
//
// Seeds are drawn at random unless given (`--seeds random:8`, the default, prints them; `--seeds
// 1,2,3` replays), and every controller runs on the same seeds, so each comparison with uniform is
// paired: per controller the mean with a 95 % bootstrap interval, and against uniform the paired
// difference with its interval and a sign-flip test (bench/stats.ts). `--under-test <controller>`
// names the controller the target is judged on (name it before the final run; the others are
// exploratory). Sized for a 2-core machine (≈ 5 min idle per seed with all seven controllers, so
// ≈ 40 min for 8 seeds): 120 steps, deduction only, levels 0–2 of arith and logic, the default
// small solver.
//
//   npm run bench:curriculum [-- --steps 120 --seeds random:8 --under-test learnability --controllers uniform,learnability --out bench/results]
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { controllerNames, type ControllerName } from '../curricula/index.js';
import { armKey, type TaskArm } from '../curricula/testing.js';
import { drawSeeds } from './stats.js';
import {
  createPolicy,
  createSandbox,
  generateTask,
  parseConfig,
  renderCompact,
  RunStore,
  startRun,
  verifyMany,
  createRng,
  answerKind,
  answerShape,
  type RunConfig,
  type Task,
} from '../src/index.js';
import { mean } from '../core/stats.js';
import { writeReports, type ReportSetup, type RunRecord } from './curriculum-report.js';

const { values: args } = parseArgs({
  options: {
    steps: { type: 'string', default: process.env.BENCH_STEPS ?? '120' },
    seeds: { type: 'string', default: process.env.BENCH_SEEDS ?? 'random:8' },
    'under-test': { type: 'string', default: '' },
    controllers: { type: 'string', default: controllerNames.join(',') },
    families: { type: 'string', default: 'arith,logic' },
    types: { type: 'string', default: 'deduction' },
    'max-level': { type: 'string', default: '2' },
    batch: { type: 'string', default: '8' },
    group: { type: 'string', default: '8' },
    'probe-every': { type: 'string', default: '6' },
    'probe-per-arm': { type: 'string', default: '4' },
    'heldout-per-arm': { type: 'string', default: '4' },
    out: { type: 'string', default: 'bench/results' },
    /** Recompute aggregates, the simulated section and the reports from an existing curriculum.json (no solver runs; pass the same flags as the run). */
    rerender: { type: 'boolean', default: false },
    /** Keep the runs already in curriculum.json (same flags) and do only the missing ones. */
    resume: { type: 'boolean', default: false },
  },
});

const steps = Number(args.steps);
const drawn = /^random:(\d+)$/.exec(args.seeds);
// --resume and --rerender keep the seeds recorded in curriculum.json (see main).
let seeds = drawn ? drawSeeds(Number(drawn[1])) : args.seeds.split(',').map(Number);
if (seeds.some((s) => !Number.isInteger(s)))
  throw new Error(`--seeds: expected random:N or a list of integers, got "${args.seeds}"`);
const controllers = args.controllers.split(',') as ControllerName[];
for (const c of controllers)
  if (!controllerNames.includes(c)) throw new Error(`unknown controller ${c} (known: ${controllerNames.join(', ')})`);
const underTest = args['under-test'] as ControllerName | '';
if (underTest && !controllers.includes(underTest))
  throw new Error(`--under-test ${underTest} is not among --controllers (${controllers.join(', ')})`);
const families = args.families.split(',');
const types = args.types.split(',');
const maxLevel = Number(args['max-level']);

function configFor(controller: ControllerName, seed: number): RunConfig {
  return parseConfig(
    {
      name: `bench-${controller}`,
      seed,
      steps,
      batch: Number(args.batch),
      group: Number(args.group),
      families,
      maxLevel,
      types,
      curriculum: { controller, explore: 0.1 },
      probes: { every: Number(args['probe-every']), perArm: Number(args['probe-per-arm']) },
      checkpointEvery: steps,
      graph: { kind: 'embedded' },
    },
    'bench',
  );
}

/** Normalised area under the curve: trapezoids between probe points, divided by their span (a lone point is its value). */
function auc(curve: [number, number][]): number {
  if (curve.length === 0) return 0;
  if (curve.length === 1) return curve[0]![1];
  let area = 0;
  for (let i = 1; i < curve.length; i++) {
    const [x0, y0] = curve[i - 1]!;
    const [x1, y1] = curve[i]!;
    area += ((x1 - x0) * (y0 + y1)) / 2;
  }
  return area / (curve[curve.length - 1]![0] - curve[0]![0]);
}

async function buildHeldout(arms: TaskArm[], perArm: number): Promise<{ arm: TaskArm; task: Task }[]> {
  const sandbox = await createSandbox({});
  try {
    const rng = createRng('bench/heldout');
    const seen = new Set<string>();
    const out: { arm: TaskArm; task: Task }[] = [];
    for (const arm of arms)
      for (let i = 0; i < perArm; i++) {
        const task = await generateTask(sandbox, { ...arm, rng: rng.fork(`${armKey(arm)}/${i}`), seen });
        out.push({ arm, task });
      }
    return out;
  } finally {
    await sandbox.close();
  }
}

async function evaluate(config: RunConfig, checkpointDir: string, heldout: { arm: TaskArm; task: Task }[]) {
  const policy = await createPolicy(config.solver, { seed: config.seed, totalSteps: config.steps, log: () => {} });
  const sandbox = await createSandbox({});
  try {
    await policy.load(checkpointDir);
    const answers = await policy.greedy(
      heldout.map((h) => ({ text: renderCompact(h.task), kind: answerKind(h.task.type), shape: answerShape(h.task) })),
    );
    const verdicts = await verifyMany(
      sandbox,
      heldout.map((h, i) => ({ task: h.task, answer: answers[i]! })),
    );
    const byCell = new Map<string, number[]>();
    heldout.forEach((h, i) => {
      const k = `${h.arm.family}/${h.arm.level}`;
      const xs = byCell.get(k) ?? [];
      xs.push(verdicts[i]!.reward >= 1 ? 1 : 0);
      byCell.set(k, xs);
    });
    const cells: Record<string, number> = {};
    for (const [k, xs] of [...byCell].sort()) cells[k] = mean(xs);
    return { cells, overall: mean(verdicts.map((v) => (v.reward >= 1 ? 1 : 0))) };
  } finally {
    policy.dispose();
    await sandbox.close();
  }
}

async function runOne(
  controller: ControllerName,
  seed: number,
  heldout: { arm: TaskArm; task: Task }[],
  runsDir: string,
): Promise<RunRecord> {
  const config = configFor(controller, seed);
  const runId = `bench-${controller}-${seed}`;
  const summary = await startRun(config, { runsDir, preset: 'bench', runId });
  const store = RunStore.open(summary.dir, { create: false });
  try {
    const metrics = store.metrics();
    const curve: [number, number][] = [];
    const probeEvery = config.probes.every;
    for (const m of metrics) {
      const step = Number(m.step);
      if (step % probeEvery === 0 || step === config.steps) curve.push([step, Number(m.probeAccuracy)]);
    }
    const stepsToMaster: Record<string, number> = {};
    for (const e of store.skillEvents())
      if (e.event === 'learned' && !(e.skillId in stepsToMaster)) stepsToMaster[e.skillId] = e.step;
    const ck = store.latestCheckpoint();
    const ev = ck ? await evaluate(config, ck.path, heldout) : { cells: {}, overall: 0 };
    return {
      controller,
      seed,
      wallMs: summary.wallMs,
      backend: summary.backend,
      curve,
      auc: auc(curve),
      finalProbeAccuracy: summary.probeAccuracy,
      heldout: ev.cells,
      heldoutOverall: ev.overall,
      skillsMastered: summary.skillsMastered,
      stepsToMaster,
      meanLevel: mean(metrics.map((m) => Number(m.meanLevel))),
    };
  } finally {
    store.close();
  }
}

/** The settings the report states, from the arguments (and the seeds as they stand). */
const reportSetup = (): ReportSetup => ({
  out: args.out,
  steps,
  seeds,
  controllers,
  families,
  types,
  maxLevel,
  batch: args.batch,
  group: args.group,
  probeEvery: args['probe-every'],
  probePerArm: args['probe-per-arm'],
  heldoutPerArm: args['heldout-per-arm'],
});

async function main(): Promise<void> {
  const t0 = Date.now();
  if (args.rerender) {
    const old = JSON.parse(readFileSync(join(args.out, 'curriculum.json'), 'utf8')) as {
      meta: Record<string, unknown>;
      runs: RunRecord[];
    };
    writeReports(old.runs, old.meta, reportSetup());
    return;
  }
  const runsDir = join(tmpdir(), `cogen-bench-curriculum-${process.pid}`);
  mkdirSync(runsDir, { recursive: true });
  mkdirSync(args.out, { recursive: true });
  const arms: TaskArm[] = families.flatMap((family) =>
    Array.from({ length: maxLevel + 1 }, (_, level) =>
      types.map((type) => ({ family, level, type }) as TaskArm),
    ).flat(),
  );
  const heldout = await buildHeldout(arms, Number(args['heldout-per-arm']));
  console.log(`held-out set: ${heldout.length} tasks over ${arms.length} arms`);
  const runs: RunRecord[] = [];
  const partial = join(args.out, 'curriculum.json');
  if (args.resume) {
    try {
      const old = JSON.parse(readFileSync(partial, 'utf8')) as { meta: { seeds?: number[] }; runs: RunRecord[] };
      runs.push(...old.runs);
      if (old.meta.seeds) seeds = old.meta.seeds;
      console.log(`resuming: ${runs.length} runs kept; seeds ${seeds.join(',')}`);
    } catch {
      console.log('nothing to resume');
    }
  }
  console.log(
    `seeds${drawn && !args.resume ? ' (drawn at random)' : ''}: ${seeds.join(',')}; controller under test: ${underTest || 'none named'}`,
  );
  const metaNow = () => ({
    steps,
    seeds,
    seedsDrawn: drawn !== null,
    underTest,
    families,
    types,
    maxLevel,
    batch: Number(args.batch),
    group: Number(args.group),
    probeEvery: Number(args['probe-every']),
    probePerArm: Number(args['probe-per-arm']),
    heldoutPerArm: Number(args['heldout-per-arm']),
    backend: runs[0]?.backend ?? 'n/a',
    totalWallS: Math.round((Date.now() - t0) / 1000),
    date: new Date().toISOString(),
  });
  try {
    for (const seed of seeds)
      for (const controller of controllers) {
        if (runs.some((r) => r.controller === controller && r.seed === seed)) continue;
        const r = await runOne(controller, seed, heldout, runsDir);
        runs.push(r);
        // Saved after every run, so an interrupted benchmark can --resume.
        writeFileSync(partial, JSON.stringify({ meta: { ...metaNow(), partial: true }, runs }, null, 2) + '\n');
        console.log(
          `${controller.padEnd(13)} seed ${seed}: probe ${r.finalProbeAccuracy.toFixed(3)}, held-out ${r.heldoutOverall.toFixed(3)}, AUC ${r.auc.toFixed(3)}, ` +
            `skills ${r.skillsMastered.length}, mean level ${r.meanLevel.toFixed(2)}, ${(r.wallMs / 1000).toFixed(0)} s`,
        );
      }
  } finally {
    rmSync(runsDir, { recursive: true, force: true });
  }
  writeReports(runs, metaNow(), reportSetup());
}

await main();
