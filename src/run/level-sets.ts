// Each level of a run's families has a held-out set (docs/levels.md): at the tabled levels, every
// probe of that family and level (src/run/probes.ts gives each (family, level) block the level's
// quota, balanced against trivial policies); above them, the evaluation sets of src/run/level-evals.ts.
// A probe round records each set's greedy accuracy as `level.<family>/<d>` and each family's highest
// level passed as `passed.<family>` (the rule: curricula/mastery.ts, levelPassed); the readers here
// turn those rows, and the level-frontier controller's `frontier.<family>/<type>`, into the climb
// `cogen skills`, the dashboard and a run's summary show.
import { levelPassed, masterable, type MasteryOptions, type SkillProbe } from '../../curricula/index.js';
import type { ProbeSets } from '../../graphs/index.js';
import type { Skill, Task } from '../../core/task.js';
import { trivialBaseline } from './trivial.js';

/** The metrics keys of a level set's accuracy at a probe round: `level.<family>/<d>`. */
export const LEVEL_PREFIX = 'level.';
/** Runs made before every level had a set recorded the sets above the tables as `eval.<family>/<d>`. */
export const OLD_LEVEL_PREFIX = 'eval.';
/** The metrics keys of a family's highest level passed at a probe round (−1: none): `passed.<family>`. */
export const PASSED_PREFIX = 'passed.';
const FRONTIER_PREFIX = 'frontier.';
const levelKey = (family: string, level: number): string => `${LEVEL_PREFIX}${family}/${level}`;
const passedKey = (family: string): string => `${PASSED_PREFIX}${family}`;

/** One level set's result at a probe round. */
export interface LevelResult {
  family: string;
  level: number;
  probe: SkillProbe;
}

/** The probes of a tabled level's set: every probe of that family at that level. */
export const levelProbeSet = <P extends { task: Pick<Task, 'family' | 'level'> }>(
  family: string,
  level: number,
  probes: readonly P[],
): P[] => probes.filter((p) => p.task.family === family && p.task.level === level);

/** The (family, level) blocks of a list of probes, in order of first appearance. */
export const probeLevels = (probes: readonly { task: Pick<Task, 'family' | 'level'> }[]): [string, number][] => [
  ...new Map(
    probes.map((p) => [`${p.task.family}/${p.task.level}`, [p.task.family, p.task.level] as [string, number]]),
  ).values(),
];

/** Each tabled level set's size, trivial baseline and whether it can show a pass, for the run's stored plan. */
export function levelPlan(
  probes: readonly { task: Task; trivial: string[] }[],
  opts: MasteryOptions,
): NonNullable<ProbeSets['levels']> {
  return Object.fromEntries(
    probeLevels(probes).map(([family, level]) => {
      const set = levelProbeSet(family, level, probes);
      const baseline = trivialBaseline(set);
      return [
        `${family}/${level}`,
        { probes: set.length, baseline, masterable: masterable({ baseline, probes: set.length }, opts) },
      ];
    }),
  );
}

/**
 * A probe round's level sets as metrics: each set's accuracy (`level.<family>/<d>`) and each
 * family's highest level passed (`passed.<family>`), which needs the level's set and every skill of
 * the family at levels ≤ d that the run's probes measure (those without a probe set are not asked
 * for: the round has no data on them).
 */
export function levelSetMetrics(
  levels: readonly LevelResult[],
  perSkill: ReadonlyMap<string, SkillProbe>,
  skills: readonly Pick<Skill, 'id' | 'family' | 'level'>[],
  opts: MasteryOptions,
): Record<string, number> {
  const out: Record<string, number> = {};
  const families = [...new Set(levels.map((l) => l.family))];
  for (const family of families) {
    const own = levels.filter((l) => l.family === family).sort((a, b) => a.level - b.level);
    const measured = skills.filter((s) => s.family === family && perSkill.has(s.id));
    for (const l of own) out[levelKey(family, l.level)] = l.probe.accuracy;
    out[passedKey(family)] = levelPassed(
      own.map((l) => ({
        level: l.level,
        set: l.probe,
        skills: measured.filter((s) => s.level <= l.level).map((s) => perSkill.get(s.id)),
      })),
      opts,
    );
  }
  return out;
}

/** A family's climb over a run: its highest level passed at the last probe round, and when each level was first reached. */
export interface LevelClimb {
  /** The highest level passed at the latest probe round (−1: none). */
  now: number;
  /** Per level, the first step whose round passed it or a higher level. */
  firstReached: Record<string, number>;
  /** The probe rounds at which the highest level passed changed: [step, level]. */
  changes: [step: number, level: number][];
}

/** Each family's climb, from a run's metrics rows (oldest first); empty for runs made before level sets. */
export function levelsPassedOf(metrics: readonly Record<string, unknown>[]): Record<string, LevelClimb> {
  const out: Record<string, LevelClimb> = {};
  for (const m of metrics) {
    for (const [k, v] of Object.entries(m)) {
      if (!k.startsWith(PASSED_PREFIX) || typeof v !== 'number') continue;
      const step = Number(m.step);
      const c = (out[k.slice(PASSED_PREFIX.length)] ??= { now: v, firstReached: {}, changes: [] });
      if (c.changes.length === 0 || v !== c.now) c.changes.push([step, v]);
      c.now = v;
      for (let d = 0; d <= v; d++) c.firstReached[d] ??= step;
    }
  }
  return out;
}

/** The step at which a family first reached the level it passes now (null when it passes none). */
export const reachedAt = (c: LevelClimb): number | null => (c.now < 0 ? null : (c.firstReached[c.now] ?? null));

/** Each family × type's level-frontier h over a run, and the steps it rose at (from the run's metrics); null without that controller. */
export function frontierHistory(
  metrics: readonly Record<string, unknown>[],
): Record<string, { now: number; rises: [step: number, h: number][] }> | null {
  const out: Record<string, { now: number; rises: [number, number][] }> = {};
  for (const m of metrics) {
    for (const [k, v] of Object.entries(m)) {
      if (!k.startsWith(FRONTIER_PREFIX) || typeof v !== 'number') continue;
      const e = (out[k.slice(FRONTIER_PREFIX.length)] ??= { now: v, rises: [] });
      if (v !== e.now || e.rises.length === 0) e.rises.push([Number(m.step), v]);
      e.now = v;
    }
  }
  return Object.keys(out).length > 0 ? out : null;
}

/** What a run's summary says of each family's climb: its highest level passed now, since when, and h per type (level-frontier runs). */
export interface FamilyClimb {
  family: string;
  /** The highest level passed at the last probe round (−1: none). */
  passed: number;
  /** The step at which it was first reached (null when none is passed). */
  since: number | null;
  /** The level-frontier controller's h now, per task type (empty with another controller). */
  h: Record<string, number>;
}

/** Each family's climb from a run's metrics rows, families in name order. */
export function climbOf(metrics: readonly Record<string, unknown>[]): FamilyClimb[] {
  const frontier = frontierHistory(metrics) ?? {};
  return Object.entries(levelsPassedOf(metrics))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([family, c]) => ({
      family,
      passed: c.now,
      since: reachedAt(c),
      h: Object.fromEntries(
        Object.entries(frontier).flatMap(([k, e]) =>
          k.startsWith(`${family}/`) ? [[k.slice(family.length + 1), e.now]] : [],
        ),
      ),
    }));
}
