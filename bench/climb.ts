// bench:climb (bench/results/climb.md): how far RL from random initialisation climbs the levels
// under the climb preset (curricula/climb.yaml), per seed drawn at random and printed: each
// family's highest level passed over the steps (docs/levels.md), h per family/type, skills
// mastered per level, and the order of first masteries against the taxonomy's prerequisites. The
// peer is the same preset and seed with the solver answering at once (solver.working off): the
// ratio of levels passed says what the working adds. Writes bench/results/climb.json after every run
// (a cut-short bench keeps what it measured) and climb.md.
//
//   npm run bench:climb [-- --seeds 3,17 | --n 3] [--preset climb] [--steps N] [--no-peer]
//                       [--runs-dir DIR] [--out bench/results]
//   npx tsx bench/climb.ts --report DIR,DIR,...   (the table of runs made before, e.g. by cogen run)
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { allSkills, loadPreset, RunStore, startRun } from '../src/index.js';
import { climbOf } from '../src/run/testing.js';
import { drawSeeds, median } from './stats.js';

const { values: args } = parseArgs({
  options: {
    seeds: { type: 'string' },
    n: { type: 'string', default: '3' },
    preset: { type: 'string', default: 'climb' },
    steps: { type: 'string' },
    'no-peer': { type: 'boolean', default: false },
    'runs-dir': { type: 'string', default: 'runs' },
    report: { type: 'string' },
    out: { type: 'string', default: 'bench/results' },
  },
});

/** What one run reached, read back from its store. */
interface Climb {
  run: string;
  arm: 'working' | 'peer (working off)';
  seed: number;
  steps: number;
  wallSeconds: number | null;
  /** Per family: the highest level passed at the last probe round (−1: none), and the step each level was first passed. */
  families: { family: string; passed: number; firstPassed: Record<number, number>; h: Record<string, number> }[];
  /** Skills mastered at the end, by level. */
  masteredByLevel: Record<number, string[]>;
  /** Skills first mastered before a prerequisite of a lower level was: `skill < prerequisite`. */
  outOfOrder: string[];
  /** First masteries in order: `step skill`. */
  order: string[];
}

/** A run's climb from its store (runs/<id>/run.db); its arm is its stored config's working. */
function readClimb(dir: string, wallSeconds: number | null): Climb {
  const store = RunStore.open(dir, { create: false });
  try {
    const config = JSON.parse(store.getMeta('config') ?? '{}') as { seed?: number; solver?: { working?: string } };
    const arm: Climb['arm'] = (config.solver?.working ?? 'off') === 'off' ? 'peer (working off)' : 'working';
    const metrics = store.metrics();
    const families = climbOf(metrics).map((c) => {
      const firstPassed: Record<number, number> = {};
      for (const row of metrics) {
        const p = Number(row[`passed.${c.family}`] ?? -1);
        for (let d = 0; d <= p; d++) firstPassed[d] ??= Number(row.step);
      }
      return { family: c.family, passed: c.passed, firstPassed, h: c.h };
    });
    const skills = new Map(allSkills().map((s) => [s.id, s]));
    const first = new Map<string, number>();
    const now = new Set<string>();
    for (const e of store.skillEvents()) {
      if (e.event === 'learned') {
        if (!first.has(e.skillId)) first.set(e.skillId, e.step);
        now.add(e.skillId);
      } else now.delete(e.skillId);
    }
    const masteredByLevel: Record<number, string[]> = {};
    for (const id of now) (masteredByLevel[skills.get(id)?.level ?? -1] ??= []).push(id);
    const outOfOrder = [...first].flatMap(([id, step]) =>
      (skills.get(id)?.requires ?? []).flatMap((r) => {
        const lower = (skills.get(r)?.level ?? 0) < (skills.get(id)?.level ?? 0);
        return lower && !((first.get(r) ?? Infinity) <= step) ? [`${id} < ${r}`] : [];
      }),
    );
    const order = [...first].sort((a, b) => a[1] - b[1]).map(([id, step]) => `${step} ${id}`);
    return {
      run: dir,
      arm,
      seed: config.seed ?? NaN,
      steps: Number(metrics.at(-1)?.step ?? 0),
      wallSeconds,
      families,
      masteredByLevel,
      outOfOrder,
      order,
    };
  } finally {
    store.close();
  }
}

