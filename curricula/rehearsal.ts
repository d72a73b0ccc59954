// Rehearsal around any controller: each pick is, with probability `rehearsal`, a fresh task of an
// open arm that exercises a mastered skill (a mastered skill drawn uniformly, then one of its open
// arms), so that training on new skills keeps showing the solver the ones it has learned; the rest
// come from the wrapped controller (mix.ts). Before anything is mastered the wrapper draws nothing
// from the rng and returns the inner controller's picks unchanged.
import type { Rng } from '../core/rng.js';
import type { Skill } from '../core/task.js';
import { MixWrapper } from './mix.js';
import { skillArms } from './util.js';
import { armKey, type Arm, type Controller, type MasteredSkill, type PickContext } from './types.js';

export class RehearsalWrapper extends MixWrapper {
  protected override active(ctx: PickContext): boolean {
    return rehearsableSkills(ctx).length > 0;
  }
  protected own(rng: Rng, ctx: PickContext): Arm {
    return rng.pick(rng.pick(rehearsableSkills(ctx)));
  }
}

/** For each mastered skill with at least one open arm, those open arms (closed ones never rehearse). */
function rehearsableSkills(ctx: PickContext): Arm[][] {
  if (!ctx.mastered || ctx.mastered.length === 0) return [];
  const open = new Set(ctx.arms.map(armKey));
  return ctx.mastered.map((s) => s.arms.filter((a) => open.has(armKey(a)))).filter((arms) => arms.length > 0);
}

export function withRehearsal(inner: Controller, rehearsal: number): Controller {
  return rehearsal > 0 ? new RehearsalWrapper(inner, rehearsal) : inner;
}

/**
 * The mastered skills as PickContext carries them: each with the arms of its own family and level
 * (where its probes are drawn), so that rehearsal practises the skill where it was learned.
 */
export function masteredSkills(
  mastered: ReadonlySet<string>,
  skills: readonly Skill[],
  arms: readonly Arm[],
): MasteredSkill[] {
  return skillArms(
    skills.filter((s) => mastered.has(s.id)),
    arms,
  );
}
