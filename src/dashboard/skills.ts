// A run's skill graph as the dashboard draws it: the taxonomy DAG with each skill's state at a step,
// and the timeline, read through the embedded graph's read methods (nothing is written).
import type Database from 'better-sqlite3';
import { EmbeddedSkillGraph } from '../../graphs/index.js';
import { masteryTable, timeline, type SkillState, type TimelineEvent } from '../../graphs/index.js';
import { hasTable, meta } from './runs.js';

export interface SkillView {
  atStep: number | null;
  lastStep: number;
  skills: {
    id: string;
    name: string;
    family: string;
    level: number;
    requires: string[];
    state: SkillState;
    since: number | null;
    accuracy: number | null;
  }[];
  timeline: TimelineEvent[];
}

/** The taxonomy DAG with each skill's state at `atStep` (the end when undefined): `cogen skills --at-step` over the embedded graph. */
export async function skillsOf(db: Database.Database | null, runId: string, atStep?: number): Promise<SkillView> {
  const empty: SkillView = { atStep: atStep ?? null, lastStep: 0, skills: [], timeline: [] };
  if (!db || !hasTable(db, 'graph_skills') || !hasTable(db, 'graph_mastered')) return empty;
  // Only the graph's read methods are used (no init(): that would create tables).
  const graph = new EmbeddedSkillGraph(db);
  const skills = await graph.skills();
  const rows = new Map((await masteryTable(graph, runId, atStep)).map((r) => [r.skillId, r]));
  const lastStep = Number(meta(db).lastStep ?? 0);
  return {
    atStep: atStep ?? null,
    lastStep,
    skills: skills.map((k) => {
      const r = rows.get(k.id);
      return {
        id: k.id,
        name: k.name,
        family: k.family,
        level: k.level,
        requires: k.requires,
        state: r?.state ?? 'never',
        since: r?.since ?? null,
        accuracy: r?.accuracy ?? null,
      };
    }),
    timeline: await timeline(graph, runId),
  };
}
