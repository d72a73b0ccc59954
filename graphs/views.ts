// The views behind `cogen skills`, on any SkillGraph: the mastery table (default), the frontier,
// the timeline, one skill in detail, and two runs compared; each renders as table | json | dot |
// graphml | cypher. `renderSkills` is the one entry point the CLI needs; the data functions
// (masteryTable, frontier, timeline, showSkill, compareRuns: views-data.ts) are exported for other
// callers; the dot, graphml and cypher renderings are exporters.ts's.
export type { SkillState } from './exporters.js';
import { toCypher, toDot, toGraphML, type SkillState } from './exporters.js';
import { masteryBar } from '../curricula/index.js';
import type { GraphRun, SkillGraph } from './types.js';
import { pct } from '../core/stats.js';
import {
  VIEW_FORMATS,
  compareRuns,
  frontier,
  masteryTable,
  resolveRun,
  showSkill,
  timeline,
  type FrontierRow,
  type MasteryRow,
  type ProbeSets,
  type SkillDetail,
  type SkillsViewRequest,
  type TimelineEvent,
  type ViewFormat,
} from './views-data.js';

export * from './views-data.js';

type ShowRequest = Extract<SkillsViewRequest, { view: 'show' }>;
type CompareRequest = Extract<SkillsViewRequest, { view: 'compare' }>;
type RunViewRequest = Exclude<SkillsViewRequest, ShowRequest | CompareRequest>;

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
  if (req.view === 'compare') return renderCompare(graph, req, format);
  if (req.view === 'show') return renderShow(graph, req, format);
  return renderRunView(graph, req, format);
}

async function renderCompare(graph: SkillGraph, req: CompareRequest, format: ViewFormat): Promise<string> {
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

async function renderShow(graph: SkillGraph, req: ShowRequest, format: ViewFormat): Promise<string> {
  const detail = await showSkill(graph, req.skill, { runId: req.runId, exemplars: req.exemplars });
  if (format === 'json')
    return json({ ...detail, ...(req.probeSets ? { probeSet: req.probeSets.skills[req.skill] ?? null } : {}) });
  if (format === 'table') return showTable(detail, req.probeSets);
  return showGraph(graph, req, detail, format);
}

/** One skill as text: its prerequisites and dependents, its mastered intervals, its exemplar tasks. */
function showTable(detail: SkillDetail, probeSets: ProbeSets | undefined): string {
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
  if (probeSets) lines.push(probeSetLine(k.id, probeSets));
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

/** One skill with its neighbours and exemplar tasks, as dot or GraphML. */
async function showGraph(graph: SkillGraph, req: ShowRequest, detail: SkillDetail, format: ViewFormat) {
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

/** The views of one run: mastery, frontier, timeline; as dot or GraphML, each is the mastery graph. */
async function renderRunView(graph: SkillGraph, req: RunViewRequest, format: ViewFormat): Promise<string> {
  const run = await resolveRun(graph, req.runId);
  if (req.view === 'timeline') {
    const events = await timeline(graph, run.id);
    if (format === 'json') return json({ run: run.id, events });
    if (format === 'table') return timelineTable(run, events);
  }
  const rows = await masteryTable(graph, run.id, req.atStep);
  const front = await frontier(graph, run.id, req.atStep);
  if (req.view === 'frontier') {
    if (format === 'json') return json({ run: run.id, frontier: front });
    if (format === 'table') return frontierTable(run, front);
  }
  if (req.view === 'mastery') {
    if (format === 'json')
      return json({
        run: run.id,
        skills: rows,
        ...(req.probeSets ? { probeSets: req.probeSets } : {}),
        ...(req.latest ? { latest: req.latest } : {}),
      });
    if (format === 'table') return masteryText(run, rows, req);
  }
  const skills = await graph.skills();
  const state = new Map(rows.map((r) => [r.skillId, r.state]));
  const frontierSet = new Set(front.map((f) => f.skillId));
  return format === 'dot'
    ? toDot(skills, { title: run.id, state, frontier: frontierSet })
    : toGraphML(skills, { state });
}

function timelineTable(run: GraphRun, events: TimelineEvent[]): string {
  return (
    `run ${run.id}\n` +
    formatTable(
      ['step', 'event', 'skill', 'accuracy', 'baseline', 'at'],
      events.map((e) => [e.step, e.event, e.skillId, pct(e.accuracy), pct(e.baseline), e.at]),
    )
  );
}

function frontierTable(run: GraphRun, front: FrontierRow[]): string {
  return (
    `run ${run.id}: ${front.length} skill(s) unlockable next\n` +
    formatTable(
      ['skill', 'name', 'family', 'level', 'state', 'requires'],
      front.map((f) => [f.skillId, f.name, f.family, f.level, f.state, f.requires.join(', ') || null]),
    )
  );
}

/** The mastery table as text, with the run's probe sets and latest round beside it when known. */
function masteryText(run: GraphRun, rows: MasteryRow[], req: RunViewRequest): string {
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
