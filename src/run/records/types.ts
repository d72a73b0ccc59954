// What a served run keeps, behind one asynchronous interface with two homes: the run's SQLite file
// (the embedded default, records/sqlite.ts) and PostgreSQL (records/postgres.ts), with the same tables.
// Several `cogen serve` replicas can share a PostgreSQL run (docs/scale-out.md): each change of the
// run's state goes through `writer`, which holds the run's one writer lock for its transaction, so
// that every step is written by exactly one replica on top of the state the step before left.
import type Database from 'better-sqlite3';
import type { GraphEvent } from '../../../graphs/index.js';
import type { EnvSpec, Trajectory } from '../../../envs/index.js';
import type { EpisodeRow, IssueRecord, StepRecord, StoredRequest } from './store.js';
import type { Task } from '../../../core/task.js';
import type { GraphSink } from '../parts.js';

/** One write of a change, applied in the writer's transaction in order. */
export type WriteOp =
  | { op: 'issue'; step: number; newTasks: StepRecord['newTasks']; issues: IssueRecord[]; outbox: GraphEvent[] }
  | { op: 'step'; record: StepRecord }
  /** Graph events at a step; `metrics` (a probe round's) are merged into that step's metrics row. */
  | { op: 'events'; step: number; outbox: GraphEvent[]; metrics?: Record<string, number> }
  | { op: 'env-episode'; step: number; spec: EnvSpec; trajectory: Trajectory };

/** The run's shared state as the writer lock found it: its version and, when newer than asked, its snapshot. */
export interface LockedState {
  version: number;
  /** The `served` snapshot (JSON), only when `version` differs from the version the caller knew. */
  snapshot: string | null;
}

/** What a change reads inside the writer lock, read once for every change of a commit. */
export interface Prefetch {
  /** The stored idempotent requests among these keys. */
  requests: Map<string, StoredRequest>;
  /** Open issues per task id, oldest first. */
  openIssues: Map<string, number[]>;
  /** Cumulative scores per task id. */
  scores: Map<string, { solved: number; attempts: number }>;
}

/** The writer's transaction: it holds the run's writer lock until `commit` or an error. */
export interface WriterTx {
  /** The state's version, and its snapshot when it is not `known` (another replica wrote since). */
  state(known: number): Promise<LockedState>;
  /** Tasks recorded after `cursor` (by any replica), in the order they were recorded, and the new cursor. */
  tasksSince(cursor: number): Promise<{ tasks: Task[]; cursor: number }>;
  /** Marks issues past their expiry as abandoned. */
  expire(now: number): Promise<void>;
  prefetch(keys: string[], taskIds: string[]): Promise<Prefetch>;
  /** Writes the ops and the state snapshot (the next version) and commits. */
  commit(ops: WriteOp[], snapshot: string): Promise<void>;
}

export interface ServedRecords {
  readonly kind: 'sqlite' | 'postgres';
  /** Where the records live, for messages (never with a password). */
  readonly where: string;
  /** After a failed commit: true when the run goes on from the store (it reloads), false when it must stop. */
  readonly recoverable: boolean;
  /** Text as the store keeps it (PostgreSQL holds no NUL): a response carries the same text its replay will. */
  text(s: string): string;
  getMeta(key: string): Promise<string | undefined>;
  setMeta(values: Record<string, string>): Promise<void>;
  appendOutbox(step: number, events: GraphEvent[]): Promise<void>;
  /** Runs `fn` as the run's one writer (PostgreSQL: a transaction holding the state row's lock). */
  writer<T>(fn: (tx: WriterTx) => Promise<T>): Promise<T>;
  /** The latest version and snapshot without taking the lock (for reads). */
  latest(known: number): Promise<LockedState>;
  tasksSince(cursor: number): Promise<{ tasks: Task[]; cursor: number }>;
  task(id: string): Promise<Task | undefined>;
  request(key: string): Promise<StoredRequest | undefined>;
  episodesOf(step: number): Promise<EpisodeRow[]>;
  issueCounts(): Promise<{ open: number; scored: number; abandoned: number }>;
  /** The database the embedded skill graph lives in (the run's own file, or a local file beside a replica). */
  graphDb(): Database.Database;
  /** Drains the outbox into the skill graphs; returns the backlog. */
  drain(sinks: GraphSink[], batchSize: number, log: (line: string) => void): Promise<number>;
  /** Whether the store answers now (for /health); a one-line reason when it does not. */
  ping(): Promise<string | null>;
  close(): Promise<void>;
}
