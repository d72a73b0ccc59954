// A fraction of uniform exploration around any controller: each pick is, with probability `explore`,
// a fresh task of an open arm drawn uniformly; the rest come from the wrapped controller. The wrapper
// keeps no state of its own (its state is the inner controller's).
import type { Rng } from '../core/rng.js';
import type { ArmResult, Controller, Pick, PickContext } from './types.js';
import { newPick, requireArms } from './util.js';

export class ExploreWrapper implements Controller {
  constructor(
    readonly inner: Controller,
    readonly explore: number,
  ) {}
  get name(): string {
    return this.inner.name;
  }
  pick(n: number, rng: Rng, ctx: PickContext): Pick[] {
    requireArms(ctx.arms, this.name);
    const explored: boolean[] = [];
    for (let i = 0; i < n; i++) explored.push(rng.next() < this.explore);
    const m = explored.filter((x) => !x).length;
    const inner = m > 0 ? this.inner.pick(m, rng, ctx) : [];
    let j = 0;
    return explored.map((x) => (x ? newPick(rng.pick(ctx.arms)) : inner[j++]!));
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
}

export function withExploration(inner: Controller, explore: number): Controller {
  return explore > 0 ? new ExploreWrapper(inner, explore) : inner;
}
