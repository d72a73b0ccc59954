// The run store's tables (src/run/records/store.ts) in PostgreSQL: the same tables and columns, one schema per
// run (named after the run id). Two additions, both for several writers: tasks.seq orders the tasks
// as SQLite's rowid does (a replica reads the tasks others added after the last one it knows), and
// an index finds expired issues without a scan.
export const pgSchema = (s: string): string => `
CREATE TABLE IF NOT EXISTS ${s}.meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS ${s}.tasks (
  seq BIGSERIAL UNIQUE, id TEXT PRIMARY KEY, step INTEGER NOT NULL, type TEXT NOT NULL, family TEXT NOT NULL,
  level INTEGER NOT NULL, skills TEXT NOT NULL, program TEXT NOT NULL, hash TEXT NOT NULL,
  parent_id TEXT, parent_op TEXT, proposer TEXT NOT NULL, data TEXT NOT NULL,
  compact TEXT NOT NULL, "natural" TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0, solved INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS tasks_step ON ${s}.tasks(step);
CREATE TABLE IF NOT EXISTS ${s}.episodes (
  id BIGSERIAL PRIMARY KEY, step INTEGER NOT NULL, task_id TEXT NOT NULL,
  answer TEXT NOT NULL, reward DOUBLE PRECISION NOT NULL, reason TEXT);
CREATE INDEX IF NOT EXISTS episodes_step ON ${s}.episodes(step);
CREATE TABLE IF NOT EXISTS ${s}.task_scores (id BIGSERIAL PRIMARY KEY, step INTEGER NOT NULL, task_id TEXT NOT NULL,
  solved INTEGER NOT NULL, attempts INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS ${s}.metrics (step INTEGER PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS ${s}.outbox (seq BIGSERIAL PRIMARY KEY, step INTEGER NOT NULL, event TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS ${s}.outbox_cursor (sink TEXT PRIMARY KEY, seq BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS ${s}.proposals (
  id BIGSERIAL PRIMARY KEY, step INTEGER NOT NULL, family TEXT NOT NULL, level INTEGER NOT NULL,
  type TEXT NOT NULL, proposer TEXT NOT NULL, prompt TEXT NOT NULL, raw TEXT NOT NULL, outcome TEXT NOT NULL,
  detail TEXT, task_id TEXT, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,
  tokens_estimated INTEGER NOT NULL, ms DOUBLE PRECISION NOT NULL, learnability DOUBLE PRECISION);
CREATE INDEX IF NOT EXISTS proposals_step ON ${s}.proposals(step);
CREATE TABLE IF NOT EXISTS ${s}.checkpoints (id TEXT PRIMARY KEY, step INTEGER NOT NULL, path TEXT NOT NULL, at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS ${s}.issued (id BIGSERIAL PRIMARY KEY, task_id TEXT NOT NULL, issued_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL, state TEXT NOT NULL DEFAULT 'open');
CREATE INDEX IF NOT EXISTS issued_open ON ${s}.issued(state, task_id);
CREATE INDEX IF NOT EXISTS issued_expiry ON ${s}.issued(state, expires_at);
CREATE TABLE IF NOT EXISTS ${s}.requests (key TEXT PRIMARY KEY, digest TEXT NOT NULL, step INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS ${s}.env_episodes (
  id BIGSERIAL PRIMARY KEY, step INTEGER NOT NULL, env_id TEXT NOT NULL, kind TEXT NOT NULL,
  family TEXT NOT NULL, level INTEGER NOT NULL, seed BIGINT NOT NULL, reward DOUBLE PRECISION NOT NULL, reason TEXT,
  spec TEXT NOT NULL, trajectory TEXT NOT NULL);
`;

/** A run id as a schema name: quoted, so any id of the allowed characters is one identifier. */
export function schemaOf(runId: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,59}$/.test(runId)) {
    throw new Error(
      `run id "${runId.slice(0, 80)}" cannot name a PostgreSQL schema: use letters, digits, '.', '_' and '-' (at most 60)`,
    );
  }
  return `"${runId}"`;
}

/**
 * Text as PostgreSQL can hold it: TEXT holds no NUL character and no lone surrogate, so each is
 * written as U+FFFD; a served run answers with the same text it records, so a replayed response
 * equals the first.
 */
export const storableText = (s: string): string =>
  s.replace(/\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
