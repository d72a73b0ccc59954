// Teacher-Student curriculum learning ("Window" variant): an arm's value is the absolute slope of a
// least-squares line through its last `window` scores (solve rates), i.e. how fast the solver is
// currently learning — or forgetting — it. Arms are sampled ∝ value^(1/temperature), with a floor
// relative to the best arm, and arms with fewer than two scores count as the best arm (exploration).
import { z } from 'zod';
import type { Rng } from '../core/rng.js';
import type { ArmResult, Controller, Pick, PickContext } from './types.js';
import { armKey, checkState, jsonCopy, pushWindow, requireArms, sampleArms, slope } from './util.js';

export const progressOptions = z.strictObject({
  window: z.number().int().min(2).default(10),
  /** Least weight of a tried arm, as a fraction of the best arm's value. */
  floor: z.number().min(0).max(1).default(0.05),
  temperature: z.number().positive().default(1),
});
export type ProgressOptions = z.infer<typeof progressOptions>;

interface ProgressState {
  name: 'progress';
  version: 1;
  scores: Record<string, number[]>;
}

export class ProgressController implements Controller {
  readonly name = 'progress';
  private readonly opts: ProgressOptions;
  private scores: Record<string, number[]> = {};

  constructor(opts: z.input<typeof progressOptions> = {}) {
    this.opts = progressOptions.parse(opts);
  }

  /** |slope| of the arm's recent scores, or null with fewer than two. */
  value(key: string): number | null {
    const xs = this.scores[key];
    return xs && xs.length >= 2 ? Math.abs(slope(xs)) : null;
  }

  weights(ctx: PickContext): number[] {
    const vals = ctx.arms.map((a) => this.value(armKey(a)));
    let best = 0;
    for (const v of vals) if (v !== null) best = Math.max(best, v);
    const scale = best > 0 ? best : 1;
    const t = this.opts.temperature > 0 ? this.opts.temperature : 1;
    return vals.map((v) => {
      const w = v === null ? 1 : Math.max(v / scale, this.opts.floor);
      return Math.pow(w, 1 / t);
    });
  }

  pick(n: number, rng: Rng, ctx: PickContext): Pick[] {
    requireArms(ctx.arms, this.name);
    return sampleArms(ctx.arms, this.weights(ctx), n, rng);
  }

  update(results: ArmResult[]): void {
    for (const r of results) {
      const k = armKey(r.arm);
      this.scores[k] = pushWindow(this.scores[k] ?? [], r.solveRate, this.opts.window);
    }
  }

  state(): ProgressState {
    return { name: 'progress', version: 1, scores: jsonCopy(this.scores) };
  }
  restore(state: unknown): void {
    const s = checkState(state, this.name) as unknown as ProgressState;
    this.scores = s.scores ?? {};
  }
}
