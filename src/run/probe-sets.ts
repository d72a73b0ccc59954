// A run's held-out probes as sets per skill: each skill's set and its trivial baseline, a probe
// round's scores, and the mastery summary a run ends with.
import {
  masterable,
  masteryBar,
  minProbes,
  type MasteryOptions,
  type MasteryState,
  type SkillProbe,
} from '../../curricula/index.js';
import type { ProbeSets } from '../../graphs/index.js';
import { type Skill, type Task, type Verdict } from '../../core/task.js';
import { isSolved } from '../../core/rules.js';
import { mean } from '../../core/stats.js';
import { trivialBaseline } from './trivial.js';
import { levelPlan, probeLevels, type LevelResult } from './level-sets.js';

export interface Probe {
  task: Task;
  prompt: string;
  /** The trivial answers that solve this probe, as `<group> <answer>` keys (see trivialKeys). */
  trivial: string[];
}

/** The probes that measure a skill: those of its own level that exercise it (any level if none there). */
export function skillProbeSet<P extends Pick<Probe, 'task'>>(skill: Skill, probes: readonly P[]): number[] {
  const at = (level: (l: number) => boolean) =>
    probes.flatMap((p, i) => (p.task.skills.includes(skill.id) && level(p.task.level) ? [i] : []));
  const own = at((l) => l === skill.level);
  return own.length > 0 ? own : at(() => true);
}

/** Each skill's probe set: its size, its trivial baseline, and whether it can show mastery at all. */
export function probeSets(probes: readonly Probe[], skills: readonly Skill[], opts: MasteryOptions): ProbeSets {
  const sets: ProbeSets['skills'] = {};
  for (const skill of skills) {
    const set = skillProbeSet(skill, probes).map((i) => probes[i]!);
    const baseline = trivialBaseline(set);
    sets[skill.id] = { probes: set.length, baseline, masterable: masterable({ baseline, probes: set.length }, opts) };
  }
  return {
    learnAt: opts.learnAt,
    margin: opts.margin,
    minProbes: minProbes(opts),
    skills: sets,
    levels: levelPlan(probes, opts),
  };
}

/** Per-skill and per-level probe results from the probes' verdicts, with the overall and per-arm accuracies. */
export function probeScores(probes: readonly Probe[], verdicts: readonly Verdict[], skills: readonly Skill[]) {
  const solved = verdicts.map((v) => (isSolved(v.reward) ? 1 : 0));
  const scored = (set: number[]): SkillProbe => ({
    accuracy: mean(set.map((i) => solved[i]!)),
    baseline: trivialBaseline(set.map((i) => probes[i]!)),
    probes: set.length,
  });
  const perSkill = new Map<string, SkillProbe>();
  for (const skill of skills) {
    const set = skillProbeSet(skill, probes);
    if (set.length > 0) perSkill.set(skill.id, scored(set));
  }
  // Each tabled level's set: every probe of that family and level (src/run/level-sets.ts).
  const perLevel: LevelResult[] = probeLevels(probes).map(([family, level]) => ({
    family,
    level,
    probe: scored(probes.flatMap((p, i) => (p.task.family === family && p.task.level === level ? [i] : []))),
  }));
  const perArm: Record<string, number[]> = {};
  probes.forEach((p, i) => (perArm[`probe.${p.task.family}/${p.task.level}/${p.task.type}`] ??= []).push(solved[i]!));
  return {
    overall: mean(solved),
    perSkill,
    perLevel,
    perArm: Object.fromEntries(Object.entries(perArm).map(([k, xs]) => [k, mean(xs)])),
  };
}

/** The metrics key of a skill's probe accuracy at a round (`cogen skills` reads the latest). */
export const SKILL_PROBE_PREFIX = 'skill.';

/** A probe round's per-skill accuracies as metrics: `skill.<id>` → accuracy. */
export function skillProbeMetrics(perSkill: ReadonlyMap<string, SkillProbe>): Record<string, number> {
  return Object.fromEntries([...perSkill].map(([id, p]) => [`${SKILL_PROBE_PREFIX}${id}`, p.accuracy]));
}

/** Each skill's latest probe accuracy in a run's metrics rows (oldest first), and its step. */
export function latestSkillProbes(
  metrics: readonly Record<string, unknown>[],
): Record<string, { step: number; accuracy: number }> {
  const out: Record<string, { step: number; accuracy: number }> = {};
  for (const m of metrics) {
    for (const [k, v] of Object.entries(m))
      if (k.startsWith(SKILL_PROBE_PREFIX) && typeof v === 'number')
        out[k.slice(SKILL_PROBE_PREFIX.length)] = { step: Number(m.step), accuracy: v };
  }
  return out;
}

/** What a run reports of mastery: each mastered skill beside its trivial baseline, how many skills the probes can show mastered, and what was forgotten. */
export interface MasterySummary {
  /** Each mastered skill's last probe accuracy beside its probe set's trivial baseline. */
  mastery: { skillId: string; accuracy: number; baseline: number }[];
  /**
   * Every masterable skill, mastered or not: its last probe accuracy (null before the first round),
   * its trivial baseline and the bar mastery needs (max(learnAt, baseline + margin)).
   */
  progress: { skillId: string; accuracy: number | null; baseline: number; bar: number; mastered: boolean }[];
  /** How many of the run's skills have a probe set that can show mastery (ProbeSets). */
  skillsMasterable: number;
  /** Skills learned at some probe round of the run, mastered at the end or not. */
  skillsEverLearned: string[];
  /** Forgetting: skills ever learned but not mastered now, and their share of those ever learned (0 when none was). */
  forgotten: { skills: string[]; share: number };
}

/** The skills whose probe sets can show mastery (what the unmastered controller weighs arms by). */
export const masterableSkills = (sets: ProbeSets): Set<string> =>
  new Set(Object.keys(sets.skills).filter((id) => sets.skills[id]!.masterable));

/** The autonomous run's summary and the served run's stats both report mastery this way. */
export function masterySummary(mastered: Set<string>, state: MasteryState, sets: ProbeSets): MasterySummary {
  const ever = Object.keys(state.firstLearned).sort();
  const forgotten = ever.filter((id) => !mastered.has(id));
  return {
    mastery: [...mastered].sort().map((skillId) => ({
      skillId,
      accuracy: state.accuracy[skillId] ?? 0,
      baseline: sets.skills[skillId]?.baseline ?? 0,
    })),
    progress: Object.entries(sets.skills)
      .filter(([, p]) => p.masterable)
      .map(([skillId, p]) => ({
        skillId,
        accuracy: state.accuracy[skillId] ?? null,
        baseline: p.baseline,
        bar: masteryBar(p.baseline, sets),
        mastered: mastered.has(skillId),
      })),
    skillsMasterable: masterableSkills(sets).size,
    skillsEverLearned: ever,
    forgotten: { skills: forgotten, share: ever.length > 0 ? forgotten.length / ever.length : 0 },
  };
}
