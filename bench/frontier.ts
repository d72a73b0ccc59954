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
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createRng } from '../core/rng.js';
import { solvedCount } from '../core/rules.js';
import type { CodeTask, Task } from '../core/task.js';
import { EvolveController, LevelFrontierController } from '../curricula/index.js';
import { canonicalHash, FRONTIER_PROPOSER, renderCompact } from '../generators/index.js';
import { loadPreset, parseConfig, RunStore, startRun, type RunConfig } from '../src/index.js';
import { propose, TaskArchive } from '../src/run/index.js';
import { climbOf, drawTask, sandboxOf, storedRunProbeIds, taskPrompt, verifyTasks } from '../src/run/testing.js';
import { createPolicy } from '../src/solver/index.js';
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
  band: { children: number; fresh: number };
  distinct: { children: number; fresh: number };
  /** Children whose level or skills differ from their parent's. */
  relabelled: number;
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

const checkpointSteps = (dir: string, every: number): number[] =>
  readdirSync(join(dir, 'checkpoints'))
    .map((d) => /^step-(\d+)$/.exec(d))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .filter((s) => s > 0 && s % every === 0)
    .sort((a, b) => a - b);

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
    for (const step of checkpointSteps(dir, opts.every)) {
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
      // Each draw may repeat a task of the run or of its own set (the share of distinct programs
      // counts repeats), never a held-out probe.
      const heldOut = () => new Set(probeIds);
      const keys: KeyPoint[] = [];
      for (const [key, h] of Object.entries(evolve.frontier() ?? {})) {
        const [family, type] = key.split('/') as [string, CodeTask['type']];
        const arms = [{ family, level: h, type }];
        const parents = evolve.snapshot().band.filter((e) => e.arm.family === family && e.arm.level === h);
        if (parents.length === 0) continue;
        const rng = createRng(`frontier-fork/${config.seed}/${step}/${key}`);
        const children: Task[] = [];
        for (const pick of evolve.pick(opts.perKey, rng, { step, arms })) {
          if (pick.kind !== 'mutate') continue;
          const t = await propose(ctxOf(sandbox, heldOut(), archive, probeIds, step), pick, rng.fork('child'), []);
          if (t.proposer === FRONTIER_PROPOSER) children.push(t);
        }
        const fresh: Task[] = [];
        for (let i = 0; i < opts.perKey; i++)
          fresh.push(
            await drawTask(sandbox, {
              family,
              level: h,
              type,
              rng: rng.fork(`fresh/${i}`),
              seen: heldOut(),
              attempts: 20,
            }),
          );
        const solved = await answer(policy, sandbox, config, [...children, ...fresh], opts.group);
        keys.push(keyPoint(key, h, parents.length, children, fresh, solved, opts.group, archive));
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

function ctxOf(
  sandbox: Awaited<ReturnType<typeof sandboxOf>>,
  seen: Set<string>,
  archive: TaskArchive,
  probeIds: Set<string>,
  step: number,
) {
  return { step, sandbox, seen, archive, probeIds, proposer: null, skills: [] };
}

/** Each task's solved count over `group` sampled answers, in the prompt the run asks in (its working included). */
async function answer(
  policy: Awaited<ReturnType<typeof createPolicy>>,
  sandbox: Awaited<ReturnType<typeof sandboxOf>>,
  config: RunConfig,
  tasks: Task[],
  group: number,
): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < tasks.length; i += 32) {
    const part = tasks.slice(i, i + 32);
    const prompts = part.map((t) => taskPrompt(t, renderCompact(t), config.solver.working));
    const { answers } = await policy.sample(prompts, group);
    const verdicts = await verifyTasks(
      sandbox,
      part.flatMap((task, g) => answers[g]!.map((a) => ({ task, answer: a }))),
    );
    part.forEach((_, g) => out.push(solvedCount(verdicts.slice(g * group, (g + 1) * group).map((v) => v.reward))));
  }
  return out;
}

function keyPoint(
  key: string,
  h: number,
  parents: number,
  children: Task[],
  fresh: Task[],
  solved: number[],
  group: number,
  archive: TaskArchive,
): KeyPoint {
  const inBand = (s: number) => s > 0 && s < group;
  const kid = solved.slice(0, children.length);
  const fr = solved.slice(children.length);
  const distinct = (ts: Task[]) =>
    ts.length ? new Set(ts.map((t) => canonicalHash(t.program))).size / ts.length : NaN;
  const ops: KeyPoint['ops'] = {};
  children.forEach((c, i) => {
    const o = (ops[c.parent!.op] ??= { n: 0, band: 0 });
    o.n++;
    if (inBand(kid[i]!)) o.band++;
  });
  const relabelled = children.filter((c) => {
    const p = archive.get(c.parent!.id);
    return !p || p.level !== c.level || p.skills.join() !== c.skills.join();
  }).length;
  return {
    key,
    h,
    parents,
    children: children.length,
    fresh: fresh.length,
    band: { children: mean(kid.map((s) => (inBand(s) ? 1 : 0))), fresh: mean(fr.map((s) => (inBand(s) ? 1 : 0))) },
    distinct: { children: distinct(children), fresh: distinct(fresh) },
    relabelled: children.length ? relabelled / children.length : NaN,
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
    const firstPassed: Levels['firstPassed'] = {};
    let passed = 0;
    for (const c of climbOf(metrics)) {
      passed += c.passed + 1;
      const first: Record<number, number> = {};
      for (const row of metrics)
        for (let d = 0; d <= Number(row[`passed.${c.family}`] ?? -1); d++) first[d] ??= Number(row.step);
      firstPassed[c.family] = first;
    }
    return { seed: configOf(store).seed, arm, steps: Number(metrics.at(-1)?.step ?? 0), passed, firstPassed };
  } finally {
    store.close();
  }
}

