// bench:frontier (bench/results/frontier.md): does the frontier proposer (curricula/evolve.ts) teach
// at h? Each seed (drawn at random and printed) runs the climb preset with the proposer on, and,
// paired, off. Then the forked measure, as bench/proposer-fork.ts does for the learned proposer: at
// every `--every`th checkpoint of the run with the proposer on, the proposer (its state at that
// step) makes children of its band parents at h, the fixed generators draw fresh tasks at the same
// h, and the run's own solver at that step answers both sets `--group` times: the share of each
// set in the band 0 < p < 1 (the learnable share at h), the share of distinct programs, and the
// share of children whose label differs from their parent's. Levels passed (summed over families)
// compare the two runs of a seed. Writes bench/results/frontier.json after every seed and frontier.md.
//
//   npm run bench:frontier [-- --seeds random:3 | --seeds 3,17] [--steps 300] [--share 0.25]
//                          [--every 50] [--per-key 128] [--group G] [--no-peer] [--runs-dir DIR]
//   npx tsx bench/frontier.ts --report DIR,DIR,...   (runs made before: each one's levels passed, and
//                                                    the forked measure of those with the proposer on)
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createRng } from '../core/rng.js';
import type { CodeTask, Task } from '../core/task.js';
import { EvolveController, LevelFrontierController } from '../curricula/index.js';
import { canonicalHash, FRONTIER_PROPOSER, renderCompact } from '../generators/index.js';
import { loadPreset, parseConfig, RunStore, startRun, type RunConfig } from '../src/index.js';
import { propose, TaskArchive } from '../src/run/index.js';
import { drawTask, levelsPassedOf, sandboxOf, storedRunProbeIds, taskPrompt } from '../src/run/testing.js';
import { createPolicy } from '../src/solver/index.js';
import { checkpointSteps, solvedCounts } from './proposer-fork.js';
import { formatInterval, mean, median, pairedDifference, seedsArg } from './stats.js';

const { values: args } = parseArgs({
  options: {
    seeds: { type: 'string', default: 'random:3' },
    steps: { type: 'string', default: '300' },
    share: { type: 'string', default: '0.25' },
    every: { type: 'string', default: '50' },
    'per-key': { type: 'string', default: '128' },
    /** Answers per task in the forked measure; the run's own group (its band) by default. */
    group: { type: 'string' },
    'no-peer': { type: 'boolean', default: false },
    'runs-dir': { type: 'string', default: 'runs' },
    report: { type: 'string' },
    out: { type: 'string', default: 'bench/results' },
  },
});

/** One family × type at one checkpoint: both sets' shares against the same solver at the same h. */
interface KeyPoint {
  key: string;
  h: number;
  parents: number;
  children: number;
  fresh: number;
  band: { children: number; fresh: number; parents: number };
  distinct: { children: number; fresh: number };
  /** Children whose level or skills differ from their parent's. */
  relabelled: number;
  /** Children made at another level than h, left out of the shares. */
  offLevel: number;
  /** Children of each operator, and how many of them were in the band. */
  ops: Record<string, { n: number; band: number }>;
}

interface Fork {
  run: string;
  seed: number;
  points: { step: number; keys: KeyPoint[] }[];
}

interface Levels {
  seed: number;
  arm: 'on' | 'off';
  steps: number;
  passed: number;
  /** Step each family first passed each level. */
  firstPassed: Record<string, Record<number, number>>;
  /** Distinct programs among the tasks the run trained on. */
  distinct: number;
}

function configOf(store: RunStore): RunConfig {
  return parseConfig(JSON.parse(store.getMeta('config') ?? '{}'), 'stored', { stored: true, note: () => {} });
}

/** The evolve controller's state inside a checkpoint's (wrapped) controller state. */
function evolveState(x: unknown): unknown {
  if (!x || typeof x !== 'object') return undefined;
  if ((x as { name?: string }).name === 'evolve') return x;
  for (const v of Object.values(x)) {
    const s = evolveState(v);
    if (s) return s;
  }
  return undefined;
}

