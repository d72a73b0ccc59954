// A served run's records in PostgreSQL (docs/scale-out.md): the run store's tables in a schema named
// after the run, shared by every replica that serves the run. The one writer lock is a row lock:
// every commit is a transaction that first takes `SELECT … FOR UPDATE` on the run's state-version
// row, and a change of the curriculum's state is a read-modify-write of exactly that state, so the
// row lock is one writer per step; it is released by COMMIT, ROLLBACK, or the server dropping the
// connection of a replica that died.
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { drainOutbox, type GraphEvent } from '../../../graphs/index.js';
import type { Task } from '../../../core/task.js';
import { StoreError, type EpisodeRow, type StoredRequest } from './store.js';
import type { GraphSink } from '../parts.js';
import { pgSchema, schemaOf, storableText } from './pg-schema.js';
import { parsePgUrl } from './pg-url.js';
import { PATIENT_MS, PATIENT_TX, PG_LIMITS, breaksConnection, openPool, withDeadline } from './pg-pool.js';
import { writeOps } from './pg-writes.js';
import { prefetch, snapshotOf, tasksSince } from './pg-reads.js';
import type { LockedState, ServedRecords, WriteOp, WriterTx } from './types.js';

type Client = pg.PoolClient;

/** A writer that has waited this long for the lock makes /health answer 503 (a commit holds it for milliseconds). */
const LOCK_SLOW_MS = 1000;

/** How many tables a run's schema has (pg-schema.ts): all of them there means the schema is made. */
const TABLES = (pgSchema('s').match(/CREATE TABLE/g) ?? []).length;

export class PgRecords implements ServedRecords {
  readonly kind = 'postgres' as const;
  readonly recoverable = true;
  readonly text = storableText;
  private localGraph: Database.Database | null = null;
  /** When this replica's writer began waiting for the run's writer lock (null: not waiting). */
  private lockWaitSince: number | null = null;
  /** Why the last wait for the lock failed (it timed out), and when; reported until a wait succeeds, for LOCK_SLOW_MS × 5 at most (a replica that /health keeps out of traffic would never wait again). */
  private lockRefused: { why: string; at: number } | null = null;

  private constructor(
    private readonly pool: pg.Pool,
    /** Called after every query that succeeded (ends an outage's log). */
    private readonly ok: () => void,
    readonly where: string,
    private readonly s: string,
    private readonly localDir: string,
  ) {}

