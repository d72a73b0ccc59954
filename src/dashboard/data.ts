// What the dashboard and `cogen plot` read from a run, read-only: the run store's database is opened
// with SQLite's read-only flag (a run may be live in another process; WAL lets readers in), and every
// query here is a SELECT. Nothing in this file writes.
import Database from 'better-sqlite3';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { EmbeddedSkillGraph } from '../../graphs/index.js';
import { masteryTable, timeline, type SkillState, type TimelineEvent } from '../../graphs/index.js';
import { referenceAnswer, type Task } from '../../core/task.js';

export type RunPhase =
  /** The directory exists but nothing (or no step) is committed yet while the run says it is running. */
  | 'starting'
  /** The run ended (or was served) with no committed step. */
  | 'empty'
  | 'ready';

export interface RunInfo {
  id: string;
  kind: 'autonomous' | 'served';
  preset: string | null;
  status: string | null;
  startedAt: string | null;
  endedAt: string | null;
  lastStep: number;
  steps: number;
  tasks: number;
  phase: RunPhase;
  families: string[];
}

const SAFE_ID = /^[A-Za-z0-9._-]+$/;

/** A run id that names a directory inside runsDir (no path tricks). */
export function isRunId(id: string): boolean {
  return SAFE_ID.test(id) && id !== '.' && id !== '..';
}

/** The run directories (those with a run.db, or just created), newest first by modification time. */
export function listRunIds(runsDir: string): string[] {
  if (!existsSync(runsDir)) return [];
  return readdirSync(runsDir)
    .filter((d) => isRunId(d) && statSync(join(runsDir, d)).isDirectory())
    .map((d) => ({
      d,
      t: statSync(existsSync(join(runsDir, d, 'run.db')) ? join(runsDir, d, 'run.db') : join(runsDir, d)).mtimeMs,
    }))
    .sort((a, b) => b.t - a.t || a.d.localeCompare(b.d))
    .map((x) => x.d);
}

export function runExists(runsDir: string, id: string): boolean {
  return isRunId(id) && existsSync(join(runsDir, id));
}

