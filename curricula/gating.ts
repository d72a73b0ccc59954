// Skill gating (combinable with any controller): an arm is open when every prerequisite of every
// skill it exercises is mastered or taught by the arm itself (a skill of the arm's own level).
// Roots (skills without prerequisites) are always unlocked, so the level-0 arms are open from the
// start; more open as skills get mastered during the run.
import type { Arm } from './types.js';

/** The part of a skill that gating reads (core/task.ts's Skill fits). */
export interface GateSkill {
  id: string;
  requires: readonly string[];
  level: number;
}

export interface GatingInput {
  skills: readonly GateSkill[];
  /** The skills an arm exercises (the generators know; gating does not look inside them). */
  armSkills: (arm: Arm) => readonly string[];
}

/** Skills whose prerequisites are all mastered (roots always; unknown ids count as roots). */
export function unlockedSkills(skills: readonly GateSkill[], mastered: Iterable<string>): Set<string> {
  const m = new Set(mastered);
  const out = new Set<string>();
  for (const s of skills) if (s.requires.every((r) => m.has(r))) out.add(s.id);
  return out;
}

export function isArmOpen(arm: Arm, input: GatingInput, mastered: ReadonlySet<string>): boolean {
  const byId = new Map(input.skills.map((s) => [s.id, s]));
  return armOpen(arm, input.armSkills, byId, mastered);
}

function armOpen(
  arm: Arm,
  armSkills: GatingInput['armSkills'],
  byId: Map<string, GateSkill>,
  mastered: ReadonlySet<string>,
): boolean {
  const ids = armSkills(arm);
  // The skills of the arm's own level are learned in it, so one of them that another needs (arith.sub
  // needs arith.add, both level 0) does not close the arm: that would close it for good.
  const taught = new Set(ids.filter((id) => byId.get(id)?.level === arm.level));
  for (const id of ids) {
    const s = byId.get(id);
    if (s && !s.requires.every((r) => mastered.has(r) || taught.has(r))) return false;
  }
  return true;
}

/**
 * The open arms, in the order given. Never empty when `arms` is not: if nothing is open (a taxonomy
 * without roots), the arms of the lowest level are returned so that the run can start.
 */
export function openArms(arms: readonly Arm[], input: GatingInput, mastered: Iterable<string>): Arm[] {
  const m = new Set(mastered);
  const byId = new Map(input.skills.map((s) => [s.id, s]));
  const open = arms.filter((a) => armOpen(a, input.armSkills, byId, m));
  if (open.length > 0 || arms.length === 0) return open;
  const low = Math.min(...arms.map((a) => a.level));
  return arms.filter((a) => a.level === low);
}

/** Arms open with `after` mastered that were closed with `before` (for "unlocked" notices). */
export function newlyOpened(
  arms: readonly Arm[],
  input: GatingInput,
  before: Iterable<string>,
  after: Iterable<string>,
): Arm[] {
  const was = new Set(openArms(arms, input, before));
  return openArms(arms, input, after).filter((a) => !was.has(a));
}

export interface Gate {
  readonly enabled: boolean;
  /** The arms open given the mastered skills (all of them when gating is off). */
  open(arms: readonly Arm[], mastered: Iterable<string>): Arm[];
}

/** Gating bound to a taxonomy; with `enabled: false` every arm is open. */
export function createGate(input: GatingInput & { enabled?: boolean }): Gate {
  const enabled = input.enabled ?? true;
  return {
    enabled,
    open: (arms, mastered) => (enabled ? openArms(arms, input, mastered) : [...arms]),
  };
}