async function runOne(seed: number, working: boolean): Promise<Climb> {
  const base = loadPreset(args.preset!);
  const config = loadPreset(args.preset!, {
    seed,
    ...(args.steps ? { steps: Number(args.steps) } : {}),
    ...(working ? {} : { solver: { ...base.solver, working: 'off' } }),
  });
  const runId = `bench-climb-${args.preset}-s${seed}-${working ? 'working' : 'off'}-${process.pid}`;
  const t0 = Date.now();
  const summary = await startRun(config, {
    preset: args.preset!,
    runsDir: resolve(args['runs-dir']!),
    runId,
    log: () => {},
  });
  return readClimb(summary.dir, (Date.now() - t0) / 1000);
}

const levelsPassed = (c: Climb): number => c.families.reduce((n, f) => n + f.passed + 1, 0);

function report(climbs: Climb[]): string {
  const lines = [
    '# bench:climb',
    '',
    'Per run: each family’s highest level passed at the end (−1: none) and the step each level was first passed; h per family/type (the level frontier); skills mastered at the end by level; first masteries before a lower-level prerequisite.',
    '',
    '| seed | arm | steps | wall s | levels passed (family: level, first passed at) | h | mastered by level | out of order |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const c of climbs) {
    const passed = c.families
      .map(
        (f) =>
          `${f.family}: ${f.passed} (${
            Object.entries(f.firstPassed)
              .map(([d, s]) => `${d}@${s}`)
              .join(', ') || '–'
          })`,
      )
      .join('; ');
    const h = c.families.flatMap((f) => Object.entries(f.h).map(([t, v]) => `${f.family}/${t} ${v}`)).join(', ');
    const byLevel = Object.entries(c.masteredByLevel)
      .map(([d, ids]) => `L${d}: ${ids.length}`)
      .join(', ');
    lines.push(
      `| ${c.seed} | ${c.arm} | ${c.steps} | ${c.wallSeconds?.toFixed(0) ?? '–'} | ${passed} | ${h || '–'} | ${byLevel || '–'} | ${c.outOfOrder.join(', ') || 'none'} |`,
    );
  }
  const arms = [...new Set(climbs.map((c) => c.arm))];
  lines.push('', 'Sum over families of levels passed (a family that passed level d counts d + 1):', '');
  for (const a of arms) {
    const xs = climbs.filter((c) => c.arm === a).map(levelsPassed);
    lines.push(`- ${a}: median ${median(xs)} (${xs.join(', ')})`);
  }
  const pairs = climbs
    .filter((c) => c.arm === 'working')
    .flatMap((c) => {
      const p = climbs.find((q) => q.arm !== 'working' && q.seed === c.seed);
      return p ? [[levelsPassed(c), levelsPassed(p)] as const] : [];
    });
  if (pairs.length)
    lines.push(
      `- working ÷ peer, per seed: ${pairs.map(([a, b]) => (b ? (a / b).toFixed(2) : `${a} vs 0`)).join(', ')}`,
    );
  lines.push('', 'First masteries, in order:', '');
  for (const c of climbs) lines.push(`- ${c.seed} ${c.arm}: ${c.order.join(', ') || 'none'}`);
  return lines.join('\n') + '\n';
}

function save(climbs: Climb[]): void {
  mkdirSync(args.out!, { recursive: true });
  writeFileSync(join(args.out!, 'climb.json'), JSON.stringify({ date: new Date().toISOString(), climbs }, null, 2));
  writeFileSync(join(args.out!, 'climb.md'), report(climbs));
}

const climbs: Climb[] = [];
if (args.report) {
  for (const dir of args.report.split(',')) climbs.push(readClimb(dir, null));
} else {
  const seeds = args.seeds ? args.seeds.split(',').map(Number) : drawSeeds(Number(args.n));
  console.log(`bench:climb: preset ${args.preset}, seeds ${seeds.join(',')} (replay with --seeds ${seeds.join(',')})`);
  for (const seed of seeds)
    for (const working of args['no-peer'] ? [true] : [true, false]) {
      climbs.push(await runOne(seed, working));
      save(climbs);
    }
}
save(climbs);
console.log(report(climbs));
