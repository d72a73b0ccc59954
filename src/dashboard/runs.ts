// The runs the dashboard and `cogen plot` can show: the run directories, each run's database opened
// with SQLite's read-only flag (a run may be live in another process; WAL lets readers in), and its
// summary from the run store's meta table. Every query here is a SELECT.
import Database from 'better-sqlite3';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

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

export function hasTable(db: Database.Database, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

export function meta(db: Database.Database): Record<string, string> {
  if (!hasTable(db, 'meta')) return {};
  const rows = db.prepare('SELECT key, value FROM meta').all() as { key: string; value: string }[];
  return Object.fromEntries(rows.map((r) => [r.key, r.value]));
}

export function runInfo(db: Database.Database | null, id: string): RunInfo {
  const m = db ? meta(db) : {};
  const count = (t: string) =>
    db && hasTable(db, t) ? (db.prepare(`SELECT COUNT(*) n FROM ${t}`).get() as { n: number }).n : 0;
  // The last step, not the row count: a served run's first probe round may land on step 0.
  const steps =
    db && hasTable(db, 'metrics')
      ? (db.prepare('SELECT COALESCE(MAX(step), 0) n FROM metrics').get() as { n: number }).n
      : 0;
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
