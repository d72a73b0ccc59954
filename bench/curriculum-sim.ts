// bench:curriculum's model-free section: the same controllers on a simulated learner (curricula/sim.ts).
import { controllerNames, createController, curriculumConfigSchema, type ControllerName } from '../curricula/index.js';
import { simArms, simulate } from '../curricula/testing.js';
import { createRng } from '../core/rng.js';
import { mean, median } from './stats.js';

// --- Model-free section: the same controllers on a simulated learner (curricula/sim.ts), whose
// competence per family grows only from groups with mixed outcomes at or above its frontier. It checks
// the controllers' mechanics at a budget the real solver cannot afford here; it proves nothing about
// the real solver.
export interface SimAggregate {
  controller: ControllerName;
  finalAccuracy: number;
  auc: number;
  frontierFraction: number;
  cellsMastered: number;
  stepsToUniformFinal: number | null;
}
const SIM = { families: 3, levels: 6, rate: 0.05, group: 8, steps: 150, batch: 8, seeds: [1, 2, 3, 4, 5] };

export function simSection(): SimAggregate[] {
  const per = controllerNames.map((controller) => {
    const rs = SIM.seeds.map((seed) =>
      simulate(
        createController(curriculumConfigSchema.parse({ controller }), simArms(SIM.families, SIM.levels)),
        SIM,
        SIM.steps,
        SIM.batch,
        createRng(`sim/${seed}`),
      ),
    );
    const curve = rs[0]!.curve.map((_, i) => mean(rs.map((r) => r.curve[i]!)));
    return { controller, rs, curve };
  });
  const uni = per.find((p) => p.controller === 'uniform')!;
  const uniFinal = uni.curve[uni.curve.length - 1]!;
  return per.map(({ controller, rs, curve }) => {
    const reach = curve.findIndex((a) => a >= uniFinal);
    return {
      controller,
      finalAccuracy: curve[curve.length - 1]!,
      auc: mean(curve),
      frontierFraction: mean(rs.map((r) => r.frontierFraction)),
      cellsMastered: mean(rs.map((r) => Object.keys(r.mastered).length)),
      stepsToUniformFinal: reach < 0 ? null : reach + 1,
    };
  });
}

export function simMarkdown(sim: SimAggregate[]): string[] {
  const uni = sim.find((x) => x.controller === 'uniform')!;
  return [
    '## Model-free check: simulated learner',
    '',
    `A synthetic learner (curricula/sim.ts; ${SIM.families} families × ${SIM.levels} levels, ${SIM.steps} steps × ${SIM.batch} tasks × ${SIM.group} answers, ${SIM.seeds.length} seeds) ` +
      'whose competence grows only from mixed-outcome groups at or above its frontier. It exercises the controllers, not the solver: ' +
      'it shows what they do when a learnable frontier exists.',
    '',
    "| controller | final accuracy | AUC | picks on 0<p<1 | cells mastered (p ≥ 0.8) | steps to uniform's final |",
    '|---|---|---|---|---|---|',
    ...sim.map(
      (x) =>
        `| ${x.controller} | ${x.finalAccuracy.toFixed(3)} | ${x.auc.toFixed(3)} | ${(x.frontierFraction * 100).toFixed(0)} % | ${x.cellsMastered.toFixed(1)} | ${x.stepsToUniformFinal ?? '—'}${x.stepsToUniformFinal ? ` (${((x.stepsToUniformFinal / SIM.steps) * 100).toFixed(0)} %)` : ''} |`,
    ),
    '',
    `Uniform masters ${uni.cellsMastered.toFixed(1)} cells (the level-0 cells count from the start).`,
    '',
  ];
}

// --- The level frontier against a learner without a ceiling (docs/levels.md). The same learner,
// whose competence grows only from mixed-outcome groups at or above its frontier and has no bound,
// is served by three controllers in one run: level-frontier over open levels (the five tabled ones
// listed, any level above reachable, as in a run with maxLevel open), uniform over levels 0-30, and
// the ladder over the old five levels 0-4. Each controller's config is the run's default (its
// exploration and rehearsal included). Measured per seed: the steps until the learner's competence
// (the level it solves half the time) reaches TARGET in every family, and for level-frontier how far
// its h strays from the competence on the way.
export const TRACK = {
  families: 3,
  rate: 0.05,
  group: 8,
  steps: 3000,
  batch: 8,
  target: 20,
  early: 4,
  band: 2,
  ceiling: 1000,
};
export const TRACK_SETUPS = [
  { name: 'level-frontier (open levels)', controller: 'level-frontier', levels: 5, ceiling: TRACK.ceiling },
  { name: 'uniform over 0-30', controller: 'uniform', levels: 31 },
  { name: 'ladder over 0-4', controller: 'ladder', levels: 5 },
] as const;

export interface TrackRow {
  seed: number;
  setup: string;
  /** First step at which every family's competence reached TRACK.target (null: not within the budget). */
  stepsToTarget: number | null;
  /** The same for TRACK.early, a level all three can serve (the ladder's five levels included). */
  stepsToEarly: number | null;
  finalCompetence: number;
  /** level-frontier only: the largest |h − competence| up to the step the target was reached, and the share of family-steps within ±band. */
  maxDeviation: number | null;
  withinBand: number | null;
}