async function forkRun(dir: string, o: { perKey: number; group?: number; every: number }): Promise<Fork> {
  const store = RunStore.open(dir, { create: false });
  const config = configOf(store);
  const opts = { ...o, group: o.group ?? config.group };
  const rows = store.tasks();
  const probeIds = await storedRunProbeIds(store, dir);
  store.close();
  const sandbox = await sandboxOf(config);
  const policy = await createPolicy(config.solver, { seed: config.seed, totalSteps: config.steps });
  const fork: Fork = { run: dir, seed: config.seed, points: [] };
  try {
    for (const step of checkpointSteps(dir, opts.every).filter((s) => s > 0)) {
      const ck = join(dir, 'checkpoints', `step-${String(step).padStart(6, '0')}`);
      await policy.load(ck);
      const loop = JSON.parse(readFileSync(join(ck, 'loop.json'), 'utf8')) as { controller: unknown };
      const evolve = new EvolveController(new LevelFrontierController(config.curriculum.levelFrontier ?? {}), {
        ...config.curriculum.evolve,
        share: 1,
      });
      evolve.restore(evolveState(loop.controller));
      const archive = new TaskArchive();
      for (const r of rows) if (r.step <= step) archive.set(r.task.id, r.task);
      const at: ForkAt = { sandbox, archive, probeIds, step, seed: config.seed, perKey: opts.perKey };
      const keys: KeyPoint[] = [];
      for (const [key, h] of Object.entries(evolve.frontier() ?? {})) {
        const sets = await forkSets(at, evolve, key, h);
        if (!sets) continue;
        // Asked in the prompt the run asks in, its working included.
        const asked = [...sets.children, ...sets.fresh, ...sets.again].map((task) => ({
          task,
          prompt: taskPrompt(task, renderCompact(task), config.solver.working),
        }));
        const solved = await solvedCounts(policy, sandbox, asked, opts.group);
        keys.push(keyPoint(key, h, sets, solved, opts.group, archive));
      }
      fork.points.push({ step, keys });
      console.log(`fork ${dir} step ${step}: ${keys.map(formatKey).join('; ') || 'no band parents at h'}`);
    }
  } finally {
    policy.dispose();
    await sandbox.close();
  }
  return fork;
}

/** What one checkpoint's draws share. */
interface ForkAt {
  sandbox: Awaited<ReturnType<typeof sandboxOf>>;
  archive: TaskArchive;
  probeIds: Set<string>;
  step: number;
  seed: number;
  perKey: number;
}

/** One family × type's sets at h: the proposer's children (at h, and elsewhere), fresh tasks, the band parents; null without parents. */
async function forkSets(
  at: ForkAt,
  evolve: EvolveController,
  key: string,
  h: number,
): Promise<{ children: Task[]; offLevel: Task[]; fresh: Task[]; again: Task[] } | null> {
  const [family, type] = key.split('/') as [string, CodeTask['type']];
  const parents = evolve.snapshot().band.filter((e) => e.arm.family === family && e.arm.level === h);
  if (parents.length === 0) return null;
  const rng = createRng(`frontier-fork/${at.seed}/${at.step}/${key}`);
  // Each draw may repeat a task of the run or of its own set (the share of distinct programs counts
  // repeats), never a held-out probe; as in the climb's run, a child may be one level above its
  // parent (every level has a held-out set there).
  const probesOnly = () => new Set(at.probeIds);
  const ctx = { ...at, seen: probesOnly(), proposer: null, skills: [], heldOut: () => Promise.resolve(true) };
  const children: Task[] = [];
  const offLevel: Task[] = [];
  for (const pick of evolve.pick(at.perKey, rng, { step: at.step, arms: [{ family, level: h, type }] })) {
    if (pick.kind !== 'mutate') continue;
    const t = await propose({ ...ctx, seen: probesOnly() }, pick, rng.fork('child'), []);
    // Only children at h count (the others are tallied as `offLevel`).
    if (t.proposer === FRONTIER_PROPOSER) (t.level === h ? children : offLevel).push(t);
  }
  const fresh: Task[] = [];
  for (let i = 0; i < at.perKey; i++)
    fresh.push(
      await drawTask(at.sandbox, {
        family,
        level: h,
        type,
        rng: rng.fork(`fresh/${i}`),
        seen: probesOnly(),
        attempts: 20,
      }),
    );
  // The parents themselves, asked again: how much of the band a parent keeps at the checkpoint.
  const again = parents.slice(-at.perKey).flatMap((e) => at.archive.get(e.taskId) ?? []);
  return { children, offLevel, fresh, again };
}

function keyPoint(
  key: string,
  h: number,
  sets: { children: Task[]; offLevel: Task[]; fresh: Task[]; again: Task[] },
  solved: number[],
  group: number,
  archive: TaskArchive,
): KeyPoint {
  const { children, offLevel, fresh, again } = sets;
  const inBand = (s: number) => s > 0 && s < group;
  const share = (xs: number[]) => mean(xs.map((s) => (inBand(s) ? 1 : 0)));
  const kid = solved.slice(0, children.length);
  const fr = solved.slice(children.length, children.length + fresh.length);
  const par = solved.slice(children.length + fresh.length);
  const distinct = (ts: Task[]) =>
    ts.length ? new Set(ts.map((t) => canonicalHash(t.program))).size / ts.length : NaN;
  const ops: KeyPoint['ops'] = {};
  children.forEach((c, i) => {
    const o = (ops[c.parent!.op] ??= { n: 0, band: 0 });
    o.n++;
    if (inBand(kid[i]!)) o.band++;
  });
  const made = [...children, ...offLevel];
  const relabelled = made.filter((c) => {
    const p = archive.get(c.parent!.id);
    return !p || p.level !== c.level || p.skills.join() !== c.skills.join();
  }).length;
  return {
    key,
    h,
    parents: again.length,
    children: children.length,
    fresh: fresh.length,
    band: { children: share(kid), fresh: share(fr), parents: share(par) },
    distinct: { children: distinct(children), fresh: distinct(fresh) },
    relabelled: made.length ? relabelled / made.length : NaN,
    offLevel: offLevel.length,
    ops,
  };
}

