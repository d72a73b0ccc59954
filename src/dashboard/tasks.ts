// A run's tasks as the dashboard lists them (SELECTs only): a search, one task in detail with its
// episodes and lineage, and the LLM proposals by outcome.
import type Database from 'better-sqlite3';
import { referenceAnswer, type Task } from '../../core/task.js';
import { hasTable } from './runs.js';

export interface TaskListRow {
  id: string;
  step: number;
  type: string;
  family: string;
  level: number;
  skills: string[];
  proposer: string;
  parentId: string | null;
  attempts: number;
  solved: number;
}

/** The tasks table's columns the task list reads (src/run/records/tables.ts). */
interface ListColumns {
  id: string;
  step: number;
  type: string;
  family: string;
  level: number;
  skills: string;
  proposer: string;
  parent_id: string | null;
  attempts: number;
  solved: number;
}

/** A tasks table row as the task list shows it. */
function listRow(r: ListColumns): TaskListRow {
  return {
    id: r.id,
    step: r.step,
    type: r.type,
    family: r.family,
    level: r.level,
    skills: JSON.parse(r.skills) as string[],
    proposer: r.proposer,
    parentId: r.parent_id,
    attempts: r.attempts,
    solved: r.solved,
  };
}

export interface TaskQuery {
  q?: string;
  skill?: string;
  family?: string;
  level?: number;
  type?: string;
  limit?: number;
}

/** Tasks matching a search (skill, family, level, type; `q` matches id, skill or program text), newest first. */
export function searchTasks(db: Database.Database | null, query: TaskQuery): { total: number; tasks: TaskListRow[] } {
  if (!db || !hasTable(db, 'tasks')) return { total: 0, tasks: [] };
  const where: string[] = [];
  const args: (string | number)[] = [];
  if (query.family) {
    where.push('family = ?');
    args.push(query.family);
  }
  if (query.level !== undefined && Number.isFinite(query.level)) {
    where.push('level = ?');
    args.push(query.level);
  }
  if (query.type) {
    where.push('type = ?');
    args.push(query.type);
  }
  if (query.skill) {
    where.push('EXISTS (SELECT 1 FROM json_each(tasks.skills) WHERE value = ?)');
    args.push(query.skill);
  }
  if (query.q) {
    where.push("(id LIKE ? ESCAPE '\\' OR skills LIKE ? ESCAPE '\\' OR program LIKE ? ESCAPE '\\')");
    const like = `%${query.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    args.push(like, like, like);
  }
  const clause = where.length ? `WHERE ${where.join(' AND ')}` : '';
  const total = (db.prepare(`SELECT COUNT(*) n FROM tasks ${clause}`).get(...args) as { n: number }).n;
  const limit = Math.min(500, Math.max(1, query.limit ?? 100));
  const rows = db
    .prepare(
      `SELECT id, step, type, family, level, skills, proposer, parent_id, attempts, solved FROM tasks ${clause} ORDER BY step DESC, rowid DESC LIMIT ?`,
    )
    .all(...args, limit) as ListColumns[];
  return {
    total,
    tasks: rows.map(listRow),
  };
}

export interface TaskDetail extends TaskListRow {
  program: string;
  prompt: string;
  compact: string;
  reference: string;
  episodes: { step: number; answer: string; reward: number; reason: string | null }[];
  /** The DERIVED_FROM chain, nearest parent first (ids whose task is not in this run are listed with op only). */
  lineage: {
    id: string;
    op: string | null;
    step: number | null;
    family: string | null;
    level: number | null;
    type: string | null;
  }[];
}

export function taskDetail(db: Database.Database | null, id: string): TaskDetail | null {
  if (!db || !hasTable(db, 'tasks')) return null;
  type Row = ListColumns & {
    parent_op: string | null;
    program: string;
    natural: string;
    compact: string;
    data: string;
  };
  const get = db.prepare('SELECT * FROM tasks WHERE id = ?');
  const r = get.get(id) as Row | undefined;
  if (!r) return null;
  let reference = '';
  try {
    reference = referenceAnswer(JSON.parse(r.data) as Task);
  } catch {
    reference = '(not recorded)';
  }
  const episodes = db
    .prepare('SELECT step, answer, reward, reason FROM episodes WHERE task_id = ? ORDER BY id')
    .all(id) as TaskDetail['episodes'];
  const lineage: TaskDetail['lineage'] = [];
  const seen = new Set([id]);
  let parent = r.parent_id;
  let op = r.parent_op;
  while (parent && !seen.has(parent) && lineage.length < 100) {
    seen.add(parent);
    const p = get.get(parent) as Row | undefined;
    lineage.push({
      id: parent,
      op,
      step: p?.step ?? null,
      family: p?.family ?? null,
      level: p?.level ?? null,
      type: p?.type ?? null,
    });
    parent = p?.parent_id ?? null;
    op = p?.parent_op ?? null;
  }
  return {
    ...listRow(r),
    program: r.program,
    prompt: r.natural,
    compact: r.compact,
    reference,
    episodes,
    lineage,
  };
}

export interface Proposals {
  byOutcome: { outcome: string; n: number }[];
  recent: {
    step: number;
    family: string;
    level: number;
    type: string;
    proposer: string;
    outcome: string;
    detail: string | null;
    taskId: string | null;
    learnability: number | null;
  }[];
}

/** LLM proposals by outcome, and the latest ones. */
export function proposalsOf(db: Database.Database | null, limit = 50): Proposals {
  if (!db || !hasTable(db, 'proposals')) return { byOutcome: [], recent: [] };
  return {
    byOutcome: db
      .prepare('SELECT outcome, COUNT(*) n FROM proposals GROUP BY outcome ORDER BY n DESC, outcome')
      .all() as Proposals['byOutcome'],
    recent: db
      .prepare(
        'SELECT step, family, level, type, proposer, outcome, detail, task_id taskId, learnability FROM proposals ORDER BY id DESC LIMIT ?',
      )
      .all(limit) as Proposals['recent'],
  };
}
