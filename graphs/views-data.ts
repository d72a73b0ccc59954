// The data behind `cogen skills`' views, on any SkillGraph (graphs/views.ts renders them): the
// mastery table, the frontier, the timeline, one skill in detail, and two runs compared.
import type { Skill } from '../core/task.js';
import type { SkillState } from './exporters.js';
import type { GraphRun, GraphTask, Mastery, SkillGraph } from './types.js';

export type ViewFormat = 'table' | 'json' | 'dot' | 'graphml' | 'cypher';
export const VIEW_FORMATS: readonly ViewFormat[] = ['table', 'json', 'dot', 'graphml', 'cypher'];

export interface MasteryRow {
  skillId: string;
  name: string;
  family: string;
  level: number;
  state: SkillState;
  /** mastered: step the open interval began; forgotten: step it was forgotten; never: null. */
  since: number | null;
  sinceAt: string | null;
  /** Probe accuracy at the last transition (learned or forgotten), null if never mastered. */
  accuracy: number | null;
  /** The trivial baseline of the skill's probes at that transition (null: none, or not recorded). */
  baseline: number | null;
  /** How many MASTERED intervals (times learned). */
  intervals: number;
}

/**
 * A run's probe sets, as the run recorded them (run-store meta `probePlan`, not part of the graph):
 * per skill its size, its trivial baseline and whether it can show mastery at all, with the rule's
 * threshold, margin and minimum size.
 */
export interface ProbeSets {
  learnAt: number;
  margin: number;
  minProbes: number;
  skills: Record<string, { probes: number; baseline: number; masterable: boolean }>;
  /** Each tabled level's held-out set, by `<family>/<level>` (src/run/level-sets.ts); runs made before level sets have none. */
  levels?: Record<string, { probes: number; baseline: number; masterable: boolean }>;
}

/** Each skill's accuracy at the run's latest probe round that measured it, mastered or not. */
export type LatestProbes = Record<string, { step: number; accuracy: number }>;

export interface FrontierRow {
  skillId: string;
  name: string;
  family: string;
  level: number;
  state: Exclude<SkillState, 'mastered'>;
  requires: string[];
}

export interface TimelineEvent {
  step: number;
  at: string;
  skillId: string;
  event: 'learned' | 'forgotten';
  accuracy: number | null;
  baseline: number | null;
}

export interface SkillDetail {
  skill: Skill;
  state: SkillState | null;
  prerequisites: { skillId: string; name: string; state: SkillState | null }[];
  dependents: { skillId: string; name: string; state: SkillState | null }[];
  intervals: Mastery[];
  /** Tasks that exercise the skill, each with the proposer that wrote it. */
  exemplars: (Pick<GraphTask, 'id' | 'type' | 'family' | 'level' | 'solveRate' | 'program' | 'parent'> & {
    proposer: string | null;
  })[];
}

export interface CompareRow {
  skillId: string;
  name: string;
  a: { state: SkillState; since: number | null };
  b: { state: SkillState; since: number | null };
  same: boolean;
}

export type SkillsViewRequest =
  | {
      view: 'mastery' | 'frontier' | 'timeline';
      runId?: string;
      atStep?: number;
      format?: ViewFormat;
      probeSets?: ProbeSets;
      latest?: LatestProbes;
    }
  | { view: 'show'; skill: string; runId?: string; exemplars?: number; format?: ViewFormat; probeSets?: ProbeSets }
  | { view: 'compare'; runIds: [string, string]; atStep?: number; format?: ViewFormat };

/** The run to show: the given id (checked), else the latest run (by startedAt), else an error. */
export async function resolveRun(graph: SkillGraph, runId?: string): Promise<GraphRun> {
  const runs = await graph.runs();
  if (runId !== undefined) {
    const run = runs.find((r) => r.id === runId);
    if (!run)
      throw new Error(`no run '${runId}' in the skill graph (runs: ${runs.map((r) => r.id).join(', ') || 'none'})`);
    return run;
  }
  const last = runs.filter((r) => r.startedAt !== null).at(-1) ?? runs.at(-1);
  if (!last) throw new Error('the skill graph has no runs yet');
  return last;
}

/** State of one skill from its intervals, as of `atStep` (default: the end). */
function stateOf(
  intervals: Mastery[],
  atStep = Infinity,
): Pick<MasteryRow, 'state' | 'since' | 'sinceAt' | 'accuracy' | 'baseline'> {
  const seen = intervals.filter((m) => m.sinceStep <= atStep).sort((a, b) => a.sinceStep - b.sinceStep);
  const last = seen.at(-1);
  if (!last) return { state: 'never', since: null, sinceAt: null, accuracy: null, baseline: null };
  if (last.untilStep === null || last.untilStep > atStep) {
    return {
      state: 'mastered',
      since: last.sinceStep,
      sinceAt: last.sinceAt,
      accuracy: last.accuracy,
      baseline: last.baseline ?? null,
    };
  }
  return {
    state: 'forgotten',
    since: last.untilStep,
    sinceAt: last.untilAt,
    accuracy: last.untilAccuracy ?? null,
    baseline: last.untilBaseline ?? null,
  };
}

