// The run store's tables (one SQLite file per run, store.ts) and the rows they hold: the schema, the
// row types, and the writers each of store.ts's transactions is made of.
import type Database from 'better-sqlite3';
import type { GraphEvent } from '../../../graphs/index.js';
import type { ProposalRecord } from '../../agents/index.js';
import type { Task } from '../../../core/task.js';
import type { EnvSpec, Trajectory } from '../../../envs/index.js';

/** A prepared statement of the store (store.ts prepares each text once). */
export type Sql = (text: string) => Database.Statement;

export interface EpisodeRow {
  taskId: string;
  answer: string;
  reward: number;
  reason: string | null;
}

export interface StepRecord {
  step: number;
  /** Tasks first seen at this step (replays are not repeated here). */
  newTasks: { task: Task; compact: string; natural: string }[];
  /** Per task of the step: how it scored. */
  scored: { taskId: string; solved: number; attempts: number }[];
  episodes: EpisodeRow[];
  metrics: Record<string, number | string | null>;
  /** Graph events, in order: the skill graph's feed, and the run's one record of mastery events (skillEvents). */
  outbox: GraphEvent[];
  /** LLM proposals of this step (accepted or not), with their learnability once scored. */
  proposals?: ProposalRecord[];
  /** Meta values written with the step (a served run's controller, mastery and rng state). */
  meta?: Record<string, string>;
  /** A served run's issued tasks that this step scored (ids from issueTasks). */
  scoredIssues?: number[];
  /** A served request's idempotency key: a retry gets this step's episodes back as its response. */
  request?: StoredRequest;
  /** Environment episodes the step played (its environment arms), each with the spec it played. */
  envEpisodes?: { spec: EnvSpec; trajectory: Trajectory }[];
}

export interface StoredRequest {
  key: string;
  /** Digest of the request body: the same key with another body is refused. */
  digest: string;
  step: number;
}

/** A task handed to a served trainer, to be scored before it expires. */
export interface IssueRecord {
  taskId: string;
  issuedAt: number;
  expiresAt: number;
}

export interface TaskRow {
  task: Task;
  step: number;
  compact: string;
  natural: string;
  attempts: number;
  solved: number;
}

/** One played environment episode (docs/DESIGN.md, "Environments"): the spec it played and its trajectory. */
export interface EnvEpisodeRow {
  id: number;
  step: number;
  spec: EnvSpec;
  trajectory: Trajectory;
}

