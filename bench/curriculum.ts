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
import { simMarkdown, simSection } from './curriculum-sim.js';
import { bootstrapMean, drawSeeds, formatInterval, pairedDifference, type Interval, type Paired } from './stats.js';
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

interface RunRecord {
  controller: ControllerName;
  seed: number;
  wallMs: number;
  backend: string;
  /** [step, held-out probe accuracy] at each probe. */
  curve: [number, number][];
  /** Normalised area under the held-out accuracy curve (mean accuracy over the run). */
  auc: number;
  finalProbeAccuracy: number;
  /** Greedy accuracy on the shared held-out set, per "family/level" and overall. */
  heldout: Record<string, number>;
  heldoutOverall: number;
  skillsMastered: string[];
  /** Step of the first `learned` event of each skill. */
  stepsToMaster: Record<string, number>;
  meanLevel: number;
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

interface Aggregate {
  controller: ControllerName;
  curve: [number, number][];
  auc: number;
  finalProbeAccuracy: number;
  heldoutOverall: number;
  heldout: Record<string, number>;
  skillsMastered: number;
  stepsToMaster: Record<string, { mean: number; seeds: number }>;
  wallS: number;
  meanLevel: number;
  /** First probe step at which the seed-mean curve reaches uniform's final seed-mean probe accuracy. */
  stepsToUniformFinal: number | null;
}

function aggregate(runs: RunRecord[], uniformFinal: number | null): Aggregate[] {
  return controllers.map((controller) => {
    const rs = runs.filter((r) => r.controller === controller);
    const steps0 = rs[0]?.curve.map(([s]) => s) ?? [];
    const curve = steps0.map((s, i): [number, number] => [s, mean(rs.map((r) => r.curve[i]?.[1] ?? 0))]);
    const cells = [...new Set(rs.flatMap((r) => Object.keys(r.heldout)))].sort();
    const heldout = Object.fromEntries(cells.map((k) => [k, mean(rs.map((r) => r.heldout[k] ?? 0))]));
    const skills = [...new Set(rs.flatMap((r) => Object.keys(r.stepsToMaster)))].sort();
    const stepsToMaster = Object.fromEntries(
      skills.map((s) => {
        const xs = rs.flatMap((r) => (s in r.stepsToMaster ? [r.stepsToMaster[s]!] : []));
        return [s, { mean: mean(xs), seeds: xs.length }];
      }),
    );
    const reach = uniformFinal === null ? null : (curve.find(([, a]) => a >= uniformFinal && a > 0)?.[0] ?? null);
    return {
      controller,
      curve,
      auc: mean(rs.map((r) => r.auc)),
      finalProbeAccuracy: mean(rs.map((r) => r.finalProbeAccuracy)),
      heldoutOverall: mean(rs.map((r) => r.heldoutOverall)),
      heldout,
      skillsMastered: mean(rs.map((r) => r.skillsMastered.length)),
      stepsToMaster,
      wallS: mean(rs.map((r) => r.wallMs / 1000)),
      meanLevel: mean(rs.map((r) => r.meanLevel)),
      stepsToUniformFinal: reach,
    };
  });
}

const COLOURS = ['#444444', '#d62728', '#ff7f0e', '#1f77b4', '#2ca02c', '#9467bd', '#8c564b'];

function svgPlot(aggs: Aggregate[]): string {
  const W = 760,
    H = 440,
    L = 60,
    R = 170,
    T = 30,
    B = 50;
  const maxX = steps;
  const maxY = Math.max(0.05, ...aggs.flatMap((a) => a.curve.map(([, y]) => y))) * 1.1;
  const x = (s: number) => L + ((W - L - R) * s) / maxX;
  const y = (v: number) => H - B - ((H - T - B) * v) / maxY;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${L}" y="18" font-size="14">Held-out probe accuracy vs solver steps (mean of ${seeds.length} seeds)</text>`,
    `<line x1="${L}" y1="${H - B}" x2="${W - R}" y2="${H - B}" stroke="black"/>`,
    `<line x1="${L}" y1="${T}" x2="${L}" y2="${H - B}" stroke="black"/>`,
    `<text x="${(L + W - R) / 2}" y="${H - 12}" text-anchor="middle">solver steps</text>`,
    `<text x="16" y="${(T + H - B) / 2}" transform="rotate(-90 16 ${(T + H - B) / 2})" text-anchor="middle">held-out accuracy</text>`,
  ];
  for (let i = 0; i <= 5; i++) {
    const v = (maxY * i) / 5;
    parts.push(
      `<line x1="${L - 4}" y1="${y(v)}" x2="${W - R}" y2="${y(v)}" stroke="#eee"/><text x="${L - 8}" y="${y(v) + 4}" text-anchor="end">${v.toFixed(2)}</text>`,
    );
    const s = Math.round((maxX * i) / 5);
    parts.push(`<text x="${x(s)}" y="${H - B + 16}" text-anchor="middle">${s}</text>`);
  }
  aggs.forEach((a, i) => {
    const c = COLOURS[i % COLOURS.length]!;
    const pts = a.curve.map(([s, v]) => `${x(s).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    const dash = a.controller === 'uniform' || a.controller === 'hardest' ? ' stroke-dasharray="5,3"' : '';
    parts.push(`<polyline points="${pts}" fill="none" stroke="${c}" stroke-width="2"${dash}/>`);
    parts.push(
      `<line x1="${W - R + 12}" y1="${T + 10 + i * 18}" x2="${W - R + 36}" y2="${T + 10 + i * 18}" stroke="${c}" stroke-width="2"${dash}/>`,
    );
    parts.push(`<text x="${W - R + 42}" y="${T + 14 + i * 18}">${a.controller}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n');
}

function markdown(
  aggs: Aggregate[],
  stats: Stats[],
  runs: RunRecord[],
  meta: Record<string, unknown>,
  verdict: string[],
): string {
  const f2 = (v: number) => v.toFixed(3);
  const seedList = (meta.seeds as number[] | undefined) ?? seeds;
  const lines = [
    '# Curriculum benchmark',
    '',
    `Solver steps per run: ${steps}; seeds: ${seedList.join(', ')}${meta.seedsDrawn ? ' (drawn at random by the benchmark)' : ''}; controller under test: ${meta.underTest ? String(meta.underTest) : 'none named (all exploratory)'}; families: ${families.join(', ')}; levels 0–${maxLevel}; types: ${types.join(', ')}; ` +
      `batch ${args.batch} × group ${args.group}; probes every ${args['probe-every']} steps (${args['probe-per-arm']} per arm); ` +
      `final held-out set: ${args['heldout-per-arm']} tasks per arm, shared by all runs. Backend: ${String(meta.backend)}. Total wall time: ${String(meta.totalWallS)} s.`,
    '',
    "| controller | final probe acc | held-out acc (end) | AUC | steps to uniform's final | skills mastered | mean level | wall s/run |",
    '|---|---|---|---|---|---|---|---|',
    ...aggs.map(
      (a) =>
        `| ${a.controller} | ${f2(a.finalProbeAccuracy)} | ${f2(a.heldoutOverall)} | ${f2(a.auc)} | ${a.stepsToUniformFinal ?? '—'} | ${a.skillsMastered.toFixed(1)} | ${a.meanLevel.toFixed(2)} | ${a.wallS.toFixed(0)} |`,
    ),
    '',
    ...statsMarkdown(stats, runs, seedList),
    '## Held-out accuracy per family and level (end of run, mean over seeds)',
    '',
  ];
  const cells = [...new Set(aggs.flatMap((a) => Object.keys(a.heldout)))].sort();
  lines.push(`| controller | ${cells.join(' | ')} |`, `|---|${cells.map(() => '---').join('|')}|`);
  for (const a of aggs) lines.push(`| ${a.controller} | ${cells.map((c) => f2(a.heldout[c] ?? 0)).join(' | ')} |`);
  lines.push('', '## Steps to master each skill (mean over the seeds that mastered it; seeds in brackets)', '');
  const skills = [...new Set(aggs.flatMap((a) => Object.keys(a.stepsToMaster)))].sort();
  if (skills.length === 0) lines.push('No controller mastered any skill within the budget.');
  else {
    lines.push(`| controller | ${skills.join(' | ')} |`, `|---|${skills.map(() => '---').join('|')}|`);
    for (const a of aggs)
      lines.push(
        `| ${a.controller} | ${skills.map((s) => (a.stepsToMaster[s] ? `${a.stepsToMaster[s].mean.toFixed(0)} (${a.stepsToMaster[s].seeds})` : '—')).join(' | ')} |`,
      );
  }
  lines.push(
    '',
    '## Targets',
    '',
    ...verdict.map((v) => `- ${v}`),
    '',
    '![held-out accuracy vs steps](curriculum.svg)',
    '',
  );
  return lines.join('\n');
}

interface Stats {
  controller: ControllerName;
  auc: Interval;
  finalProbe: Interval;
  heldout: Interval;
  skills: Interval;
  /** Paired with uniform on the seeds both ran (absent for uniform, or without it). */
  vsUniform: { auc: Paired; heldout: Paired; skills: Paired } | null;
}

/** Per controller: means with 95 % bootstrap intervals, and paired differences against uniform. */
function statistics(runs: RunRecord[], seedList: number[]): Stats[] {
  const of = (c: ControllerName) => seedList.map((seed) => runs.find((r) => r.controller === c && r.seed === seed));
  const uni = of('uniform');
  const skills = (r: RunRecord) => r.skillsMastered.length;
  return controllers.map((controller) => {
    const rs = of(controller);
    const done = rs.filter((r): r is RunRecord => r !== undefined);
    const pairs = rs.flatMap((r, i) => (r && uni[i] ? [[r, uni[i]!] as const] : []));
    const paired = (f: (r: RunRecord) => number) =>
      pairedDifference(
        pairs.map(([a]) => f(a)),
        pairs.map(([, b]) => f(b)),
      );
    return {
      controller,
      auc: bootstrapMean(done.map((r) => r.auc)),
      finalProbe: bootstrapMean(done.map((r) => r.finalProbeAccuracy)),
      heldout: bootstrapMean(done.map((r) => r.heldoutOverall)),
      skills: bootstrapMean(done.map(skills)),
      vsUniform:
        controller === 'uniform' || pairs.length === 0
          ? null
          : { auc: paired((r) => r.auc), heldout: paired((r) => r.heldoutOverall), skills: paired(skills) },
    };
  });
}

function statsMarkdown(stats: Stats[], runs: RunRecord[], seedList: number[]): string[] {
  const paired = (x: Paired | undefined) => (x ? `${formatInterval(x)} (p ${x.p.toFixed(3)})` : '—');
  const lines = [
    `## Statistics over ${seedList.length} seeds (mean [95 % bootstrap interval]; against uniform: the paired difference, its interval and a sign-flip p)`,
    '',
    '| controller | held-out AUC | final probe acc | held-out acc (end) | skills mastered | Δ AUC vs uniform | Δ held-out vs uniform | Δ skills vs uniform |',
    '|---|---|---|---|---|---|---|---|',
    ...stats.map(
      (x) =>
        `| ${x.controller} | ${formatInterval(x.auc)} | ${formatInterval(x.finalProbe)} | ${formatInterval(x.heldout)} | ${formatInterval(x.skills, 2)} | ${paired(x.vsUniform?.auc)} | ${paired(x.vsUniform?.heldout)} | ${paired(x.vsUniform?.skills)} |`,
    ),
    '',
    '## Per seed (held-out AUC / skills mastered)',
    '',
    `| seed | ${controllers.join(' | ')} |`,
    `|---|${controllers.map(() => '---').join('|')}|`,
  ];
  for (const seed of seedList) {
    const cell = (c: ControllerName) => {
      const r = runs.find((x) => x.controller === c && x.seed === seed);
      return r ? `${r.auc.toFixed(3)} / ${r.skillsMastered.length}` : '—';
    };
    lines.push(`| ${seed} | ${controllers.map(cell).join(' | ')} |`);
  }
  lines.push('');
  return lines;
}

/** The target (bench/results/curriculum.md), judged on the controller named before the run: its held-out AUC beats uniform's (the paired interval above 0) and it masters ≥ 1.5× uniform's skills on average. */
function verdictLines(stats: Stats[], named: string): string[] {
  const uni = stats.find((x) => x.controller === 'uniform');
  if (!uni) return ['uniform was not run; no comparison.'];
  const out = [`uniform: held-out AUC ${formatInterval(uni.auc)}, skills mastered ${formatInterval(uni.skills, 2)}.`];
  if (!named) return [...out, 'No controller under test was named (--under-test): every comparison is exploratory.'];
  const x = stats.find((s) => s.controller === named);
  if (!x?.vsUniform) return [...out, `${named}: no run paired with uniform.`];
  const auc = x.vsUniform.auc;
  const ratio = uni.skills.mean > 0 ? x.skills.mean / uni.skills.mean : x.skills.mean > 0 ? Infinity : 0;
  out.push(
    `Target, AUC (${named} − uniform, interval above 0): ${formatInterval(auc)}, p ${auc.p.toFixed(3)} — ${auc.lo > 0 ? 'MET' : 'not met'}.`,
    `Target, skills (≥ 1.5× uniform's): ${x.skills.mean.toFixed(2)} vs ${uni.skills.mean.toFixed(2)} (×${Number.isFinite(ratio) ? ratio.toFixed(2) : '∞'}) — ${ratio >= 1.5 && x.skills.mean > 0 ? 'MET' : 'not met'}.`,
    'Other controllers: exploratory.',
  );
  return out;
}

async function main(): Promise<void> {
  const t0 = Date.now();
  if (args.rerender) {
    const old = JSON.parse(readFileSync(join(args.out, 'curriculum.json'), 'utf8')) as {
      meta: Record<string, unknown>;
      runs: RunRecord[];
    };
    writeReports(old.runs, old.meta);
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
  writeReports(runs, metaNow());
}

function writeReports(runs: RunRecord[], meta: Record<string, unknown>): void {
  const uniRuns = runs.filter((r) => r.controller === 'uniform');
  const uniformFinal = uniRuns.length ? mean(uniRuns.map((r) => r.finalProbeAccuracy)) : null;
  const aggs = aggregate(runs, uniformFinal);
  const seedList = (meta.seeds as number[] | undefined) ?? seeds;
  const stats = statistics(runs, seedList);
  const verdict = verdictLines(stats, String(meta.underTest ?? ''));
  const simulated = simSection();
  writeFileSync(
    join(args.out, 'curriculum.json'),
    JSON.stringify({ meta, verdict, aggregates: aggs, statistics: stats, simulated, runs }, null, 2) + '\n',
  );
  writeFileSync(
    join(args.out, 'curriculum.md'),
    markdown(aggs, stats, runs, meta, verdict) + '\n' + simMarkdown(simulated).join('\n'),
  );
  writeFileSync(join(args.out, 'curriculum.svg'), svgPlot(aggs) + '\n');
  console.log(verdict.join('\n'));
  console.log(`wrote ${args.out}/curriculum.{json,md,svg} in ${meta.totalWallS} s`);
}

await main();
