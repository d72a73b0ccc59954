// The skill graph embedded in SQLite (better-sqlite3): the default store, living in the run's own
// database file next to the run store's tables (every table here is prefixed `graph_`). Same graph,
// same semantics as the Neo4j store (graphs/neo4j.ts): nodes are rows keyed by id, relationships are
// rows keyed by their ends (+ step for PROPOSED, + sinceStep for MASTERED). A node referenced before
// it is declared is inserted as a stub (id only), as Neo4j's MERGE would. apply() runs a batch in one
// SQLite transaction, event by event, in order.
import Database from 'better-sqlite3';
import type { Skill } from '../core/task.js';
import { COUNT_KEYS, byMastery, canonicalize } from './common.js';
import {
  SCHEMA,
  TABLE_OF,
  prepareStatements,
  toMastery,
  toRun,
  type MasteryRow,
  type RunRow,
  type Statements,
  type TaskRow,
} from './embedded-tables.js';
import type { GraphEvent, GraphRun, GraphSnapshot, GraphTask, Mastery, SkillGraph } from './types.js';

type DB = Database.Database;

export class EmbeddedSkillGraph implements SkillGraph {
  readonly kind = 'embedded' as const;
  private readonly db: DB;
  private readonly owned: boolean;
  private stmts: Statements | null = null;

  /** `db`: an open better-sqlite3 handle (not closed by close()) or a file path (':memory:' works). */
  constructor(db: DB | string) {
    if (typeof db === 'string') {
      this.db = new Database(db);
      this.db.pragma('journal_mode = WAL');
      this.owned = true;
    } else {
      this.db = db;
      this.owned = false;
    }
  }

  async init(): Promise<void> {
    this.db.exec(SCHEMA);
    // Run stores made before trivial baselines were recorded lack their columns (the rows keep null).
    const columns = new Set(
      (this.db.prepare('PRAGMA table_info(graph_mastered)').all() as { name: string }[]).map((c) => c.name),
    );
    for (const column of ['baseline', 'until_baseline']) {
      if (!columns.has(column)) this.db.exec(`ALTER TABLE graph_mastered ADD COLUMN ${column} REAL`);
    }
    // ... and before tasks recorded their proposer.
    const taskColumns = new Set(
      (this.db.prepare('PRAGMA table_info(graph_tasks)').all() as { name: string }[]).map((c) => c.name),
    );
    if (!taskColumns.has('proposer')) this.db.exec('ALTER TABLE graph_tasks ADD COLUMN proposer TEXT');
    this.stmts = prepareStatements(this.db);
  }

  private get s() {
    if (!this.stmts) throw new Error('EmbeddedSkillGraph: call init() first');
    return this.stmts;
  }

  private applyOne(e: GraphEvent): void {
    const s = this.s;
    switch (e.kind) {
      case 'skills':
        for (const k of e.skills) {
          s.skill.run(k.id, k.family, k.name, k.description, Math.trunc(k.level));
          const want = new Set(k.requires);
          for (const old of s.requiresOf.all(k.id) as string[]) if (!want.has(old)) s.requiresDel.run(k.id, old);
          for (const r of want) {
            s.skillStub.run(r);
            s.requiresAdd.run(k.id, r);
          }
        }
        return;
      case 'run':
        s.run.run(
          e.runId,
          e.preset,
          e.config,
          e.startedAt,
          e.endedAt ?? null,
          e.status,
          e.endedAt !== undefined ? 1 : 0,
        );
        return;
      case 'task': {
        const t = e.task;
        s.task.run(
          t.id,
          t.type,
          t.family,
          Math.trunc(t.level),
          t.program,
          t.hash,
          t.prompt,
          t.solveRate,
          t.proposer ?? null,
        );
        s.runStub.run(e.runId);
        s.proposed.run(e.runId, t.id, Math.trunc(e.step));
        for (const k of new Set(t.skills)) {
          s.skillStub.run(k);
          s.exercises.run(t.id, k);
        }
        if (t.parent) {
          s.taskStub.run(t.parent.id);
          s.derived.run(t.id, t.parent.id, t.parent.op);
        }
        return;
      }
      case 'solve-rate':
        s.solveRate.run(e.solveRate, e.taskId);
        return;
      case 'checkpoint':
        s.runStub.run(e.runId);
        s.checkpoint.run(e.id, e.runId, Math.trunc(e.step), e.path);
        s.saved.run(e.runId, e.id);
        return;
      case 'mastery': {
        const step = Math.trunc(e.step);
        if (e.event === 'learned') {
          s.runStub.run(e.runId);
          s.skillStub.run(e.skillId);
          if ((s.covering.get(e.runId, e.skillId, step) as number) === 0) {
            s.learn.run(e.runId, e.skillId, step, e.at, e.accuracy, e.baseline ?? null);
          }
        } else {
          s.forget.run(step, e.at, e.accuracy, e.baseline ?? null, e.runId, e.skillId, step);
        }
        return;
      }
    }
  }

  async apply(events: GraphEvent[]): Promise<void> {
    if (events.length === 0) return;
    this.db.transaction((evs: GraphEvent[]) => {
      for (const e of evs) this.applyOne(e);
    })(events);
  }