const formatKey = (k: KeyPoint): string =>
  `${k.key} h ${k.h}: band ${k.band.children.toFixed(2)} (${k.children} children of ${k.parents}) vs ${k.band.fresh.toFixed(2)} fresh`;

async function runOne(seed: number, on: boolean): Promise<string> {
  const share = Number(args.share);
  const config = loadPreset('climb', {
    seed,
    steps: Number(args.steps),
    checkpointEvery: Number(args.every),
    ...(on ? { curriculum: { evolve: { share } } } : {}),
  });
  const runId = `bench-frontier-s${seed}-${on ? 'on' : 'off'}-${process.pid}`;
  const summary = await startRun(config, {
    preset: 'climb',
    runsDir: resolve(args['runs-dir']!),
    runId,
    log: () => {},
  });
  return summary.dir;
}

function levelsOf(dir: string, arm: Levels['arm']): Levels {
  const store = RunStore.open(dir, { create: false });
  try {
    const metrics = store.metrics();
    // Each family's highest level passed now, and the step each level was first passed (src/run/level-sets.ts).
    const climb = Object.entries(levelsPassedOf(metrics));
    const passed = climb.reduce((n, [, c]) => n + c.now + 1, 0);
    const firstPassed = Object.fromEntries(climb.map(([family, c]) => [family, c.firstReached]));
    const seed = configOf(store).seed;
    return {
      seed,
      arm,
      steps: Number(metrics.at(-1)?.step ?? 0),
      passed,
      firstPassed,
      distinct: distinctPrograms(dir),
    };
  } finally {
    store.close();
  }
}

/**
 * Per run, each set's learnable share at h: the mean over its (checkpoint, family × type) cells
 * that made children, every cell weighing the same for both sets (pooling tasks instead would
 * weigh a family by how many children it made, and the two sets differently).
 */
function runShares(f: Fork): { children: number; fresh: number; distinctRatio: number; relabelled: number } {
  const cells = f.points.flatMap((p) => p.keys).filter((k) => k.children > 0);
  const over = (pick: (k: KeyPoint) => number) => mean(cells.map(pick));
  return {
    children: over((k) => k.band.children),
    fresh: over((k) => k.band.fresh),
    distinctRatio: over((k) => k.distinct.children) / over((k) => k.distinct.fresh),
    relabelled: over((k) => k.relabelled),
  };
}

/** Distinct programs (canonical hash) among the tasks a run trained on. */
function distinctPrograms(dir: string): number {
  const store = RunStore.open(dir, { create: false });
  try {
    return new Set(store.tasks().map((r) => canonicalHash(r.task.program))).size;
  } finally {
    store.close();
  }
}

const fmt = (x: number, d = 3): string => (Number.isFinite(x) ? x.toFixed(d) : '–');

function forkTable(forks: Fork[]): string[] {
  const lines = [
    '| seed | step | family/type | h | parents | children at h (other levels) | band: children | band: fresh | band: parents again | distinct: children / fresh | relabelled | operators (band / n) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const f of forks)
    for (const p of f.points)
      for (const k of p.keys) {
        const ops = Object.entries(k.ops).map(([op, o]) => `${op} ${o.band}/${o.n}`);
        lines.push(
          `| ${f.seed} | ${p.step} | ${k.key} | ${k.h} | ${k.parents} | ${k.children} (${k.offLevel}) | ${fmt(k.band.children)} | ${fmt(k.band.fresh)} | ${fmt(k.band.parents)} | ${fmt(k.distinct.children, 2)} / ${fmt(k.distinct.fresh, 2)} | ${fmt(k.relabelled, 2)} | ${ops.join(', ')} |`,
        );
      }
  return lines;
}

function seedTable(forks: Fork[]): string[] {
  const per = forks.map((f) => ({ seed: f.seed, ...runShares(f) }));
  const lines = [
    '| seed | band: children | band: fresh | ratio | difference | distinct ratio (within the draws) | relabelled |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...per.map(
      (r) =>
        `| ${r.seed} | ${fmt(r.children)} | ${fmt(r.fresh)} | ${fmt(r.children / r.fresh, 2)} | ${fmt(r.children - r.fresh)} | ${fmt(r.distinctRatio, 2)} | ${fmt(r.relabelled, 2)} |`,
    ),
  ];
  if (per.length === 0) return lines;
  const d = pairedDifference(
    per.map((r) => r.children),
    per.map((r) => r.fresh),
  );
  lines.push(
    '',
    `Median over seeds: ratio ${fmt(median(per.map((r) => r.children / r.fresh)), 2)}, difference ${fmt(median(per.map((r) => r.children - r.fresh)))}; paired difference children − fresh ${formatInterval(d)} (p ${fmt(d.p)}).`,
  );
  return lines;
}

