// Uniform over the skills still to learn: each open arm is weighted by how many masterable skills
// it exercises that are not mastered yet, so an arm whose skills are all mastered gets no fresh
// picks (rehearsal.ts keeps it in view) and its share goes to the arms still being learned. Before
// anything is mastered, arms that exercise equally many skills are equally likely. A fresh pick
// asks the generators to pass over drafts made only of mastered skills, as learnability.ts does.
// On the learn preset it moved the batch to arithmetic once logic was mastered but mastered no more
// skills than uniform (bench/results/solver-view.md), so that preset keeps uniform.
import type { Rng } from '../core/rng.js';
import type { Skill } from '../core/task.js';
import {
  armKey,
  type Arm,
  type ArmResult,
  type Controller,
  type Pick,
  type PickContext,
  type SkillArms,
} from './types.js';
import { checkState, requireArms, sampleArms, skillArms } from './util.js';

/** PickContext.unmastered: the masterable skills not mastered now, each with its open arms. */
export function unmasteredSkills(
  mastered: ReadonlySet<string>,
  masterable: ReadonlySet<string>,
  skills: readonly Skill[],
  arms: readonly Arm[],
): SkillArms[] {
  return skillArms(
    skills.filter((s) => masterable.has(s.id) && !mastered.has(s.id)),
    arms,
  );
}

export class UnmasteredController implements Controller {
  readonly name = 'unmastered';

  /** Per open arm (ctx.arms' order), how many unmastered skills it exercises; all 1 when none is left. */
  weights(ctx: PickContext): number[] {
    const count = new Map<string, number>();
    for (const s of ctx.unmastered ?? []) for (const a of s.arms) count.set(armKey(a), (count.get(armKey(a)) ?? 0) + 1);
    const w = ctx.arms.map((a) => count.get(armKey(a)) ?? 0);
    return w.some((x) => x > 0) ? w : w.map(() => 1);
  }

  pick(n: number, rng: Rng, ctx: PickContext): Pick[] {
    requireArms(ctx.arms, this.name);
    const picks = sampleArms(ctx.arms, this.weights(ctx), n, rng);
    const avoid = (ctx.mastered ?? []).map((s) => s.skillId);
    return avoid.length === 0 ? picks : picks.map((p) => (p.kind === 'new' ? { ...p, avoid } : p));
  }
  update(_results: ArmResult[]): void {}
  state(): unknown {
    return { name: this.name, version: 1 };
  }
  restore(state: unknown): void {
    checkState(state, this.name);
  }
}
