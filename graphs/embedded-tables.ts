// The embedded skill graph's tables (graphs/embedded.ts): their schema, the prepared statements that
// write them, and their rows read back as the SkillGraph types (graphs/types.ts).
import type Database from 'better-sqlite3';
import { COUNT_KEYS } from './common.js';
import type { GraphRun, Mastery } from './types.js';

type DB = Database.Database;

export const SCHEMA = `
CREATE TABLE IF NOT EXISTS graph_skills (
  id TEXT PRIMARY KEY, family TEXT, name TEXT, description TEXT, level INTEGER);
CREATE TABLE IF NOT EXISTS graph_requires (
  skill_id TEXT NOT NULL, requires_id TEXT NOT NULL, PRIMARY KEY (skill_id, requires_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS graph_runs (
  id TEXT PRIMARY KEY, preset TEXT, config TEXT, started_at TEXT, ended_at TEXT, status TEXT);
CREATE TABLE IF NOT EXISTS graph_tasks (
  id TEXT PRIMARY KEY, type TEXT, family TEXT, level INTEGER, program TEXT, hash TEXT, prompt TEXT,
  solve_rate REAL, proposer TEXT);
CREATE INDEX IF NOT EXISTS graph_tasks_family_level ON graph_tasks (family, level);
CREATE TABLE IF NOT EXISTS graph_exercises (
  task_id TEXT NOT NULL, skill_id TEXT NOT NULL, PRIMARY KEY (task_id, skill_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS graph_exercises_skill ON graph_exercises (skill_id);
CREATE TABLE IF NOT EXISTS graph_derived_from (
  task_id TEXT NOT NULL, parent_id TEXT NOT NULL, op TEXT, PRIMARY KEY (task_id, parent_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS graph_proposed (
  run_id TEXT NOT NULL, task_id TEXT NOT NULL, step INTEGER NOT NULL,
  PRIMARY KEY (run_id, task_id, step)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS graph_mastered (
  run_id TEXT NOT NULL, skill_id TEXT NOT NULL, since_step INTEGER NOT NULL, since_at TEXT NOT NULL,
  until_step INTEGER, until_at TEXT, accuracy REAL NOT NULL, until_accuracy REAL,
  baseline REAL, until_baseline REAL,
  PRIMARY KEY (run_id, skill_id, since_step)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS graph_checkpoints (
  id TEXT PRIMARY KEY, run_id TEXT, step INTEGER, path TEXT);
CREATE TABLE IF NOT EXISTS graph_saved (
  run_id TEXT NOT NULL, checkpoint_id TEXT NOT NULL, PRIMARY KEY (run_id, checkpoint_id)) WITHOUT ROWID;
`;

export const TABLE_OF: Record<(typeof COUNT_KEYS)[number], string> = {
  Skill: 'graph_skills',
  Task: 'graph_tasks',
  Run: 'graph_runs',
  Checkpoint: 'graph_checkpoints',
  REQUIRES: 'graph_requires',
  EXERCISES: 'graph_exercises',
  DERIVED_FROM: 'graph_derived_from',
  PROPOSED: 'graph_proposed',
  MASTERED: 'graph_mastered',
  SAVED: 'graph_saved',
};

export interface MasteryRow {
  run_id: string;
  skill_id: string;
  since_step: number;
  since_at: string;
  until_step: number | null;
  until_at: string | null;
  accuracy: number;
  until_accuracy: number | null;
  baseline: number | null;
  until_baseline: number | null;
}
export interface TaskRow {
  id: string;
  type: string | null;
  family: string | null;
  level: number | null;
  program: string | null;
  hash: string | null;
  prompt: string | null;
  solve_rate: number | null;
  proposer: string | null;
}
export interface RunRow {
  id: string;
  preset: string | null;
  config: string | null;
  started_at: string | null;
  ended_at: string | null;
  status: string | null;
}