/** Per run, the learnable share at h of children and fresh tasks, pooled over its checkpoints and keys. */
function runShares(f: Fork): { children: number; fresh: number; distinctRatio: number; relabelled: number } {
  const ks = f.points.flatMap((p) => p.keys);
  const pooled = (pick: (k: KeyPoint) => number, w: (k: KeyPoint) => number) => {
    const total = ks.reduce((a, k) => a + w(k), 0);
    return total ? ks.reduce((a, k) => a + (Number.isFinite(pick(k)) ? pick(k) * w(k) : 0), 0) / total : NaN;
  };
  return {
    children: pooled(
      (k) => k.band.children,
      (k) => k.children,
    ),
    fresh: pooled(
      (k) => k.band.fresh,
      (k) => k.fresh,
    ),
    distinctRatio:
      pooled(
        (k) => k.distinct.children,
        (k) => k.children,
      ) /
      pooled(
        (k) => k.distinct.fresh,
        (k) => k.fresh,
      ),
    relabelled: pooled(
      (k) => k.relabelled,
      (k) => k.children,
    ),
  };
}

function report(forks: Fork[], levels: Levels[]): string {
  const lines = [
    '# bench:frontier',
    '',
    '## The learnable share at h (forked measure)',
    '',
    '| seed | step | family/type | h | parents | children | band: children | band: fresh | distinct: children / fresh | relabelled | operators (band / n) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const f of forks)
    for (const p of f.points)
      for (const k of p.keys)
        lines.push(
          `| ${f.seed} | ${p.step} | ${k.key} | ${k.h} | ${k.parents} | ${k.children} | ${k.band.children.toFixed(3)} | ${k.band.fresh.toFixed(3)} | ${k.distinct.children.toFixed(2)} / ${k.distinct.fresh.toFixed(2)} | ${k.relabelled.toFixed(2)} | ${Object.entries(
            k.ops,
          )
            .map(([op, o]) => `${op} ${o.band}/${o.n}`)
            .join(', ')} |`,
        );
  const per = forks.map((f) => ({ seed: f.seed, ...runShares(f) }));
  lines.push(
    '',
    '| seed | band: children | band: fresh | ratio | difference | distinct ratio | relabelled |',
    '| --- | --- | --- | --- | --- | --- | --- |',
  );
  for (const r of per)
    lines.push(
      `| ${r.seed} | ${r.children.toFixed(3)} | ${r.fresh.toFixed(3)} | ${(r.children / r.fresh).toFixed(2)} | ${(r.children - r.fresh).toFixed(3)} | ${r.distinctRatio.toFixed(2)} | ${r.relabelled.toFixed(2)} |`,
    );
  if (per.length > 0) {
    const d = pairedDifference(
      per.map((r) => r.children),
      per.map((r) => r.fresh),
    );
    lines.push(
      '',
      `Median over seeds: ratio ${median(per.map((r) => r.children / r.fresh)).toFixed(2)}, difference ${median(per.map((r) => r.children - r.fresh)).toFixed(3)}; paired difference children − fresh ${formatInterval(d)} (p ${d.p.toFixed(3)}); distinct ratio ${median(per.map((r) => r.distinctRatio)).toFixed(2)}.`,
    );
  }
  if (levels.length > 0) {
    lines.push(
      '',
      '## Levels passed (summed over families; a family that passed level d counts d + 1)',
      '',
      '| seed | arm | steps | passed | first passed |',
      '| --- | --- | --- | --- | --- |',
    );
    for (const l of levels)
      lines.push(
        `| ${l.seed} | ${l.arm} | ${l.steps} | ${l.passed} | ${Object.entries(l.firstPassed)
          .map(
            ([f, d]) =>
              `${f}: ${
                Object.entries(d)
                  .map(([lv, s]) => `${lv}@${s}`)
                  .join(' ') || '–'
              }`,
          )
          .join('; ')} |`,
      );
  }
  return lines.join('\n') + '\n';
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
