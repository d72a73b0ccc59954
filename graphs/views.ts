// The views behind `cogen skills`, on any SkillGraph: the mastery table (default), the frontier,
// the timeline, one skill in detail, and two runs compared; each renders as table | json | dot |
// graphml | cypher. `renderSkills` is the one entry point the CLI needs; the data functions
// (masteryTable, frontier, timeline, showSkill, compareRuns) are exported for other callers; the
// dot, graphml and cypher renderings are exporters.ts's.
import type { Skill } from '../core/task.js';
export type { SkillState } from './exporters.js';
import { toCypher, toDot, toGraphML, type SkillState } from './exporters.js';
import { masteryBar } from '../curricula/index.js';
import type { GraphRun, GraphTask, Mastery, SkillGraph } from './types.js';
import { pct } from '../core/stats.js';

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

// ---------------------------------------------------------------------------------------------
// formatting

/** A plain aligned text table. */
export function formatTable(headers: string[], rows: (string | number | null)[][]): string {
  const cells = rows.map((r) => r.map((c) => (c === null || c === undefined ? '-' : String(c))));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n') + '\n';
}

/** How the mastered skills stand against their trivial baselines, for the mastery table's header. */
export function aboveBaseline(rows: Pick<MasteryRow, 'state' | 'accuracy' | 'baseline'>[]): string {
  const mastered = rows.filter((r) => r.state === 'mastered');
  if (mastered.length === 0) return '';
  const gaps = mastered.flatMap((r) => (r.baseline === null || r.accuracy === null ? [] : [r.accuracy - r.baseline]));
  const above = gaps.filter((g) => g > 0);
  const range = above.length > 0 ? ` by ${pct(Math.min(...above))}–${pct(Math.max(...above))}` : '';
  const unknown = mastered.length - gaps.length;
  return `, ${above.length} of them above their trivial baseline${range}${unknown > 0 ? ` (${unknown} recorded without one)` : ''}`;
}

/** Why a skill's probe set can or cannot show mastery. */
export function probeSetLine(skillId: string, sets: ProbeSets): string {
  const set = sets.skills[skillId];
  if (!set || set.probes === 0)
    return 'probes: none (no held-out task of this run exercises it): not masterable in this run';
  const head = `probes: ${set.probes} held out, trivial baseline ${pct(set.baseline)}`;
  if (set.masterable) return `${head}; mastery needs ≥ ${pct(masteryBar(set.baseline, sets))} accuracy`;
  if (set.probes < sets.minProbes)
    return `${head}: not masterable in this run (${set.probes} probe${set.probes === 1 ? '' : 's'}, the rule needs ${sets.minProbes})`;
  return `${head}: not masterable in this run (no room above the baseline for the ${pct(sets.margin)} margin)`;
}

const json = (v: unknown) => JSON.stringify(v, null, 2) + '\n';

