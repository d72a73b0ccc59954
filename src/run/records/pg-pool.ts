// The connections of a served run's PostgreSQL records (docs/scale-out.md, "When the database goes
// away"). Every connection handles `error`, pooled or checked out: pg-pool listens on a connection
// only while it is idle, and pg emits `error` on a connection whose socket dies or whose session the
// server ends (idle in transaction, a restart), which with no listener ends the process. A connection
// that failed goes back to the pool as broken (closed, never reused), and the next request opens a
// fresh one. A partition is silent (no reset), so every query has a deadline on this side too.
import pg from 'pg';

/**
 * The server-side limits of every session, chosen from measured lock times (bench/results/scale-chaos-services.md):
 * a commit holds the writer lock for milliseconds (a sample, which draws its tasks inside the lock, for
 * tens), so a session idle inside a transaction for seconds is a replica that hangs or was paused,
 * and its lock is released after IDLE_IN_TRANSACTION_MS; a writer waits at most LOCK_TIMEOUT_MS for
 * the lock before its request gets a 503.
 */
export const PG_LIMITS = {
  lockTimeoutMs: 4000,
  idleInTransactionMs: 4000,
  statementTimeoutMs: 60_000,
  /** The server drops a connection whose sent data stays unacknowledged this long (a partition). */
  tcpUserTimeoutMs: 5000,
  /** This side gives up on a query after this long (a partition): past the lock wait and any write. */
  queryTimeoutMs: 10_000,
  /** /health's probe of the store answers within this. */
  pingTimeoutMs: 2000,
  connectTimeoutMs: 5000,
} as const;

/** How long a patient transaction (below) may wait: as long as drawing a new run's probes could take. */
export const PATIENT_MS = 600_000;

/**
 * For a transaction that holds no writer lock and may wait on something else for a while (a new
 * run drawing its probes under the creation lock, which a replica started beside the first waits
 * for; a drain to Neo4j under its cursor's lock): it blocks no commit, so the short limits on idle
 * time and lock waits do not apply to it.
 */
export const PATIENT_TX = `SET LOCAL idle_in_transaction_session_timeout = ${PATIENT_MS}; SET LOCAL lock_timeout = ${PATIENT_MS}`;

export interface PoolEvents {
  /** A connection failed (first failure of an outage only). */
  lost(message: string): void;
  /** A query succeeded after an outage. */
  back(): void;
}

/** The pool of one replica: at most `max` connections, each with the session limits above and an `error` listener. */
export function openPool(config: pg.PoolConfig, name: string, events: PoolEvents): { pool: pg.Pool; ok(): void } {
  const L = PG_LIMITS;
  const pool = new pg.Pool({
    ...config,
    max: 4,
    connectionTimeoutMillis: L.connectTimeoutMs,
    query_timeout: L.queryTimeoutMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: 5000,
    application_name: name,
    options: [
      `-c lock_timeout=${L.lockTimeoutMs}`,
      `-c idle_in_transaction_session_timeout=${L.idleInTransactionMs}`,
      `-c statement_timeout=${L.statementTimeoutMs}`,
      `-c tcp_user_timeout=${L.tcpUserTimeoutMs}`,
    ].join(' '),
  });
  let down = false;
  const lost = (e: Error) => {
    if (!down) events.lost(e.message.split('\n')[0]!);
    down = true;
  };
  pool.on('error', lost);
  // Stays on the connection for its whole life, checked out or idle.
  pool.on('connect', (client) => client.on('error', lost));
  return {
    pool,
    ok() {
      if (down) events.back();
      down = false;
    },
  };
}

/**
 * Whether a failed query left its connection unusable although pg still calls it queryable: the
 * query's deadline passed with its answer still owed (pg would queue the next query, even a
 * ROLLBACK, behind it), or the server answered with a connection or shutdown error. A connection
 * whose socket died pg marks itself, and pg-pool closes it on release.
 */
export function breaksConnection(e: unknown): boolean {
  if ((e as Error)?.message === 'Query read timeout') return true;
  const code = e instanceof pg.DatabaseError ? e.code : undefined;
  // 08: connection exception; 57P0x: the server shut down or ended the session; 25P03: idle in transaction too long.
  return code !== undefined && (code.startsWith('08') || code.startsWith('57P') || code === '25P03');
}

/** A query with a deadline of its own on this side (pg reads `query_timeout` from a query's config; its types omit it). */
export function withDeadline(text: string, values: unknown[] | undefined, ms: number): pg.QueryConfig {
  const config = { text, values, query_timeout: ms };
  return config;
}