function groupBySkill(ms: Mastery[]): Map<string, Mastery[]> {
  const out = new Map<string, Mastery[]>();
  for (const m of ms) (out.get(m.skillId) ?? out.set(m.skillId, []).get(m.skillId)!).push(m);
  return out;
}

export async function masteryTable(graph: SkillGraph, runId: string, atStep?: number): Promise<MasteryRow[]> {
  const [skills, ms] = await Promise.all([graph.skills(), graph.mastery(runId)]);
  const by = groupBySkill(ms);
  return skills
    .map((k) => {
      const intervals = (by.get(k.id) ?? []).filter((m) => m.sinceStep <= (atStep ?? Infinity));
      return {
        skillId: k.id,
        name: k.name,
        family: k.family,
        level: k.level,
        ...stateOf(intervals, atStep),
        intervals: intervals.length,
      };
    })
    .sort((a, b) => a.family.localeCompare(b.family) || a.level - b.level || a.skillId.localeCompare(b.skillId));
}

/** Skills not mastered (now, or at atStep) whose prerequisites are all mastered. */
export async function frontier(graph: SkillGraph, runId: string, atStep?: number): Promise<FrontierRow[]> {
  const [skills, rows] = await Promise.all([graph.skills(), masteryTable(graph, runId, atStep)]);
  const state = new Map(rows.map((r) => [r.skillId, r.state]));
  return skills
    .filter((k) => state.get(k.id) !== 'mastered' && k.requires.every((r) => state.get(r) === 'mastered'))
    .map((k) => ({
      skillId: k.id,
      name: k.name,
      family: k.family,
      level: k.level,
      state: (state.get(k.id) ?? 'never') as FrontierRow['state'],
      requires: k.requires,
    }))
    .sort((a, b) => a.level - b.level || a.family.localeCompare(b.family) || a.skillId.localeCompare(b.skillId));
}

export async function timeline(graph: SkillGraph, runId: string): Promise<TimelineEvent[]> {
  const ms = await graph.mastery(runId);
  const events: TimelineEvent[] = [];
  for (const m of ms) {
    events.push({
      step: m.sinceStep,
      at: m.sinceAt,
      skillId: m.skillId,
      event: 'learned',
      accuracy: m.accuracy,
      baseline: m.baseline ?? null,
    });
    if (m.untilStep !== null) {
      events.push({
        step: m.untilStep,
        at: m.untilAt ?? '',
        skillId: m.skillId,
        event: 'forgotten',
        accuracy: m.untilAccuracy ?? null,
        baseline: m.untilBaseline ?? null,
      });
    }
  }
  const order = { forgotten: 0, learned: 1 };
  return events.sort(
    (a, b) => a.step - b.step || order[a.event] - order[b.event] || a.skillId.localeCompare(b.skillId),
  );
}

export async function showSkill(
  graph: SkillGraph,
  skillId: string,
  opts: { runId?: string; exemplars?: number } = {},
): Promise<SkillDetail> {
  const skills = await graph.skills();
  const skill = skills.find((k) => k.id === skillId);
  if (!skill) throw new Error(`no skill '${skillId}' in the skill graph`);
  const rows = opts.runId ? await masteryTable(graph, opts.runId) : [];
  const state = new Map(rows.map((r) => [r.skillId, r.state]));
  const name = new Map(skills.map((k) => [k.id, k.name]));
  const ref = (id: string) => ({ skillId: id, name: name.get(id) ?? id, state: state.get(id) ?? null });
  const tasks = await graph.tasksForSkill(skillId, opts.exemplars ?? 5, opts.runId);
  const intervals = opts.runId ? (await graph.mastery(opts.runId)).filter((m) => m.skillId === skillId) : [];
  return {
    skill,
    state: state.get(skillId) ?? null,
    prerequisites: skill.requires.map(ref),
    dependents: skills.filter((k) => k.requires.includes(skillId)).map((k) => ref(k.id)),
    intervals,
    exemplars: tasks.map(({ id, type, family, level, solveRate, program, parent, proposer }) => ({
      id,
      type,
      family,
      level,
      solveRate,
      program,
      parent,
      proposer: proposer ?? null,
    })),
  };
}

export async function compareRuns(
  graph: SkillGraph,
  runA: string,
  runB: string,
  atStep?: number,
): Promise<CompareRow[]> {
  await resolveRun(graph, runA);
  await resolveRun(graph, runB);
  const [a, b] = await Promise.all([masteryTable(graph, runA, atStep), masteryTable(graph, runB, atStep)]);
  const bm = new Map(b.map((r) => [r.skillId, r]));
  return a.map((ra) => {
    const rb = bm.get(ra.skillId);
    const sb = { state: rb?.state ?? ('never' as SkillState), since: rb?.since ?? null };
    return {
      skillId: ra.skillId,
      name: ra.name,
      a: { state: ra.state, since: ra.since },
      b: sb,
      same: ra.state === sb.state,
    };
  });
}
