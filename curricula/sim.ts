// A synthetic learner for curriculum tests and the benchmark's model-free section: no model, just a competence per family that grows when
// the learner practises tasks near its frontier (where its answers disagree, so GRPO has a gradient). Its competence has no bound:
// served levels above the arms listed (SimOptions.ceiling, as a run whose levels are open), it keeps growing.
import type { Arm, ArmResult, Controller } from './types.js';
import { meanAbsAdvantage } from './dynamic.js';
import { solveRate } from '../core/rules.js';
import type { Rng } from '../core/rng.js';

export interface SimOptions {
  families: number;
  /** Levels listed as arms (0 … levels − 1). */
  levels: number;
  /** The highest level a family may be served past the listed ones (PickContext.ceilings); none when absent. */
  ceiling?: number;
  /** Competence gained per fully informative group (2p(1−p) = 0.5). */
  rate: number;
  group: number;
}

export class SimLearner {
  readonly skill: number[];
  constructor(readonly opts: SimOptions) {
    this.skill = Array(opts.families).fill(0);
  }
  /** The level the learner solves half the time in family f: its competence. */
  competence(f: number): number {
    return this.skill[f]! + 0.5;
  }
  /** True success probability of one answer on an arm. */
  p(arm: Arm): number {
    const s = this.skill[Number(arm.family.slice(1))]!;
    return 1 / (1 + Math.exp(-5 * (s + 0.5 - arm.level)));
  }
  /** Samples G answers, learns from them, and returns the result the loop would feed back. */
  attempt(arm: Arm, taskId: string, step: number, rng: Rng): ArmResult {
    const p = this.p(arm);
    const rewards = Array.from({ length: this.opts.group }, () => (rng.next() < p ? 1 : 0));
    const sr = solveRate(rewards);
    const f = Number(arm.family.slice(1));
    // Only groups with a gradient teach, and only at or above the current frontier.
    if (arm.level >= Math.floor(this.skill[f]!)) this.skill[f]! += this.opts.rate * 2 * sr * (1 - sr);
    return { arm, taskId, step, rewards, solveRate: sr, meanAbsAdvantage: meanAbsAdvantage(rewards) };
  }
}

export function simArms(families: number, levels: number): Arm[] {
  const out: Arm[] = [];
  for (let f = 0; f < families; f++)
    for (let l = 0; l < levels; l++) out.push({ family: `f${f}`, level: l, type: 'deduction' });
  return out;
}

export interface SimRun {
  /** Fraction of picks on arms with 0.05 < p < 0.95. */
  frontierFraction: number;
  meanSkill: number;
  /** Per step: mean true success probability over all arms (the held-out accuracy of this learner). */
  curve: number[];
  /** "family/level" cells whose success probability reached `masterAt`, with the first step it did. */
  mastered: Record<string, number>;
  /** Per step and family: the learner's competence, and the controller's level frontier h (when it keeps one). */
  competence: number[][];
  frontier: (number | null)[][];
}

/** Runs a controller against a fresh learner for `steps` steps of `batch` picks. */
export function simulate(
  c: Controller,
  opts: SimOptions,
  steps: number,
  batch: number,
  rng: Rng,
  masterAt = 0.8,
): SimRun {
  const learner = new SimLearner(opts);
  const arms = simArms(opts.families, opts.levels);
  let near = 0;
  let picks = 0;
  const curve: number[] = [];
  const mastered: Record<string, number> = {};
  const competence: number[][] = [];
  const frontier: (number | null)[][] = [];
  const ceilings =
    opts.ceiling === undefined
      ? undefined
      : new Map(Array.from({ length: opts.families }, (_, f) => [`f${f}`, opts.ceiling!]));
  for (let step = 1; step <= steps; step++) {
    const ps = c.pick(batch, rng, { step, arms, ...(ceilings ? { ceilings } : {}) });
    const results = ps.map((pk, i) => {
      const p = learner.p(pk.arm);
      if (p > 0.05 && p < 0.95) near++;
      picks++;
      return learner.attempt(pk.arm, pk.kind === 'new' ? `t${step}-${i}` : pk.taskId, step, rng);
    });
    c.update(results);
    let acc = 0;
    for (const a of arms) {
      const p = learner.p(a);
      acc += p;
      const k = `${a.family}/${a.level}`;
      if (p >= masterAt && !(k in mastered)) mastered[k] = step;
    }
    curve.push(acc / arms.length);
    const h = c.frontier?.();
    competence.push(learner.skill.map((_, f) => learner.competence(f)));
    frontier.push(learner.skill.map((_, f) => h?.[`f${f}/deduction`] ?? null));
  }
  return {
    frontierFraction: near / picks,
    meanSkill: learner.skill.reduce((a, b) => a + b, 0) / opts.families,
    curve,
    mastered,
    competence,
    frontier,
  };
}