/** The statements apply() runs, prepared once per open graph. */
export function prepareStatements(d: DB) {
  return {
    skill: d.prepare(
      `INSERT INTO graph_skills (id, family, name, description, level) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET family = excluded.family, name = excluded.name,
         description = excluded.description, level = excluded.level`,
    ),
    skillStub: d.prepare('INSERT OR IGNORE INTO graph_skills (id) VALUES (?)'),
    requiresOf: d.prepare('SELECT requires_id FROM graph_requires WHERE skill_id = ?').pluck(),
    requiresDel: d.prepare('DELETE FROM graph_requires WHERE skill_id = ? AND requires_id = ?'),
    requiresAdd: d.prepare('INSERT OR IGNORE INTO graph_requires (skill_id, requires_id) VALUES (?, ?)'),
    run: d.prepare(
      `INSERT INTO graph_runs (id, preset, config, started_at, ended_at, status) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET preset = excluded.preset, config = excluded.config,
         started_at = excluded.started_at, status = excluded.status,
         ended_at = CASE WHEN ? THEN excluded.ended_at ELSE graph_runs.ended_at END`,
    ),
    runStub: d.prepare('INSERT OR IGNORE INTO graph_runs (id) VALUES (?)'),
    task: d.prepare(
      `INSERT INTO graph_tasks (id, type, family, level, program, hash, prompt, solve_rate, proposer)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET type = excluded.type, family = excluded.family, level = excluded.level,
         program = excluded.program, hash = excluded.hash, prompt = excluded.prompt,
         solve_rate = coalesce(excluded.solve_rate, graph_tasks.solve_rate),
         proposer = coalesce(excluded.proposer, graph_tasks.proposer)`,
    ),
    taskStub: d.prepare('INSERT OR IGNORE INTO graph_tasks (id) VALUES (?)'),
    proposed: d.prepare('INSERT OR IGNORE INTO graph_proposed (run_id, task_id, step) VALUES (?, ?, ?)'),
    exercises: d.prepare('INSERT OR IGNORE INTO graph_exercises (task_id, skill_id) VALUES (?, ?)'),
    derived: d.prepare(
      `INSERT INTO graph_derived_from (task_id, parent_id, op) VALUES (?, ?, ?)
       ON CONFLICT (task_id, parent_id) DO UPDATE SET op = excluded.op`,
    ),
    solveRate: d.prepare('UPDATE graph_tasks SET solve_rate = ? WHERE id = ?'),
    checkpoint: d.prepare(
      `INSERT INTO graph_checkpoints (id, run_id, step, path) VALUES (?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET run_id = excluded.run_id, step = excluded.step, path = excluded.path`,
    ),
    saved: d.prepare('INSERT OR IGNORE INTO graph_saved (run_id, checkpoint_id) VALUES (?, ?)'),
    covering: d
      .prepare(
        `SELECT count(*) FROM graph_mastered WHERE run_id = ? AND skill_id = ?
           AND (until_step IS NULL OR until_step >= ?)`,
      )
      .pluck(),
    learn: d.prepare(
      `INSERT INTO graph_mastered (run_id, skill_id, since_step, since_at, accuracy, baseline) VALUES (?, ?, ?, ?, ?, ?)`,
    ),
    forget: d.prepare(
      `UPDATE graph_mastered SET until_step = ?, until_at = ?, until_accuracy = ?, until_baseline = ?
       WHERE run_id = ? AND skill_id = ? AND until_step IS NULL AND since_step < ?`,
    ),
  };
}

export type Statements = ReturnType<typeof prepareStatements>;

export function toMastery(r: MasteryRow): Mastery {
  return {
    runId: r.run_id,
    skillId: r.skill_id,
    sinceStep: r.since_step,
    sinceAt: r.since_at,
    untilStep: r.until_step,
    untilAt: r.until_at,
    accuracy: r.accuracy,
    untilAccuracy: r.until_accuracy,
    baseline: r.baseline,
    untilBaseline: r.until_baseline,
  };
}

export function toRun(r: RunRow): GraphRun {
  return {
    id: r.id,
    preset: r.preset,
    config: r.config,
    startedAt: r.started_at,
    endedAt: r.ended_at,
    status: r.status,
  };
}
