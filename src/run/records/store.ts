// The run store: one SQLite database (WAL) per run, `runs/<id>/run.db` (docs/DESIGN.md, "Stores and
// durability"). Everything one step produces is committed in one transaction, graph events included
// (the outbox), so a run killed at any moment loses nothing and a resumed run duplicates nothing.
import Database from 'better-sqlite3';
import { mkdirSync, existsSync, accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import type { GraphEvent } from '../../../graphs/index.js';
import type { Task } from '../../../core/task.js';
import type { EnvSpec, Trajectory } from '../../../envs/index.js';

import {
  SCHEMA,
  insertEnvEpisodes,
  insertEpisodes,
  insertProposals,
  insertTasks,
  type EnvEpisodeRow,
  type EpisodeRow,
  type Sql,
  type IssueRecord,
  type StepRecord,
  type StoredRequest,
  type TaskRow,
} from './tables.js';

export type { EnvEpisodeRow, EpisodeRow, IssueRecord, StepRecord, StoredRequest, TaskRow };

export class StoreError extends Error {}

export class RunStore {
  readonly db: Database.Database;
  /** Statements prepared once per store: a served run commits many small steps, and preparing is not free. */
  private readonly statements = new Map<string, Database.Statement>();

  private constructor(
    readonly dir: string,
    db: Database.Database,
  ) {
    this.db = db;
  }

  /** `sql` as a function, for the row writers of tables.ts. */
  private readonly prepare: Sql = (text) => this.sql(text);

  private sql(text: string): Database.Statement {
    let st = this.statements.get(text);
    if (!st) this.statements.set(text, (st = this.db.prepare(text)));
    return st;
  }

  /** Opens (creating if asked) the store of a run directory. */
  static open(dir: string, opts: { create: boolean }): RunStore {
    const path = join(dir, 'run.db');
    if (!opts.create && !existsSync(path)) throw new StoreError(`no run at ${dir} (missing run.db)`);
    if (opts.create) {
      try {
        mkdirSync(dir, { recursive: true });
        accessSync(dir, constants.W_OK);
      } catch (e) {
        throw new StoreError(`run directory ${dir} is not writable: ${(e as Error).message}`);
      }
    }
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    // Checkpoint the WAL every ~16 MB instead of ~4 MB: each small commit rewrites the same hot pages
    // (meta, task counters), which a checkpoint copies once however often they changed; measured on a
    // served run's commits, this halves their cost.
    db.pragma('wal_autocheckpoint = 4000');
    db.pragma('busy_timeout = 5000');
    // A served commit runs the store's own transactions as savepoints inside it, whose journal SQLite
    // spills to a temporary file (created and unlinked each commit) once past 64 KiB; kept in memory,
    // a 64-episode commit costs ~20 % less CPU (docs/scale-out.md, "Where the coordinator's main thread goes").
    db.pragma('temp_store = MEMORY');
    db.exec(SCHEMA);
    return new RunStore(dir, db);
  }

  getMeta(key: string): string | undefined {
    const row = this.sql('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined;
    return row?.value;
  }

  setMeta(values: Record<string, string>): void {
    this.db.transaction(() => this.putMeta(values))();
  }

  /** Everything a step produced, in one transaction. */
  commitStep(rec: StepRecord): void {
    const score = this.sql('UPDATE tasks SET attempts = attempts + ?, solved = solved + ? WHERE id = ?');
    const insScore = this.sql('INSERT INTO task_scores (step, task_id, solved, attempts) VALUES (?,?,?,?)');
    const insMetric = this.sql('INSERT OR REPLACE INTO metrics (step, data) VALUES (?, ?)');
    const closeIssue = this.sql("UPDATE issued SET state = 'scored' WHERE id = ?");
    const insRequest = this.sql('INSERT INTO requests (key, digest, step) VALUES (?, ?, ?)');
    this.db.transaction(() => {
      insertProposals(this.prepare, rec.step, rec.proposals ?? []);
      insertTasks(this.prepare, rec.step, rec.newTasks);
      for (const s of rec.scored) {
        score.run(s.attempts, s.solved, s.taskId);
        insScore.run(rec.step, s.taskId, s.solved, s.attempts);
      }
      insertEpisodes(this.prepare, rec.step, rec.episodes);
      insertEnvEpisodes(this.prepare, rec.step, rec.envEpisodes ?? []);
      insMetric.run(rec.step, JSON.stringify({ step: rec.step, ...rec.metrics }));
      this.insertEvents(rec.step, rec.outbox);
      this.putMeta({ ...rec.meta, lastStep: String(rec.step) });
      for (const id of rec.scoredIssues ?? []) closeIssue.run(id);
      if (rec.request) insRequest.run(rec.request.key, rec.request.digest, rec.request.step);
    })();
  }

  /**
   * Records tasks handed to a served trainer, in one transaction with the tasks first seen here,
   * their graph events and the state that drew them; returns the issue ids, in order.
   */
  issueTasks(rec: {
    step: number;
    newTasks: StepRecord['newTasks'];
    issues: IssueRecord[];
    outbox: GraphEvent[];
    meta?: Record<string, string>;
  }): number[] {
    const insIssue = this.sql('INSERT INTO issued (task_id, issued_at, expires_at) VALUES (?,?,?)');
    return this.db.transaction(() => {
      insertTasks(this.prepare, rec.step, rec.newTasks);
      this.insertEvents(rec.step, rec.outbox);
      this.putMeta(rec.meta ?? {});
      return rec.issues.map((i) => Number(insIssue.run(i.taskId, i.issuedAt, i.expiresAt).lastInsertRowid));
    })();
  }

  /** Graph events (a served probe report's mastery events) and meta values, in one transaction. */
  commitEvents(rec: {
    step: number;
    outbox: GraphEvent[];
    meta?: Record<string, string>;
    metrics?: Record<string, number>;
  }): void {
    this.db.transaction(() => {
      this.insertEvents(rec.step, rec.outbox);
      if (rec.metrics) this.mergeMetrics(rec.step, rec.metrics);
      this.putMeta(rec.meta ?? {});
    })();
  }

  // The pieces the transactions above are made of (each runs inside its caller's transaction).

  /** Adds keys to a step's metrics row (a served run's probe round lands on a step already scored). */
  private mergeMetrics(step: number, metrics: Record<string, number>): void {
    this.sql(
      'INSERT INTO metrics (step, data) VALUES (?, ?) ON CONFLICT (step) DO UPDATE SET data = json_patch(data, excluded.data)',
    ).run(step, JSON.stringify({ step, ...metrics }));
  }

  private insertEvents(step: number, outbox: GraphEvent[]): void {
    const insOutbox = this.sql('INSERT INTO outbox (step, event) VALUES (?, ?)');
    for (const ev of outbox) insOutbox.run(step, JSON.stringify(ev));
  }

  private putMeta(values: Record<string, string>): void {
    const put = this.sql(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value',
    );
    for (const [k, v] of Object.entries(values)) put.run(k, v);
  }

  /** A task's cumulative score so far. */
  taskScore(id: string): { solved: number; attempts: number } {
    return (
      (this.sql('SELECT solved, attempts FROM tasks WHERE id = ?').get(id) as
        { solved: number; attempts: number } | undefined) ?? { solved: 0, attempts: 0 }
    );
  }

  /** The oldest issues of a task still waiting for their score, at most `limit`. */
  openIssues(taskId: string, limit: number): number[] {
    return (
      this.sql("SELECT id FROM issued WHERE state = 'open' AND task_id = ? ORDER BY id LIMIT ?").all(taskId, limit) as {
        id: number;
      }[]
    ).map((r) => r.id);
  }

  /** Runs `fn` in one transaction (the store's own transactions inside it become savepoints). */
  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }

  /** Marks issues past their expiry as abandoned; returns how many were. */
  expireIssues(now: number): number {
    return this.sql("UPDATE issued SET state = 'abandoned' WHERE state = 'open' AND expires_at < ?").run(now).changes;
  }

  issueCounts(): { open: number; scored: number; abandoned: number } {
    const rows = this.sql('SELECT state, COUNT(*) n FROM issued GROUP BY state').all() as {
      state: string;
      n: number;
    }[];
    const by = Object.fromEntries(rows.map((r) => [r.state, r.n]));
    return { open: by.open ?? 0, scored: by.scored ?? 0, abandoned: by.abandoned ?? 0 };
  }

  /** The stored response of an idempotent request. */
  request(key: string): StoredRequest | undefined {
    return this.sql('SELECT key, digest, step FROM requests WHERE key = ?').get(key) as StoredRequest | undefined;
  }

  /** The episodes of one step, in the order they were recorded. */
  episodesOf(step: number): EpisodeRow[] {
    return this.sql('SELECT task_id taskId, answer, reward, reason FROM episodes WHERE step = ? ORDER BY id').all(
      step,
    ) as EpisodeRow[];
  }

  /** Records played environment episodes (observations, actions, tool results, rewards) in one transaction. */
  addEnvEpisodes(step: number, episodes: { spec: EnvSpec; trajectory: Trajectory }[]): void {
    this.db.transaction(() => insertEnvEpisodes(this.prepare, step, episodes))();
  }

  /** Every recorded environment episode, in the order recorded (none in a run made before environments). */
  envEpisodes(): EnvEpisodeRow[] {
    return (
      this.sql('SELECT id, step, spec, trajectory FROM env_episodes ORDER BY id').all() as {
        id: number;
        step: number;
        spec: string;
        trajectory: string;
      }[]
    ).map((r) => ({
      id: r.id,
      step: r.step,
      spec: JSON.parse(r.spec) as EnvSpec,
      trajectory: JSON.parse(r.trajectory) as Trajectory,
    }));
  }

  /** Appends graph events outside a step (run start/end, checkpoints). */
  appendOutbox(step: number, events: GraphEvent[]): void {
    this.db.transaction(() => this.insertEvents(step, events))();
  }

  /**
   * Forgets every step after `step` (used on resume from a checkpoint taken at `step`): those steps
   * will be replayed exactly, so keeping their rows would duplicate them. Graph sinks are idempotent,
   * so events they already received are simply received again.
   */
  truncateAfter(step: number): void {
    const db = this.db;
    db.transaction(() => {
      const later = this.sql(
        'SELECT task_id, SUM(solved) s, SUM(attempts) a FROM task_scores WHERE step > ? GROUP BY task_id',
      ).all(step) as { task_id: string; s: number; a: number }[];
      const unscore = this.sql('UPDATE tasks SET attempts = attempts - ?, solved = solved - ? WHERE id = ?');
      for (const r of later) unscore.run(r.a, r.s, r.task_id);
      for (const table of [
        'tasks',
        'episodes',
        'task_scores',
        'metrics',
        'checkpoints',
        'outbox',
        'proposals',
        'env_episodes',
      ]) {
        this.sql(`DELETE FROM ${table} WHERE step > ?`).run(step);
      }
      const maxSeq = (this.sql('SELECT COALESCE(MAX(seq), 0) m FROM outbox').get() as { m: number }).m;
      this.sql('UPDATE outbox_cursor SET seq = MIN(seq, ?)').run(maxSeq);
      this.sql(
        "INSERT INTO meta (key, value) VALUES ('lastStep', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
      ).run(String(step));
    })();
  }

  /** An outbox reader for one sink (each graph store keeps its own cursor). */
  outbox(sink: string): {
    pending(limit: number): { seq: number; event: GraphEvent }[];
    markDone(maxSeq: number): void;
    backlog(): number;
  } {
    const cursor = (): number =>
      (this.sql('SELECT seq FROM outbox_cursor WHERE sink = ?').get(sink) as { seq: number } | undefined)?.seq ?? 0;
    return {
      pending: (limit) =>
        (
          this.sql('SELECT seq, event FROM outbox WHERE seq > ? ORDER BY seq LIMIT ?').all(cursor(), limit) as {
            seq: number;
            event: string;
          }[]
        ).map((r) => ({ seq: r.seq, event: JSON.parse(r.event) as GraphEvent })),
      markDone: (maxSeq) => {
        this.sql(
          'INSERT INTO outbox_cursor (sink, seq) VALUES (?, ?) ON CONFLICT(sink) DO UPDATE SET seq = MAX(seq, excluded.seq)',
        ).run(sink, maxSeq);
      },
      backlog: () => (this.sql('SELECT COUNT(*) n FROM outbox WHERE seq > ?').get(cursor()) as { n: number }).n,
    };
  }

  /** Every event of the run, in order (for `cogen skills sync` into a fresh graph). */
  *allEvents(): Iterable<GraphEvent> {
    for (const r of this.sql('SELECT event FROM outbox ORDER BY seq').iterate() as Iterable<{ event: string }>) {
      yield JSON.parse(r.event) as GraphEvent;
    }
  }

  addCheckpoint(id: string, step: number, path: string, at: string): void {
    this.sql('INSERT OR REPLACE INTO checkpoints (id, step, path, at) VALUES (?,?,?,?)').run(id, step, path, at);
  }

  latestCheckpoint(): { id: string; step: number; path: string } | undefined {
    return this.sql('SELECT id, step, path FROM checkpoints ORDER BY step DESC LIMIT 1').get() as
      { id: string; step: number; path: string } | undefined;
  }

  /** Every task in the order it was first proposed (rowid order), which a resumed run relies on. */
  tasks(): TaskRow[] {
    return (
      this.sql('SELECT step, data, compact, natural, attempts, solved FROM tasks ORDER BY rowid').all() as {
        step: number;
        data: string;
        compact: string;
        natural: string;
        attempts: number;
        solved: number;
      }[]
    ).map((r) => ({
      task: JSON.parse(r.data) as Task,
      step: r.step,
      compact: r.compact,
      natural: r.natural,
      attempts: r.attempts,
      solved: r.solved,
    }));
  }

  task(id: string): Task | undefined {
    const row = this.sql('SELECT data FROM tasks WHERE id = ?').get(id) as { data: string } | undefined;
    return row ? (JSON.parse(row.data) as Task) : undefined;
  }

  metrics(): Record<string, number | string | null>[] {
    return (this.sql('SELECT data FROM metrics ORDER BY step').all() as { data: string }[]).map((r) =>
      JSON.parse(r.data),
    );
  }

  /** The run's mastery events in the order they happened, read from the graph events that carry them (the outbox keeps every event). */
  skillEvents(): { step: number; skillId: string; event: 'learned' | 'forgotten'; accuracy: number; at: string }[] {
    const rows = this.sql(
      "SELECT event FROM outbox WHERE json_extract(event, '$.kind') = 'mastery' ORDER BY seq",
    ).all() as { event: string }[];
    return rows.map((r) => {
      const e = JSON.parse(r.event) as Extract<GraphEvent, { kind: 'mastery' }>;
      return { step: e.step, skillId: e.skillId, event: e.event, accuracy: e.accuracy, at: e.at };
    });
  }

  count(table: 'tasks' | 'episodes' | 'metrics' | 'checkpoints' | 'outbox' | 'proposals' | 'env_episodes'): number {
    return (this.sql(`SELECT COUNT(*) n FROM ${table}`).get() as { n: number }).n;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
