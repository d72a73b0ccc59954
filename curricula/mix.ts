// A share of picks drawn by a wrapper's own rule around any controller (exploration, rehearsal):
// each pick is the wrapper's with probability `share`, else the wrapped controller's. The coin flips
// come first, then the inner controller's picks, then the wrapper's arms, in that order on the rng.
// A wrapper keeps no state of its own (its state is the inner controller's).
import type { Rng } from '../core/rng.js';
import type { Arm, ArmResult, Controller, Pick, PickContext } from './types.js';
import { newPick, requireArms } from './util.js';

export abstract class MixWrapper implements Controller {
  constructor(
    readonly inner: Controller,
    readonly share: number,
  ) {}
  get name(): string {
    return this.inner.name;
  }
  /** Whether the wrapper has anything to offer in this context; if not, it draws nothing from the rng. */
  protected active(_ctx: PickContext): boolean {
    return true;
  }
  /** The wrapper's own arm for one of its picks. */
  protected abstract own(rng: Rng, ctx: PickContext): Arm;
  pick(n: number, rng: Rng, ctx: PickContext): Pick[] {
    if (!this.active(ctx)) return this.inner.pick(n, rng, ctx);
    requireArms(ctx.arms, this.name);
    const mine: boolean[] = [];
    for (let i = 0; i < n; i++) mine.push(rng.next() < this.share);
    const m = mine.filter((x) => !x).length;
    const inner = m > 0 ? this.inner.pick(m, rng, ctx) : [];
    let j = 0;
    return mine.map((x) => (x ? newPick(this.own(rng, ctx)) : inner[j++]!));
  }
  update(results: ArmResult[]): void {
    this.inner.update(results);
  }
  state(): unknown {
    return this.inner.state();
  }
  restore(state: unknown): void {
    this.inner.restore(state);
  }
  frontier(): Record<string, number> | undefined {
    return this.inner.frontier?.();
  }
}