/** Per seed and family × type, over its checkpoints: children, fresh tasks and the parents asked again. */
function familyTable(forks: Fork[]): string[] {
  const lines = [
    '| seed | family/type | band: children | band: fresh | band: parents again | children ÷ fresh | children − fresh |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const f of forks) {
    const cells = f.points.flatMap((p) => p.keys).filter((k) => k.children > 0);
    for (const key of [...new Set(cells.map((k) => k.key))]) {
      const ks = cells.filter((k) => k.key === key);
      const [c, fr, par] = [
        mean(ks.map((k) => k.band.children)),
        mean(ks.map((k) => k.band.fresh)),
        mean(ks.map((k) => k.band.parents)),
      ];
      lines.push(`| ${f.seed} | ${key} | ${fmt(c)} | ${fmt(fr)} | ${fmt(par)} | ${fmt(c / fr, 2)} | ${fmt(c - fr)} |`);
    }
  }
  return lines;
}

function levelsTable(levels: Levels[]): string[] {
  const first = (l: Levels) =>
    Object.entries(l.firstPassed)
      .map(
        ([f, d]) =>
          `${f}: ${
            Object.entries(d)
              .map(([lv, s]) => `${lv}@${s}`)
              .join(' ') || '–'
          }`,
      )
      .join('; ');
  const lines = [
    '| seed | arm | steps | passed | first passed | distinct programs trained on |',
    '| --- | --- | --- | --- | --- | --- |',
    ...levels.map((l) => `| ${l.seed} | ${l.arm} | ${l.steps} | ${l.passed} | ${first(l)} | ${l.distinct} |`),
  ];
  const pairs = levels.flatMap((on) => {
    const off = on.arm === 'on' ? levels.find((l) => l.arm === 'off' && l.seed === on.seed) : undefined;
    return off ? [{ on, off }] : [];
  });
  if (pairs.length === 0) return lines;
  const d = pairedDifference(
    pairs.map((p) => p.on.passed),
    pairs.map((p) => p.off.passed),
  );
  lines.push(
    '',
    `Paired over ${pairs.length} seeds: levels passed on − off ${formatInterval(d)}; distinct programs on ÷ off ${pairs.map((p) => fmt(p.on.distinct / p.off.distinct, 2)).join(', ')}.`,
  );
  return lines;
}

function report(forks: Fork[], levels: Levels[]): string {
  return [
    '# bench:frontier',
    '',
    '## The learnable share at h (forked measure)',
    '',
    ...forkTable(forks),
    '',
    ...seedTable(forks),
    '',
    ...familyTable(forks),
    '',
    '## Levels passed (summed over families; a family that passed level d counts d + 1)',
    '',
    ...levelsTable(levels),
    '',
  ].join('\n');
}

function save(forks: Fork[], levels: Levels[]): void {
  mkdirSync(args.out!, { recursive: true });
  writeFileSync(
    join(args.out!, 'frontier.json'),
    JSON.stringify({ date: new Date().toISOString(), args, forks, levels }, null, 2),
  );
  writeFileSync(join(args.out!, 'frontier.md'), report(forks, levels));
}

const opts = {
  perKey: Number(args['per-key']),
  every: Number(args.every),
  ...(args.group ? { group: Number(args.group) } : {}),
};
const forks: Fork[] = [];
const levels: Levels[] = [];
if (args.report) {
  for (const dir of args.report.split(',')) {
    const store = RunStore.open(dir, { create: false });
    const on = (configOf(store).curriculum.evolve?.share ?? 0) > 0;
    store.close();
    levels.push(levelsOf(dir, on ? 'on' : 'off'));
    if (on) forks.push(await forkRun(dir, opts));
    save(forks, levels);
  }
} else {
  const { seeds, drawn } = seedsArg(args.seeds!);
  console.log(
    `bench:frontier: seeds ${seeds.join(',')}${drawn ? ' (drawn)' : ''} (replay with --seeds ${seeds.join(',')})`,
  );
  for (const seed of seeds) {
    const on = await runOne(seed, true);
    levels.push(levelsOf(on, 'on'));
    if (!args['no-peer']) levels.push(levelsOf(await runOne(seed, false), 'off'));
    forks.push(await forkRun(on, opts));
    save(forks, levels);
  }
}
save(forks, levels);
console.log(report(forks, levels));
