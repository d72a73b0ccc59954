// Learnability (Absolute Zero): a task's value is 1 − p when 0 < p < 1, else 0 (p = solve rate of
// its G answers). An arm's value is the mean over its recent tasks; arms are sampled with probability
// ∝ value^(1/temperature), with a floor so no open arm starves, and an optimistic weight for arms
// never tried (exploration).
// It follows mastery: a fresh task it asks for avoids tasks made only of mastered skills, and such a
// task, when scored, is worth 0 (rehearsal.ts keeps the mastered skills in view), so an arm whose
// skills are all mastered falls to the floor.
import { z } from 'zod';
import type { Rng } from '../core/rng.js';
import type { ArmResult, Controller, Pick, PickContext } from './types.js';
import { armKey, checkState, jsonCopy, pushWindow, requireArms, sampleArms } from './util.js';
import { mean } from '../core/stats.js';
import { learnability } from '../core/rules.js';

export const learnabilityOptions = z.strictObject({
  /** Recent tasks per arm that make its value. */
  window: z.number().int().min(1).default(8),
  /** Value assumed for an arm never tried. */
  unvisited: z.number().min(0).max(1).default(0.5),
  /** Least value of a tried arm (so arms that were too easy or too hard are revisited now and then). */
  floor: z.number().min(0).max(1).default(0.02),
  /** Sharpness: weights are value^(1/temperature); 1 = proportional. */
  temperature: z.number().positive().default(0.5),
});
export type LearnabilityOptions = z.infer<typeof learnabilityOptions>;

interface LearnabilityState {
  name: 'learnability';
  version: 1;
  values: Record<string, number[]>;
}

export class LearnabilityController implements Controller {
  readonly name = 'learnability';
  private readonly opts: LearnabilityOptions;
  private values: Record<string, number[]> = {};

  constructor(opts: z.input<typeof learnabilityOptions> = {}) {
    this.opts = learnabilityOptions.parse(opts);
  }

  /** Mean learnability of the arm's recent tasks, or null when never tried. */
  value(key: string): number | null {
    const xs = this.values[key];
    return xs && xs.length > 0 ? mean(xs) : null;
  }

  /** Sampling probabilities over the open arms (same order as ctx.arms). */
  weights(ctx: PickContext): number[] {
    const t = this.opts.temperature > 0 ? this.opts.temperature : 1;
    return ctx.arms.map((a) => {
      const v = this.value(armKey(a));
      const w = v === null ? this.opts.unvisited : Math.max(v, this.opts.floor);
      return Math.pow(Math.max(w, 0), 1 / t);
    });
  }

  pick(n: number, rng: Rng, ctx: PickContext): Pick[] {
    requireArms(ctx.arms, this.name);
    const picks = sampleArms(ctx.arms, this.weights(ctx), n, rng);
    const avoid = (ctx.mastered ?? []).map((s) => s.skillId);
    return avoid.length === 0 ? picks : picks.map((p) => (p.kind === 'new' ? { ...p, avoid } : p));
  }

  update(results: ArmResult[]): void {
    for (const r of results) {
      const k = armKey(r.arm);
      const value = r.practice ? 0 : learnability(r.solveRate);
      this.values[k] = pushWindow(this.values[k] ?? [], value, this.opts.window);
    }
  }

  state(): LearnabilityState {
    return { name: 'learnability', version: 1, values: jsonCopy(this.values) };
  }
  restore(state: unknown): void {
    const s = checkState(state, this.name) as unknown as LearnabilityState;
    this.values = s.values ?? {};
  }
}
