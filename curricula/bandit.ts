// Self-Evolving Curriculum (SEC): a non-stationary bandit over arms. After a step, each arm's
// Q ← (1−α)·Q + α·r with r = the mean |advantage| of that arm's groups in the step (zero for groups
// that were all right or all wrong); arms are sampled from softmax(Q/τ).
import { z } from 'zod';
import type { Rng } from '../core/rng.js';
import type { ArmResult, Controller, Pick, PickContext } from './types.js';
import { armKey, checkState, jsonCopy, requireArms, sampleArms, softmax } from './util.js';
import { mean } from '../core/stats.js';

export const banditOptions = z.strictObject({
  alpha: z.number().min(0).max(1).default(0.5),
  tau: z.number().positive().default(0.4),
  /** Q of an arm never tried. */
  initQ: z.number().min(0).default(0),
});
export type BanditOptions = z.infer<typeof banditOptions>;

interface BanditState {
  name: 'bandit';
  version: 1;
  q: Record<string, number>;
}

/** One SEC update: Q ← (1−α)Q + α·reward. */
export const banditUpdate = (q: number, reward: number, alpha: number): number => (1 - alpha) * q + alpha * reward;

export class BanditController implements Controller {
  readonly name = 'bandit';
  private readonly opts: BanditOptions;
  private q: Record<string, number> = {};

  constructor(opts: z.input<typeof banditOptions> = {}) {
    this.opts = banditOptions.parse(opts);
  }

  qOf(key: string): number {
    return this.q[key] ?? this.opts.initQ;
  }

  /** softmax(Q/τ) over the open arms (same order as ctx.arms). */
  probabilities(ctx: PickContext): number[] {
    return softmax(
      ctx.arms.map((a) => this.qOf(armKey(a))),
      this.opts.tau,
    );
  }

  pick(n: number, rng: Rng, ctx: PickContext): Pick[] {
    requireArms(ctx.arms, this.name);
    return sampleArms(ctx.arms, this.probabilities(ctx), n, rng);
  }

  update(results: ArmResult[]): void {
    const byArm = new Map<string, number[]>();
    for (const r of results) {
      const k = armKey(r.arm);
      const xs = byArm.get(k) ?? [];
      xs.push(Math.abs(r.meanAbsAdvantage));
      byArm.set(k, xs);
    }
    for (const [k, xs] of byArm) this.q[k] = banditUpdate(this.qOf(k), mean(xs), this.opts.alpha);
  }

  state(): BanditState {
    return { name: 'bandit', version: 1, q: jsonCopy(this.q) };
  }
  restore(state: unknown): void {
    const s = checkState(state, this.name) as unknown as BanditState;
    this.q = s.q ?? {};
  }
}
