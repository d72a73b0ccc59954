// bench:curriculum's model-free section: the same controllers on a simulated learner (curricula/sim.ts).
import { controllerNames, createController, curriculumConfigSchema, type ControllerName } from '../curricula/index.js';
import { simArms, simulate } from '../curricula/sim.js';
import { createRng } from '../core/rng.js';
import { mean } from './stats.js';

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
      simulate(createController(curriculumConfigSchema.parse({ controller }), simArms(SIM.families, SIM.levels)), SIM, SIM.steps, SIM.batch, createRng(`sim/${seed}`)),
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
    '| controller | final accuracy | AUC | picks on 0<p<1 | cells mastered (p ≥ 0.8) | steps to uniform\'s final |',
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
