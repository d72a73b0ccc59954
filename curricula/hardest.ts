// Baseline: always the highest open level of each family (any task type), uniformly.
import type { Rng } from '../core/rng.js';
import type { Arm, Pick, PickContext } from './types.js';
import { UniformController } from './uniform.js';
import { requireArms } from './util.js';

/** The open arms that sit at their family's highest open level. */
export function hardestArms(arms: readonly Arm[]): Arm[] {
  const top = new Map<string, number>();
  for (const a of arms) top.set(a.family, Math.max(top.get(a.family) ?? -Infinity, a.level));
  return arms.filter((a) => a.level === top.get(a.family));
}

/** Uniform sampling, restricted to the hardest open arms. */
export class HardestController extends UniformController {
  override readonly name: string = 'hardest';
  override pick(n: number, rng: Rng, ctx: PickContext): Pick[] {
    requireArms(ctx.arms, this.name);
    return super.pick(n, rng, { ...ctx, arms: hardestArms(ctx.arms) });
  }
}
