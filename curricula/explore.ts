// A fraction of uniform exploration around any controller: each pick is, with probability `explore`,
// a fresh task of an open arm drawn uniformly; the rest come from the wrapped controller (mix.ts).
import type { Rng } from '../core/rng.js';
import { MixWrapper } from './mix.js';
import type { Arm, Controller, PickContext } from './types.js';

export class ExploreWrapper extends MixWrapper {
  protected own(rng: Rng, ctx: PickContext): Arm {
    return rng.pick(ctx.arms);
  }
}

export function withExploration(inner: Controller, explore: number): Controller {
  return explore > 0 ? new ExploreWrapper(inner, explore) : inner;
}