  /** Connects, and creates the run's schema and tables when they are missing. */
  static async open(url: string, runId: string, localDir: string, log: (line: string) => void): Promise<PgRecords> {
    const target = parsePgUrl(url);
    // The pid first: PostgreSQL keeps 63 bytes of it, and pg_stat_activity tells replicas apart by it.
    const { pool, ok } = openPool(target.config, `cogen ${process.pid} ${runId}`, {
      lost: (line) => log(`PostgreSQL at ${target.display}: ${line}`),
      back: () => log(`PostgreSQL at ${target.display} answers again`),
    });
    const records = new PgRecords(pool, ok, target.display, schemaOf(runId), localDir);
    // A replica joining a run whose tables exist runs no DDL: CREATE INDEX IF NOT EXISTS locks its
    // table before it finds the index there, which would wait for (and can deadlock with) the writers.
    if ((await records.tableCount()) < TABLES) {
      await records.tx(async (c) => {
        await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`cogen schema ${records.s}`]);
        await c.query(`CREATE SCHEMA IF NOT EXISTS ${records.s}`);
        await c.query(pgSchema(records.s));
      });
    }
    return records;
  }

  private async tableCount(): Promise<number> {
    const r = await this.query<{ n: string }>(
      'SELECT COUNT(*) n FROM information_schema.tables WHERE table_schema = $1',
      [this.s.slice(1, -1)],
    );
    return Number(r.rows[0]!.n);
  }

  /**
   * Creates the run unless another replica did: under the run's creation lock, `init` runs only when
   * the run has no `kind` yet, and its meta values and events are written with it. Returns whether it ran.
   */
  async initialise(init: () => Promise<{ meta: Record<string, string>; events: GraphEvent[] }>): Promise<boolean> {
    return this.tx(async (c) => {
      await c.query(PATIENT_TX);
      await c.query(withDeadline('SELECT pg_advisory_xact_lock(hashtext($1))', [`cogen create ${this.s}`], PATIENT_MS));
      const found = await c.query(`SELECT 1 FROM ${this.s}.meta WHERE key = 'kind'`);
      if (found.rowCount) return false;
      const { meta, events } = await init();
      await putMeta(c, this.s, { ...meta, servedVersion: '0' });
      await writeOps(c, this.s, [{ op: 'events', step: 0, outbox: events }]);
      return true;
    });
  }

  async getMeta(key: string) {
    const r = await this.query<{ value: string }>(`SELECT value FROM ${this.s}.meta WHERE key = $1`, [key]);
    return r.rows[0]?.value;
  }

  async setMeta(values: Record<string, string>) {
    await this.tx((c) => putMeta(c, this.s, values));
  }

  async appendOutbox(step: number, events: GraphEvent[]) {
    await this.tx((c) => writeOps(c, this.s, [{ op: 'events', step, outbox: events }]));
  }

  writer<T>(fn: (tx: WriterTx) => Promise<T>): Promise<T> {
    const s = this.s;
    return this.tx(async (c) => {
      const locked = await this.lock(c);
      const version = Number(locked.rows[0]?.value ?? 0);
      return fn({
        state: async (known) => ({ version, snapshot: known === version ? null : await snapshotOf(c, s) }),
        tasksSince: (cursor) => tasksSince(c, s, cursor),
        expire: async (now) =>
          void (await c.query(`UPDATE ${s}.issued SET state = 'abandoned' WHERE state = 'open' AND expires_at < $1`, [
            now,
          ])),
        prefetch: (keys, taskIds) => prefetch(c, s, keys, taskIds),
        commit: async (ops: WriteOp[], snapshot: string) => {
          await writeOps(c, s, ops);
          await putMeta(c, s, { served: snapshot, servedVersion: String(version + 1) });
        },
      });
    });
  }

  /** Takes the run's writer lock, noting for /health how long it has waited and whether the wait timed out. */
  private async lock(c: Client) {
    this.lockWaitSince = performance.now();
    try {
      const locked = await c.query<{ value: string }>(
        `SELECT value FROM ${this.s}.meta WHERE key = 'servedVersion' FOR UPDATE`,
      );
      this.lockRefused = null;
      return locked;
    } catch (e) {
      if ((e as { code?: string }).code === '55P03')
        this.lockRefused = { why: this.lost(e).message, at: performance.now() };
      throw e;
    } finally {
      this.lockWaitSince = null;
    }
  }

  async latest(known: number): Promise<LockedState> {
    const r = await this.query<{ value: string }>(`SELECT value FROM ${this.s}.meta WHERE key = 'servedVersion'`);
    const version = Number(r.rows[0]?.value ?? 0);
    if (version === known) return { version, snapshot: null };
    const c = await this.connect();
    try {
      return { version, snapshot: await snapshotOf(c, this.s) };
    } finally {
      c.release();
    }
  }

  async tasksSince(cursor: number) {
    const c = await this.connect();
    try {
      return await tasksSince(c, this.s, cursor);
    } finally {
      c.release();
    }
  }

  async task(id: string): Promise<Task | undefined> {
    const r = await this.query<{ data: string }>(`SELECT data FROM ${this.s}.tasks WHERE id = $1`, [id]);
    return r.rows[0] ? (JSON.parse(r.rows[0].data) as Task) : undefined;
  }

  async request(key: string): Promise<StoredRequest | undefined> {
    const r = await this.query<StoredRequest>(`SELECT key, digest, step FROM ${this.s}.requests WHERE key = $1`, [key]);
    return r.rows[0];
  }

  async episodesOf(step: number): Promise<EpisodeRow[]> {
    const r = await this.query<EpisodeRow>(
      `SELECT task_id "taskId", answer, reward, reason FROM ${this.s}.episodes WHERE step = $1 ORDER BY id`,
      [step],
    );
    return r.rows;
  }

  async issueCounts() {
    const r = await this.query<{ state: string; n: string }>(
      `SELECT state, COUNT(*) n FROM ${this.s}.issued GROUP BY state`,
    );
    const by = Object.fromEntries(r.rows.map((x) => [x.state, Number(x.n)]));
    return { open: by.open ?? 0, scored: by.scored ?? 0, abandoned: by.abandoned ?? 0 };
  }

  /** This replica's copy of the embedded skill graph: a SQLite file beside it, fed from the shared outbox. */
  graphDb(): Database.Database {
    if (!this.localGraph) {
      mkdirSync(this.localDir, { recursive: true });
      this.localGraph = new Database(join(this.localDir, 'skills.db'));
      this.localGraph.pragma('journal_mode = WAL');
      this.localGraph.pragma('busy_timeout = 5000');
      this.localGraph.exec('CREATE TABLE IF NOT EXISTS outbox_cursor (sink TEXT PRIMARY KEY, seq INTEGER NOT NULL)');
    }
    return this.localGraph;
  }

  /**
   * The embedded graph is each replica's own (its cursor in its own file: every replica drains the
   * whole outbox into it). A shared graph (Neo4j) is drained by one replica at a time: whoever locks
   * the sink's cursor row (FOR UPDATE SKIP LOCKED); the others skip it, as someone is draining.
   */
  async drain(sinks: GraphSink[], batchSize: number, log: (line: string) => void): Promise<number> {
    let backlog = 0;
    for (const sink of sinks) {
      const res =
        sink.name === 'embedded' ? await this.drainLocal(sink, batchSize) : await this.drainShared(sink, batchSize);
      if (res?.error)
        log(`skill graph ${sink.name} unavailable (${res.error}); ${res.pending} events wait in the outbox`);
      backlog += res?.pending ?? 0;
    }
    return backlog;
  }

  private async drainLocal(sink: GraphSink, batchSize: number) {
    const db = this.graphDb();
    const cursor = () =>
      (db.prepare('SELECT seq FROM outbox_cursor WHERE sink = ?').get(sink.name) as { seq: number } | undefined)?.seq ??
      0;
    return drainOutbox(
      {
        pending: (limit) => this.pendingEvents(null, cursor(), limit),
        markDone: (seq) =>
          void db
            .prepare(
              'INSERT INTO outbox_cursor (sink, seq) VALUES (?, ?) ON CONFLICT(sink) DO UPDATE SET seq = MAX(seq, excluded.seq)',
            )
            .run(sink.name, seq),
      },
      sink.graph,
      { batchSize },
    );
  }

  private drainShared(sink: GraphSink, batchSize: number) {
    return this.tx(async (c) => {
      await c.query(PATIENT_TX);
      await c.query(`INSERT INTO ${this.s}.outbox_cursor (sink, seq) VALUES ($1, 0) ON CONFLICT (sink) DO NOTHING`, [
        sink.name,
      ]);
      const row = await c.query<{ seq: string }>(
        `SELECT seq FROM ${this.s}.outbox_cursor WHERE sink = $1 FOR UPDATE SKIP LOCKED`,
        [sink.name],
      );
      if (!row.rows[0]) return null;
      let at = Number(row.rows[0].seq);
      return drainOutbox(
        {
          pending: (limit) => this.pendingEvents(c, at, limit),
          markDone: async (seq) => {
            at = Math.max(at, seq);
            await c.query(`UPDATE ${this.s}.outbox_cursor SET seq = $2 WHERE sink = $1`, [sink.name, at]);
          },
        },
        sink.graph,
        { batchSize },
      );
    });
  }

  private async pendingEvents(c: Client | null, after: number, limit: number) {
    const text = `SELECT seq, event FROM ${this.s}.outbox WHERE seq > $1 ORDER BY seq LIMIT $2`;
    const r = c
      ? await c.query<{ seq: string; event: string }>(text, [after, limit])
      : await this.query<{ seq: string; event: string }>(text, [after, limit]);
    return r.rows.map((x) => ({ seq: Number(x.seq), event: JSON.parse(x.event) as GraphEvent }));
  }

  async ping(): Promise<string | null> {
    const waited = this.lockWaitSince === null ? 0 : performance.now() - this.lockWaitSince;
    if (waited > LOCK_SLOW_MS)
      return `the run store (PostgreSQL at ${this.where}): waiting ${(waited / 1000).toFixed(1)} s for the run's writer lock (another replica holds it)`;
    if (this.lockRefused && performance.now() - this.lockRefused.at < LOCK_SLOW_MS * 5) return this.lockRefused.why;
    try {
      await this.query('SELECT 1', [], PG_LIMITS.pingTimeoutMs);
      return null;
    } catch (e) {
      return (e as Error).message;
    }
  }

  async close() {
    this.localGraph?.close();
    this.localGraph = null;
    await this.pool.end().catch(() => {});
  }

  private async connect(): Promise<Client> {
    try {
      return await this.pool.connect();
    } catch (e) {
      throw this.lost(e);
    }
  }

  private async query<R extends pg.QueryResultRow>(
    text: string,
    values?: unknown[],
    timeoutMs?: number,
  ): Promise<pg.QueryResult<R>> {
    const c = await this.connect();
    let failed: unknown;
    try {
      const r = await c.query<R>(timeoutMs ? withDeadline(text, values, timeoutMs) : { text, values });
      this.ok();
      return r;
    } catch (e) {
      failed = e;
      throw this.lost(e);
    } finally {
      c.release(failed !== undefined && breaksConnection(failed));
    }
  }

  /**
   * Runs `fn` in one transaction; a lost connection is thrown as a one-line StoreError. A connection
   * that broke (or whose ROLLBACK did not answer) is closed instead of going back to the pool.
   */
  private async tx<T>(fn: (c: Client) => Promise<T>): Promise<T> {
    const c = await this.connect();
    let broken = false;
    try {
      await c.query('BEGIN');
      const out = await fn(c);
      await c.query('COMMIT');
      this.ok();
      return out;
    } catch (e) {
      broken = breaksConnection(e);
      if (!broken) await c.query(withDeadline('ROLLBACK', [], PG_LIMITS.pingTimeoutMs)).catch(() => (broken = true));
      throw this.lost(e);
    } finally {
      c.release(broken);
    }
  }

  /** One line naming the store and what went wrong (the password is never part of it). */
  private lost(e: unknown): Error {
    if (e instanceof StoreError) return e;
    const err = e as Error & { code?: string };
    const what =
      err.code === '55P03' ? "another replica held the run's writer lock too long" : err.message.split('\n')[0];
    return new StoreError(`the run store (PostgreSQL at ${this.where}) failed: ${what}`);
  }
}

async function putMeta(c: Client, s: string, values: Record<string, string>): Promise<void> {
  const entries = Object.entries(values);
  if (entries.length === 0) return;
  await c.query(
    `INSERT INTO ${s}.meta (key, value) SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
    [entries.map(([k]) => k), entries.map(([, v]) => v)],
  );
}
