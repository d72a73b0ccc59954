// Rehearsal around any controller: each pick is, with probability `rehearsal`, a fresh task of an
// open arm that exercises a mastered skill (a mastered skill drawn uniformly, then one of its open
// arms), so that training on new skills keeps showing the solver the ones it has learned; the rest
// come from the wrapped controller. Before anything is mastered the wrapper draws nothing from the
// rng and returns the inner controller's picks unchanged. It keeps no state of its own.
import type { Rng } from '../core/rng.js';
import type { Skill } from '../core/task.js';
import { armKey, type Arm, type ArmResult, type Controller, type MasteredSkill, type Pick, type PickContext } from './types.js';
import { newPick, requireArms } from './util.js';

export class RehearsalWrapper implements Controller {
  constructor(
    readonly inner: Controller,
    readonly rehearsal: number,
  ) {}
  get name(): string {
    return this.inner.name;
  }
  pick(n: number, rng: Rng, ctx: PickContext): Pick[] {
    const rehearsable = rehearsableSkills(ctx);
    if (rehearsable.length === 0) return this.inner.pick(n, rng, ctx);
    requireArms(ctx.arms, this.name);
    const rehearsed: (Arm | null)[] = [];
    for (let i = 0; i < n; i++) rehearsed.push(rng.next() < this.rehearsal ? rng.pick(rng.pick(rehearsable)) : null);
    const m = rehearsed.filter((a) => a === null).length;
    const inner = m > 0 ? this.inner.pick(m, rng, ctx) : [];
    let j = 0;
    return rehearsed.map((arm) => (arm ? newPick(arm) : inner[j++]!));
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
export function masteredSkills(mastered: ReadonlySet<string>, skills: readonly Skill[], arms: readonly Arm[]): MasteredSkill[] {
  return skills
    .filter((s) => mastered.has(s.id))
    .map((s) => ({ skillId: s.id, arms: arms.filter((a) => a.family === s.family && a.level === s.level) }));
}
