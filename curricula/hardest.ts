// Baseline: always the highest open level of each family (any task type), uniformly.
import type { Rng } from '../src/rng.js';
import type { Arm, ArmResult, Controller, Pick, PickContext } from './types.js';
import { checkState, newPick, requireArms } from './util.js';

/** The open arms that sit at their family's highest open level. */
export function hardestArms(arms: readonly Arm[]): Arm[] {
  const top = new Map<string, number>();
  for (const a of arms) top.set(a.family, Math.max(top.get(a.family) ?? -Infinity, a.level));
  return arms.filter((a) => a.level === top.get(a.family));
}

export class HardestController implements Controller {
  readonly name = 'hardest';
  pick(n: number, rng: Rng, ctx: PickContext): Pick[] {
    requireArms(ctx.arms, this.name);
    const cands = hardestArms(ctx.arms);
    const out: Pick[] = [];
    for (let i = 0; i < n; i++) out.push(newPick(rng.pick(cands)));
    return out;
  }
  update(_results: ArmResult[]): void {}
  state(): unknown {
    return { name: this.name, version: 1 };
  }
  restore(state: unknown): void {
    checkState(state, this.name);
  }
}