export const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tasks (
  id TEXT PRIMARY KEY, step INTEGER NOT NULL, type TEXT NOT NULL, family TEXT NOT NULL,
  level INTEGER NOT NULL, skills TEXT NOT NULL, program TEXT NOT NULL, hash TEXT NOT NULL,
  parent_id TEXT, parent_op TEXT, proposer TEXT NOT NULL, data TEXT NOT NULL,
  compact TEXT NOT NULL, natural TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0, solved INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS tasks_step ON tasks(step);
CREATE TABLE IF NOT EXISTS episodes (
  id INTEGER PRIMARY KEY AUTOINCREMENT, step INTEGER NOT NULL, task_id TEXT NOT NULL,
  answer TEXT NOT NULL, reward REAL NOT NULL, reason TEXT);
CREATE INDEX IF NOT EXISTS episodes_step ON episodes(step);
CREATE TABLE IF NOT EXISTS task_scores (id INTEGER PRIMARY KEY AUTOINCREMENT, step INTEGER NOT NULL, task_id TEXT NOT NULL,
  solved INTEGER NOT NULL, attempts INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS metrics (step INTEGER PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS outbox (seq INTEGER PRIMARY KEY AUTOINCREMENT, step INTEGER NOT NULL, event TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS outbox_cursor (sink TEXT PRIMARY KEY, seq INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS proposals (
  id INTEGER PRIMARY KEY AUTOINCREMENT, step INTEGER NOT NULL, family TEXT NOT NULL, level INTEGER NOT NULL,
  type TEXT NOT NULL, proposer TEXT NOT NULL, prompt TEXT NOT NULL, raw TEXT NOT NULL, outcome TEXT NOT NULL,
  detail TEXT, task_id TEXT, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,
  tokens_estimated INTEGER NOT NULL, ms REAL NOT NULL, learnability REAL);
CREATE INDEX IF NOT EXISTS proposals_step ON proposals(step);
CREATE TABLE IF NOT EXISTS checkpoints (id TEXT PRIMARY KEY, step INTEGER NOT NULL, path TEXT NOT NULL, at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS issued (id INTEGER PRIMARY KEY AUTOINCREMENT, task_id TEXT NOT NULL, issued_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL, state TEXT NOT NULL DEFAULT 'open');
CREATE INDEX IF NOT EXISTS issued_open ON issued(state, task_id);
CREATE TABLE IF NOT EXISTS requests (key TEXT PRIMARY KEY, digest TEXT NOT NULL, step INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS env_episodes (
  id INTEGER PRIMARY KEY AUTOINCREMENT, step INTEGER NOT NULL, env_id TEXT NOT NULL, kind TEXT NOT NULL,
  family TEXT NOT NULL, level INTEGER NOT NULL, seed INTEGER NOT NULL, reward REAL NOT NULL, reason TEXT,
  spec TEXT NOT NULL, trajectory TEXT NOT NULL);
`;

/** Most episodes one INSERT statement writes (5 parameters each, far below SQLite's limit). */
const EPISODE_ROWS = 64;

export function insertTasks(sql: Sql, step: number, tasks: StepRecord['newTasks']): void {
  const ins = sql(`INSERT OR IGNORE INTO tasks (id, step, type, family, level, skills, program, hash,
    parent_id, parent_op, proposer, data, compact, natural) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)`);
  for (const { task, compact, natural } of tasks) {
    ins.run(
      task.id,
      step,
      task.type,
      task.family,
      task.level,
      JSON.stringify(task.skills),
      task.program,
      task.hash,
      task.parent?.id ?? null,
      task.parent?.op ?? null,
      task.proposer,
      JSON.stringify(task),
      compact,
      natural,
    );
  }
}
/** Episodes in statements of up to EPISODE_ROWS rows each (measured: half the time of one row a statement). */
export function insertEpisodes(sql: Sql, step: number, episodes: EpisodeRow[]): void {
  for (let i = 0; i < episodes.length; i += EPISODE_ROWS) {
    const chunk = episodes.slice(i, i + EPISODE_ROWS);
    const ins = sql(
      `INSERT INTO episodes (step, task_id, answer, reward, reason) VALUES ${Array(chunk.length).fill('(?,?,?,?,?)').join(',')}`,
    );
    ins.run(chunk.flatMap((e) => [step, e.taskId, e.answer, e.reward, e.reason]));
  }
}
export function insertEnvEpisodes(
  sql: Sql,
  step: number,
  episodes: readonly { spec: EnvSpec; trajectory: Trajectory }[],
): void {
  const insert = sql(
    'INSERT INTO env_episodes (step, env_id, kind, family, level, seed, reward, reason, spec, trajectory) VALUES (?,?,?,?,?,?,?,?,?,?)',
  );
  for (const { spec, trajectory: t } of episodes) {
    insert.run(
      step,
      spec.id,
      spec.kind,
      spec.family,
      spec.level,
      t.seed,
      t.reward,
      t.reason ?? null,
      JSON.stringify(spec),
      JSON.stringify(t),
    );
  }
}
/** LLM proposals of a step (accepted or not), with their learnability once scored. */
export function insertProposals(sql: Sql, step: number, proposals: readonly ProposalRecord[]): void {
  const insProposal = sql(`INSERT INTO proposals (step, family, level, type, proposer, prompt, raw, outcome, detail,
      task_id, input_tokens, output_tokens, tokens_estimated, ms, learnability) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`);
  for (const p of proposals) {
    insProposal.run(
      step,
      p.family,
      p.level,
      p.type,
      p.proposer,
      p.prompt,
      p.raw,
      p.outcome,
      p.detail,
      p.taskId,
      p.inputTokens,
      p.outputTokens,
      p.tokensEstimated ? 1 : 0,
      p.ms,
      p.learnability,
    );
  }
}