  async skills(): Promise<Skill[]> {
    const rows = this.db.prepare('SELECT id, family, name, description, level FROM graph_skills ORDER BY id').all() as {
      id: string;
      family: string | null;
      name: string | null;
      description: string | null;
      level: number | null;
    }[];
    const req = this.db
      .prepare('SELECT skill_id, requires_id FROM graph_requires ORDER BY skill_id, requires_id')
      .all() as {
      skill_id: string;
      requires_id: string;
    }[];
    const by = new Map<string, string[]>();
    for (const r of req) (by.get(r.skill_id) ?? by.set(r.skill_id, []).get(r.skill_id)!).push(r.requires_id);
    return rows.map((r) => ({
      id: r.id,
      family: r.family ?? '',
      name: r.name ?? r.id,
      description: r.description ?? '',
      requires: by.get(r.id) ?? [],
      level: r.level ?? 0,
    }));
  }

  async mastery(runId: string): Promise<Mastery[]> {
    const rows = this.db.prepare('SELECT * FROM graph_mastered WHERE run_id = ?').all(runId) as MasteryRow[];
    return rows.map(toMastery).sort(byMastery);
  }

  private taskWithEdges(r: TaskRow): GraphTask {
    const skills = this.db
      .prepare('SELECT skill_id FROM graph_exercises WHERE task_id = ? ORDER BY skill_id')
      .pluck()
      .all(r.id) as string[];
    const parent = this.db
      .prepare('SELECT parent_id AS id, op FROM graph_derived_from WHERE task_id = ? ORDER BY parent_id LIMIT 1')
      .get(r.id) as { id: string; op: string | null } | undefined;
    return {
      id: r.id,
      type: r.type ?? '',
      family: r.family ?? '',
      level: r.level ?? 0,
      program: r.program ?? '',
      skills,
      hash: r.hash ?? '',
      prompt: r.prompt ?? '',
      parent: parent ? { id: parent.id, op: parent.op ?? '' } : null,
      solveRate: r.solve_rate,
      // Absent (not null) where the graph has none: graphs written before proposers were recorded.
      ...(r.proposer ? { proposer: r.proposer } : {}),
    };
  }

  async tasksForSkill(skillId: string, limit: number, runId?: string): Promise<GraphTask[]> {
    const rows = this.db
      .prepare(
        `SELECT t.* FROM graph_tasks t JOIN graph_exercises e ON e.task_id = t.id WHERE e.skill_id = ?
           AND (? IS NULL OR EXISTS (SELECT 1 FROM graph_proposed p WHERE p.run_id = ? AND p.task_id = t.id))
         ORDER BY t.solve_rate IS NULL, coalesce(t.level, 1000000000), t.id LIMIT ?`,
      )
      .all(skillId, runId ?? null, runId ?? null, Math.max(0, Math.trunc(limit))) as TaskRow[];
    return rows.map((r) => this.taskWithEdges(r));
  }

  async task(taskId: string): Promise<GraphTask | null> {
    const r = this.db.prepare('SELECT * FROM graph_tasks WHERE id = ?').get(taskId) as TaskRow | undefined;
    return r ? this.taskWithEdges(r) : null;
  }

  async counts(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const key of COUNT_KEYS) {
      out[key] = this.db.prepare(`SELECT count(*) FROM ${TABLE_OF[key]}`).pluck().get() as number;
    }
    return out;
  }

  async runs(): Promise<GraphRun[]> {
    const rows = this.db
      .prepare('SELECT * FROM graph_runs ORDER BY started_at IS NULL, started_at, id')
      .all() as RunRow[];
    return rows.map(toRun);
  }

  async snapshot(): Promise<GraphSnapshot> {
    const all = <T>(sql: string) => this.db.prepare(sql).all() as T[];
    return canonicalize({
      skills: all('SELECT id, family, name, description, level FROM graph_skills'),
      requires: all('SELECT skill_id AS skillId, requires_id AS requiresId FROM graph_requires'),
      runs: all<RunRow>('SELECT * FROM graph_runs').map(toRun),
      tasks: all<TaskRow>('SELECT * FROM graph_tasks').map((t) => ({
        id: t.id,
        type: t.type,
        family: t.family,
        level: t.level,
        program: t.program,
        hash: t.hash,
        prompt: t.prompt,
        solveRate: t.solve_rate,
      })),
      exercises: all('SELECT task_id AS taskId, skill_id AS skillId FROM graph_exercises'),
      derivedFrom: all('SELECT task_id AS taskId, parent_id AS parentId, op FROM graph_derived_from'),
      proposed: all('SELECT run_id AS runId, task_id AS taskId, step FROM graph_proposed'),
      mastered: all<MasteryRow>('SELECT * FROM graph_mastered').map(toMastery),
      checkpoints: all('SELECT id, run_id AS runId, step, path FROM graph_checkpoints'),
      saved: all('SELECT run_id AS runId, checkpoint_id AS checkpointId FROM graph_saved'),
    });
  }

  /** Deletes every graph row (tests, `skills sync --fresh`). */
  async clear(): Promise<void> {
    this.db.transaction(() => {
      for (const t of Object.values(TABLE_OF)) this.db.prepare(`DELETE FROM ${t}`).run();
    })();
  }

  async close(): Promise<void> {
    this.stmts = null;
    if (this.owned) this.db.close();
  }
}