/** Renders one `cogen skills` view as a string. Throws Error with a one-line message on bad input. */
export async function renderSkills(graph: SkillGraph, req: SkillsViewRequest): Promise<string> {
  const format = req.format ?? 'table';
  if (!VIEW_FORMATS.includes(format)) throw new Error(`unknown format '${format}' (one of ${VIEW_FORMATS.join(', ')})`);
  if (format === 'cypher') return toCypher(await graph.snapshot());

  if (req.view === 'compare') {
    const [a, b] = req.runIds;
    const rows = await compareRuns(graph, a, b, req.atStep);
    if (format === 'json') return json({ runs: [a, b], skills: rows });
    if (format === 'table') {
      const diff = rows.filter((r) => !r.same).length;
      return (
        formatTable(
          ['skill', a, 'since', b, 'since', ''],
          rows.map((r) => [r.skillId, r.a.state, r.a.since, r.b.state, r.b.since, r.same ? '' : '*']),
        ) + `${diff} of ${rows.length} skills differ\n`
      );
    }
    const skills = await graph.skills();
    const state = new Map(rows.map((r) => [r.skillId, r.a.state]));
    return format === 'dot' ? toDot(skills, { title: `${a} vs ${b}`, state }) : toGraphML(skills, { state });
  }

  if (req.view === 'show') {
    const detail = await showSkill(graph, req.skill, { runId: req.runId, exemplars: req.exemplars });
    if (format === 'json')
      return json({ ...detail, ...(req.probeSets ? { probeSet: req.probeSets.skills[req.skill] ?? null } : {}) });
    if (format === 'table') {
      const k = detail.skill;
      const lines = [
        `${k.id} — ${k.name} (${k.family}, level ${k.level})${detail.state ? ` · ${detail.state}` : ''}`,
        k.description ? k.description : '(no description)',
        `requires: ${detail.prerequisites.map((p) => `${p.skillId}${p.state ? ` [${p.state}]` : ''}`).join(', ') || '-'}`,
        `unlocks:  ${detail.dependents.map((p) => `${p.skillId}${p.state ? ` [${p.state}]` : ''}`).join(', ') || '-'}`,
      ];
      if (detail.intervals.length > 0) {
        lines.push(
          `mastered: ${detail.intervals
            .map(
              (m) =>
                `steps ${m.sinceStep}–${m.untilStep ?? 'now'} (${pct(m.accuracy)}${m.baseline == null ? '' : `, trivial baseline ${pct(m.baseline)}`})`,
            )
            .join('; ')}`,
        );
      }
      if (req.probeSets) lines.push(probeSetLine(k.id, req.probeSets));
      lines.push('', 'exemplar tasks:');
      const text = lines.join('\n') + '\n';
      return (
        text +
        formatTable(
          ['task', 'type', 'level', 'solve rate', 'proposer', 'parent', 'program'],
          detail.exemplars.map((t) => [
            t.id,
            t.type,
            t.level,
            pct(t.solveRate),
            t.proposer,
            t.parent ? `${t.parent.op} ${t.parent.id}` : null,
            t.program.replace(/\s+/g, ' ').slice(0, 60),
          ]),
        )
      );
    }
    const skills = await graph.skills();
    const ids = new Set([
      req.skill,
      ...detail.prerequisites.map((p) => p.skillId),
      ...detail.dependents.map((p) => p.skillId),
    ]);
    const near = skills
      .filter((k) => ids.has(k.id))
      .map((k) => ({ ...k, requires: k.requires.filter((r) => ids.has(r)) }));
    const tasks = await graph.tasksForSkill(req.skill, req.exemplars ?? 5, req.runId);
    const state = new Map<string, SkillState>();
    for (const p of [...detail.prerequisites, ...detail.dependents]) if (p.state) state.set(p.skillId, p.state);
    if (detail.state) state.set(req.skill, detail.state);
    const onlyNear = tasks.map((t) => ({ ...t, skills: t.skills.filter((s) => ids.has(s)) }));
    return format === 'dot'
      ? toDot(near, { title: req.skill, state, tasks: onlyNear })
      : toGraphML(near, { state, tasks: onlyNear });
  }

  const run = await resolveRun(graph, req.runId);
  if (req.view === 'timeline') {
    const events = await timeline(graph, run.id);
    if (format === 'json') return json({ run: run.id, events });
    if (format === 'table') {
      return (
        `run ${run.id}\n` +
        formatTable(
          ['step', 'event', 'skill', 'accuracy', 'baseline', 'at'],
          events.map((e) => [e.step, e.event, e.skillId, pct(e.accuracy), pct(e.baseline), e.at]),
        )
      );
    }
  }
  const rows = await masteryTable(graph, run.id, req.atStep);
  const front = await frontier(graph, run.id, req.atStep);
  if (req.view === 'frontier') {
    if (format === 'json') return json({ run: run.id, frontier: front });
    if (format === 'table') {
      return (
        `run ${run.id}: ${front.length} skill(s) unlockable next\n` +
        formatTable(
          ['skill', 'name', 'family', 'level', 'state', 'requires'],
          front.map((f) => [f.skillId, f.name, f.family, f.level, f.state, f.requires.join(', ') || null]),
        )
      );
    }
  }
  if (req.view === 'mastery') {
    if (format === 'json')
      return json({
        run: run.id,
        skills: rows,
        ...(req.probeSets ? { probeSets: req.probeSets } : {}),
        ...(req.latest ? { latest: req.latest } : {}),
      });
    if (format === 'table') {
      const mastered = rows.filter((r) => r.state === 'mastered').length;
      const sets = req.probeSets;
      const masterable = sets ? ` (${Object.values(sets.skills).filter((p) => p.masterable).length} masterable)` : '';
      // With the run's probe sets: each skill's probe count, and the baseline of skills never learned.
      const probed = (r: MasteryRow) => (sets?.skills[r.skillId]?.probes ? sets.skills[r.skillId] : undefined);
      const probes = (r: MasteryRow) => {
        const set = probed(r);
        return set ? `${set.probes}${set.masterable ? '' : ' (not masterable)'}` : sets ? 'none' : null;
      };
      // progress before mastery: the latest round's accuracy beside the bar the skill must reach
      const latest = (r: MasteryRow) =>
        req.latest?.[r.skillId] ? `${pct(req.latest[r.skillId]!.accuracy)} @${req.latest[r.skillId]!.step}` : '-';
      const bar = (r: MasteryRow) => (sets && probed(r)?.masterable ? pct(masteryBar(probed(r)!.baseline, sets)) : '-');
      const progress = sets && req.latest ? ['latest', 'needs'] : [];
      return (
        `run ${run.id} (${run.status ?? 'unknown'}): ${mastered} of ${rows.length} skills mastered${masterable}${aboveBaseline(rows)}\n` +
        formatTable(
          [
            'skill',
            'name',
            'family',
            'level',
            'state',
            'since',
            'accuracy',
            'baseline',
            ...progress,
            'times',
            ...(sets ? ['probes'] : []),
          ],
          rows.map((r) => [
            r.skillId,
            r.name,
            r.family,
            r.level,
            r.state,
            r.since,
            pct(r.accuracy),
            pct(r.baseline ?? probed(r)?.baseline ?? null),
            ...(progress.length ? [latest(r), bar(r)] : []),
            r.intervals,
            ...(sets ? [probes(r)] : []),
          ]),
        )
      );
    }
  }
  const skills = await graph.skills();
  const state = new Map(rows.map((r) => [r.skillId, r.state]));
  const frontierSet = new Set(front.map((f) => f.skillId));
  return format === 'dot'
    ? toDot(skills, { title: run.id, state, frontier: frontierSet })
    : toGraphML(skills, { state });
}