/** Opens a run's database read-only, or returns null when it is not there yet. */
export function openReadOnly(runsDir: string, id: string): Database.Database | null {
  const path = join(runsDir, id, 'run.db');
  if (!isRunId(id) || !existsSync(path)) return null;
  const db = new Database(path, { readonly: true, fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  return db;
}

/** Runs `fn` on the run's read-only database (null when it has none yet), closing it afterwards. */
export function withRun<T>(runsDir: string, id: string, fn: (db: Database.Database | null) => T): T {
  const db = openReadOnly(runsDir, id);
  try {
    return fn(db);
  } finally {
    db?.close();
  }
}

function hasTable(db: Database.Database, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

function meta(db: Database.Database): Record<string, string> {
  if (!hasTable(db, 'meta')) return {};
  const rows = db.prepare('SELECT key, value FROM meta').all() as { key: string; value: string }[];
  return Object.fromEntries(rows.map((r) => [r.key, r.value]));
}

export function runInfo(db: Database.Database | null, id: string): RunInfo {
  const m = db ? meta(db) : {};
  const count = (t: string) =>
    db && hasTable(db, t) ? (db.prepare(`SELECT COUNT(*) n FROM ${t}`).get() as { n: number }).n : 0;
  const steps = count('metrics');
  const status = m.status ?? null;
  let families: string[] = [];
  try {
    const cfg = JSON.parse(m.config ?? '{}') as { families?: unknown };
    if (Array.isArray(cfg.families)) families = cfg.families.map(String);
  } catch {
    /* a config that does not parse shows no families */
  }
  const phase: RunPhase = steps > 0 ? 'ready' : status === null || status === 'running' ? 'starting' : 'empty';
  return {
    id,
    kind: m.kind === 'served' ? 'served' : 'autonomous',
    preset: m.preset ?? null,
    status,
    startedAt: m.startedAt ?? null,
    endedAt: m.endedAt ?? null,
    lastStep: Number(m.lastStep ?? 0),
    steps,
    tasks: count('tasks'),
    phase,
    families,
  };
}

export type MetricRow = Record<string, number | string | null>;

/** Every metrics row in step order, with `tasksPerSec` added where the step's time (`ms`) is known. */
export function metricsOf(db: Database.Database | null, afterStep = 0): MetricRow[] {
  if (!db || !hasTable(db, 'metrics')) return [];
  const rows = (
    db.prepare('SELECT step, data FROM metrics WHERE step > ? ORDER BY step').all(afterStep) as {
      step: number;
      data: string;
    }[]
  ).map((r): MetricRow => ({ ...(JSON.parse(r.data) as MetricRow), step: r.step }));
  const served = new Map(
    (
      db.prepare('SELECT step, COUNT(*) n FROM task_scores WHERE step > ? GROUP BY step').all(afterStep) as {
        step: number;
        n: number;
      }[]
    ).map((r) => [r.step, r.n]),
  );
  for (const r of rows) {
    const ms = r.ms;
    const n = served.get(r.step as number);
    if (typeof ms === 'number' && ms > 0 && n) r.tasksPerSec = n / (ms / 1000);
  }
  return rows;
}

/** The charts, each a list of metric keys (those a run lacks are left out; a chart with none is not drawn). */
export const CURVE_GROUPS: { id: string; title: string; keys: (keys: string[]) => string[] }[] = [
  {
    id: 'reward',
    title: 'Reward and solve rate',
    keys: (k) => ['meanReward', 'solveRate', 'learnability'].filter((x) => k.includes(x)),
  },
  {
    id: 'probe',
    title: 'Held-out probe accuracy',
    keys: (k) => ['probeAccuracy', ...k.filter((x) => x.startsWith('probe.')).sort()].filter((x) => k.includes(x)),
  },
  { id: 'entropy', title: 'Entropy', keys: (k) => ['entropy'].filter((x) => k.includes(x)) },
  { id: 'kl', title: 'KL', keys: (k) => ['kl'].filter((x) => k.includes(x)) },
  { id: 'lr', title: 'Learning rate', keys: (k) => ['lr'].filter((x) => k.includes(x)) },
  { id: 'throughput', title: 'Tasks/s', keys: (k) => ['tasksPerSec'].filter((x) => k.includes(x)) },
  {
    id: 'optim',
    title: 'Loss and gradient norm',
    keys: (k) => ['loss', 'gradNorm', 'clipFraction'].filter((x) => k.includes(x)),
  },
  {
    id: 'curriculum',
    title: 'Curriculum level and skills',
    keys: (k) => ['meanLevel', 'skillsMastered'].filter((x) => k.includes(x)),
  },
  // The level-frontier controller's h per family × type, and the held-out accuracy above the tables (docs/levels.md).
  {
    id: 'frontier',
    title: 'Level frontier h per family × type',
    keys: (k) => k.filter((x) => x.startsWith('frontier.')).sort(),
  },
  {
    id: 'eval',
    title: 'Held-out accuracy per family and level above 4',
    keys: (k) => k.filter((x) => x.startsWith('eval.')).sort(byFamilyThenLevel),
  },
];

/** `eval.<family>/<level>` keys by family, then by level as a number (10 after 9). */
function byFamilyThenLevel(a: string, b: string): number {
  const [fa, la] = a.split('/');
  const [fb, lb] = b.split('/');
  return fa!.localeCompare(fb!) || Number(la) - Number(lb);
}

export interface Curves {
  steps: number[];
  charts: { id: string; title: string; keys: string[]; values: (number | null)[][] }[];
}

/** The metrics as chart series: for each chart, one array per key, aligned with `steps` (null where a step lacks it). */
export function curvesOf(rows: MetricRow[]): Curves {
  const keys = [
    ...new Set(rows.flatMap((r) => Object.keys(r).filter((k) => k !== 'step' && typeof r[k] === 'number'))),
  ];
  const steps = rows.map((r) => r.step as number);
  const charts = CURVE_GROUPS.map((g) => ({ id: g.id, title: g.title, keys: g.keys(keys) }))
    .filter((g) => g.keys.length > 0)
    .map((g) => ({
      ...g,
      values: g.keys.map((k) => rows.map((r) => (typeof r[k] === 'number' ? (r[k] as number) : null))),
    }));
  return { steps, charts };
}

export interface Heat {
  steps: number[];
  /** family/level/type */
  arms: string[];
  /** cells[arm][stepIndex] = tasks of that arm scored at that step */
  cells: number[][];
}

/** Which family × level × type the curriculum served at each step (tasks scored per step). */
export function heatOf(db: Database.Database | null): Heat {
  if (!db || !hasTable(db, 'task_scores')) return { steps: [], arms: [], cells: [] };
  const rows = db
    .prepare(
      `SELECT s.step step, t.family || '/' || t.level || '/' || t.type arm, COUNT(*) n
       FROM task_scores s JOIN tasks t ON t.id = s.task_id GROUP BY s.step, arm ORDER BY s.step`,
    )
    .all() as { step: number; arm: string; n: number }[];
  const steps = [...new Set(rows.map((r) => r.step))].sort((a, b) => a - b);
  const arms = [...new Set(rows.map((r) => r.arm))].sort((a, b) => {
    const [fa, la, ta] = a.split('/');
    const [fb, lb, tb] = b.split('/');
    return fa!.localeCompare(fb!) || Number(la) - Number(lb) || ta!.localeCompare(tb!);
  });
  const si = new Map(steps.map((s, i) => [s, i]));
  const ai = new Map(arms.map((a, i) => [a, i]));
  const cells = arms.map(() => steps.map(() => 0));
  for (const r of rows) cells[ai.get(r.arm)!]![si.get(r.step)!] = r.n;
  return { steps, arms, cells };
}

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
    .all(...args, limit) as {
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
  }[];
  return {
    total,
    tasks: rows.map((r) => ({
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
    })),
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
  type Row = {
    id: string;
    step: number;
    type: string;
    family: string;
    level: number;
    skills: string;
    proposer: string;
    parent_id: string | null;
    parent_op: string | null;
    attempts: number;
    solved: number;
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