export function trackSeed(seed: number): TrackRow[] {
  return TRACK_SETUPS.map((s) => {
    const opts = {
      families: TRACK.families,
      rate: TRACK.rate,
      group: TRACK.group,
      levels: s.levels,
      ...('ceiling' in s ? { ceiling: s.ceiling } : {}),
    };
    const controller = createController(
      curriculumConfigSchema.parse({ controller: s.controller }),
      simArms(opts.families, opts.levels),
    );
    const r = simulate(controller, opts, TRACK.steps, TRACK.batch, createRng(`track/${seed}`));
    const reached = r.competence.findIndex((c) => Math.min(...c) >= TRACK.target);
    const early = r.competence.findIndex((c) => Math.min(...c) >= TRACK.early);
    const until = reached < 0 ? r.competence.length : reached + 1;
    const devs = r.competence
      .slice(0, until)
      .flatMap((c, i) => c.flatMap((x, f) => (r.frontier[i]![f] === null ? [] : [Math.abs(r.frontier[i]![f]! - x)])));
    return {
      seed,
      setup: s.name,
      stepsToTarget: reached < 0 ? null : reached + 1,
      stepsToEarly: early < 0 ? null : early + 1,
      finalCompetence: mean(r.competence.at(-1)!),
      maxDeviation: devs.length ? Math.max(...devs) : null,
      withinBand: devs.length ? devs.filter((d) => d <= TRACK.band).length / devs.length : null,
    };
  });
}

const steps = (x: number | null): string => (x === null ? `not within ${TRACK.steps}` : String(x));

export function trackMarkdown(rows: TrackRow[], seeds: number[], drawn: boolean): string[] {
  const frontier = TRACK_SETUPS[0].name;
  const per = TRACK_SETUPS.map((s) => {
    const rs = rows.filter((r) => r.setup === s.name);
    // A seed that never reached the target counts as beyond the budget, so the median exists only when most seeds reached it.
    const reach = rs.map((r) => r.stepsToTarget ?? Infinity);
    const m = median(reach);
    const e = median(rs.map((r) => r.stepsToEarly ?? Infinity));
    return {
      s,
      rs,
      median: Number.isFinite(m) ? m : null,
      early: Number.isFinite(e) ? e : null,
      final: median(rs.map((r) => r.finalCompetence)),
    };
  });
  const f = per[0]!;
  const fewer = per
    .slice(1)
    .every((p) => f.rs.every((r, i) => (r.stepsToTarget ?? Infinity) < (p.rs[i]!.stepsToTarget ?? Infinity)));
  const dev = f.rs.map((r) => r.maxDeviation ?? NaN);
  const within = f.rs.map((r) => r.withinBand ?? NaN);
  return [
    '## The level frontier tracks a learner without a ceiling',
    '',
    `A simulated learner (curricula/sim.ts; ${TRACK.families} families, ${TRACK.steps} steps × ${TRACK.batch} tasks × ${TRACK.group} answers) whose competence has no bound; seeds ${seeds.join(', ')}${drawn ? ' (drawn at random by the benchmark)' : ''}. ` +
      `Target: competence ${TRACK.target} in every family. Each controller with the run's defaults.`,
    '',
    `| controller | steps to competence ${TRACK.target} (median; per seed) | steps to competence ${TRACK.early} (median; per seed) | final competence (median) | final competence / ${frontier}'s |`,
    '|---|---|---|---|---|',
    ...per.map(
      (p) =>
        `| ${p.s.name} | ${steps(p.median)}; ${p.rs.map((r) => steps(r.stepsToTarget)).join(', ')} | ${steps(p.early)}; ${p.rs.map((r) => steps(r.stepsToEarly)).join(', ')} | ${p.final.toFixed(1)} | ${(p.final / f.final).toFixed(2)} |`,
    ),
    '',
    `${frontier}: |h − competence| at most ${Math.max(...dev).toFixed(2)} levels up to the target (per seed ${dev.map((d) => d.toFixed(2)).join(', ')}); ` +
      `${(100 * Math.min(...within)).toFixed(1)} % of family-steps within ±${TRACK.band} on the worst seed. ` +
      `It reaches the target in fewer steps than both peers on every seed: ${fewer ? 'yes' : 'NO'}.`,
    '',
  ];
}

// Run as a script: the tracking section alone, on seeds drawn at random (printed; --seeds replays).
if (process.argv[1]?.endsWith('curriculum-sim.ts')) {
  const { parseArgs } = await import('node:util');
  const { mkdirSync, writeFileSync } = await import('node:fs');
  const { drawSeeds } = await import('./stats.js');
  const { loadavg } = await import('node:os');
  const { values: args } = parseArgs({
    options: { seeds: { type: 'string', default: 'random:5' }, out: { type: 'string', default: 'bench/results' } },
  });
  const drawn = /^random:(\d+)$/.exec(args.seeds!);
  const seeds = drawn ? drawSeeds(Number(drawn[1])) : args.seeds!.split(',').map(Number);
  if (seeds.length === 0 || seeds.some((s) => !Number.isInteger(s)))
    throw new Error(`--seeds: expected random:N or a list of integers, got "${args.seeds}"`);
  console.log(`bench curriculum-sim (level frontier): seeds${drawn ? ' (drawn at random)' : ''} ${seeds.join(',')}`);
  const t0 = Date.now();
  const rows = seeds.flatMap(trackSeed);
  const md = trackMarkdown(rows, seeds, drawn !== null);
  console.log(md.join('\n'));
  mkdirSync(args.out!, { recursive: true });
  writeFileSync(
    `${args.out}/frontier-sim.json`,
    JSON.stringify(
      {
        date: new Date().toISOString(),
        seeds,
        seedsDrawn: drawn !== null,
        load: loadavg(),
        wallSeconds: (Date.now() - t0) / 1000,
        track: TRACK,
        rows,
      },
      null,
      2,
    ) + '\n',
  );
  writeFileSync(`${args.out}/frontier-sim.md`, md.join('\n') + '\n');
}
