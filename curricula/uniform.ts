// Baseline: every open arm equally likely.
import type { Rng } from '../core/rng.js';
import type { ArmResult, Controller, Pick, PickContext } from './types.js';
import { checkState, newPick, requireArms } from './util.js';

export class UniformController implements Controller {
  readonly name: string = 'uniform';
  pick(n: number, rng: Rng, ctx: PickContext): Pick[] {
    requireArms(ctx.arms, this.name);
    const out: Pick[] = [];
    for (let i = 0; i < n; i++) out.push(newPick(rng.pick(ctx.arms)));
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
