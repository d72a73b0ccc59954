// Faults of the services under `cogen serve` replicas on PostgreSQL (docs/scale-out.md, "Faults of
// the services"), each made certain by a fault point (src/server/faults.ts) rather than a random
// kill: a replica that holds a connection inside a transaction when PostgreSQL stops -m immediate,
// a replica paused inside the writer lock past the server's idle-in-transaction limit while another
// replica waits for the lock, and a replica killed between a commit and its reply. No cogen process
// may exit, no request may be answered 2xx that was not committed, and the store must hold every
// acknowledged request once with the rewards its answer showed (bench/scale/audit.ts). Real
// processes and a PostgreSQL server of this file's own, which it stops and starts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { referenceAnswer, type Task } from '../core/task.js';
import { parsePgUrl } from '../src/run/testing.js';
import { proc, type Proc } from '../bench/scale/procs.js';
import { audit, noteAck, type Ack } from '../bench/scale/audit.js';
import { freePort, postgresServer, stopLocalServices, type LocalPostgres } from './setup/local-services.js';
import { isCI, postgresUrl } from './services.js';
import { tempDir } from './helpers.js';

const available = postgresUrl();
let ids = 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A POST's status, Retry-After and JSON body; status 0 when the connection failed. */
async function post(url: string, path: string, body: unknown) {
  try {
    const res = await fetch(url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as never };
  } catch (e) {
    return { status: 0, retryAfter: null, body: { error: (e as Error).message } as never };
  }
}

/** Whether a process is stopped (SIGSTOP): its state in /proc is T. */
const isStopped = (pid: number) => / T /.test(readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\)/, ''));

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`not ${what} after ${ms / 1000} s`);
    await sleep(50);
  }
}

describe('replicas through faults of PostgreSQL and of themselves', () => {
  if (!available.url) {
    if (isCI) it('has PostgreSQL', () => expect.fail(available.reason));
    else it.skip(`needs PostgreSQL: ${available.reason}`, () => undefined);
    return;
  }
  let server: LocalPostgres;
  let db: pg.Pool;
  const procs: Proc[] = [];
  beforeAll(async () => {
    server = await postgresServer();
    db = new pg.Pool({ ...parsePgUrl(server.url).config, password: server.password, max: 2 });
    // Its idle connections die with the server this file stops.
    db.on('error', () => undefined);
  });
  afterAll(async () => {
    await Promise.all(procs.map((p) => (p.child?.kill('SIGCONT'), p.stop())));
    await db?.end();
    await stopLocalServices();
  });

  /** Replica processes of a new run, not started yet, each with the fault points `env(i, runId)` armed. */
  async function newRun(n: number, env: (i: number, runId: string) => Record<string, string>) {
    const runId = `faults-${process.pid}-${ids++}`;
    const dir = tempDir('cogen-replica-faults-');
    const out: Proc[] = [];
    for (let i = 0; i < n; i++) {
      const args = ['serve', '--preset', 'smoke', '--store', server.url, '--run-id', runId];
      const p = proc(`replica ${i}`, 'replica', await freePort(), [...args, '--runs-dir', `${dir}/${i}`], {
        PGPASSWORD: server.password,
        ...env(i, runId),
      });
      procs.push(p);
      out.push(p);
    }
    return { runId, replicas: out };
  }

  /** Replicas of a new run, each with the fault points `faults[i]` armed, started one after the other (the first creates the run). */
  async function replicas(faults: Record<string, string>[]) {
    const made = await newRun(faults.length, (i) => faults[i]!);
    for (const p of made.replicas) {
      p.start();
      await p.healthy();
    }
    return made;
  }

  /** A score request of 2 completions per sampled task (right, wrong), sampled on `r`. */
  async function scoreBody(r: Proc, runId: string, n = 2) {
    const sampled = (await post(r.url, '/v1/sample', { n })).body as { tasks: { id: string }[] };
    const rows = await db.query<{ id: string; data: string }>(
      `SELECT id, data FROM "${runId}".tasks WHERE id = ANY($1)`,
      [sampled.tasks.map((t) => t.id)],
    );
    return rows.rows.flatMap((row) => [
      { task_id: row.id, completion: referenceAnswer(JSON.parse(row.data) as Task) },
      { task_id: row.id, completion: '"surely not"' },
    ]);
  }

  /** Sends a score request to `r` until it is answered 2xx (a 503 with Retry-After is waited out, for a minute at most), noting it. */
  async function scored(r: Proc, runId: string, key: string, acks: Map<string, Ack>, items?: unknown[]) {
    const body = { idempotency_key: key, items: items ?? (await scoreBody(r, runId)) };
    const end = Date.now() + 60_000;
    for (;;) {
      const res = await post(r.url, '/v1/score', body);
      if (res.status === 200) {
        noteAck(acks, key, res.body);
        return res.body as { step: number; results: unknown[]; replayed: boolean };
      }
      expect({ status: res.status, retryAfter: res.retryAfter }).toEqual({ status: 503, retryAfter: '1' });
      if (Date.now() > end) expect.fail(`${key} on ${r.name}: still 503 after a minute: ${JSON.stringify(res.body)}`);
      await sleep(200);
    }
  }

  /** Replicas of a new run, the first with `fault` armed: one request acknowledged on the first, and the body of the next. */
  async function armed(fault: Record<string, string>, others = 0) {
    const { runId, replicas: rs } = await replicas([fault, ...Array.from({ length: others }, () => ({}))]);
    const acks = new Map<string, Ack>();
    await scored(rs[0]!, runId, 'a1', acks);
    return { runId, a: rs[0]!, b: rs[1], acks, items: await scoreBody(rs[0]!, runId) };
  }

  it('answer 503 when PostgreSQL stops under an open transaction, stay up, and serve again once it is back', async () => {
    const { runId, a, acks, items } = await armed({ COGEN_FAULT_PAUSE_IN_LOCK: 'held' });
    // The replica stops itself inside the writer lock, a connection checked out in a transaction.
    const held = post(a!.url, '/v1/score', { idempotency_key: 'held', items });
    await until('paused', () => isStopped(a!.child!.pid!));
    await server.stop('immediate');
    try {
      a!.child!.kill('SIGCONT');
      const answer = await held;
      expect(answer).toMatchObject({ status: 503, retryAfter: '1' });
      expect((answer.body as { error: string }).error).toMatch(
        /^the run store \(PostgreSQL at .*\) failed: .*retry it$/,
      );
      const health = await fetch(`${a!.url}/health`);
      expect(health.status).toBe(503);
    } finally {
      await server.start();
    }
    // Back without a restart by hand: /health, then the request it refused.
    await a!.healthy();
    await scored(a!, runId, 'held', acks, items);
    expect(a!.child!.exitCode).toBeNull();
    expect(await audit(db, runId, acks)).toEqual([]);
  }, 180_000);

  it('end a paused writer by its session, let the other replica commit meanwhile, and commit nothing stale', async () => {
    const { runId, a, b, acks, items } = await armed({ COGEN_FAULT_PAUSE_IN_LOCK: 'paused' }, 1);
    await scored(b!, runId, 'b1', acks);
    const paused = post(a!.url, '/v1/score', { idempotency_key: 'paused', items });
    await until('paused', () => isStopped(a!.child!.pid!));
    // While A holds the lock, B's writer waits for it, and B's /health says so.
    const waiting = scored(b!, runId, 'b2', acks);
    let lockReported = '';
    await until('reporting the lock', async () => {
      const h = await fetch(`${b!.url}/health`);
      if (h.status === 503) lockReported = ((await h.json()) as { reason: string }).reason;
      return /writer lock/.test(lockReported);
    });
    expect(lockReported).toMatch(/another replica/);
    // The server ends A's session; B commits while A is still stopped.
    await waiting;
    await scored(b!, runId, 'b3', acks);
    expect(isStopped(a!.child!.pid!)).toBe(true);
    a!.child!.kill('SIGCONT');
    // A woke on a session the server ended: its request is refused, not acknowledged.
    expect(await paused).toMatchObject({ status: 503, retryAfter: '1' });
    // A goes on from the store: its next commits follow B's.
    await scored(a!, runId, 'a2', acks);
    await scored(b!, runId, 'paused', acks, items);
    await scored(a!, runId, 'a3', acks);
    expect(a!.child!.exitCode).toBeNull();
    expect(await audit(db, runId, acks)).toEqual([]);
  }, 180_000);

  it('answer a request retried after a kill between its commit and its reply from the store', async () => {
    const { runId, a, b, acks, items } = await armed({ COGEN_FAULT_KILL_AFTER_COMMIT: 'doomed' }, 1);
    const cut = await post(a!.url, '/v1/score', { idempotency_key: 'doomed', items });
    expect(cut.status).toBe(0);
    await a!.closed();
    expect(a!.child!.signalCode).toBe('SIGKILL');
    // Committed before the kill: the retry, on the other replica, is the stored request.
    const stored = await db.query<{ step: number }>(`SELECT step FROM "${runId}".requests WHERE key = 'doomed'`);
    expect(stored.rows).toHaveLength(1);
    const retried = await scored(b!, runId, 'doomed', acks, items);
    expect(retried).toMatchObject({ replayed: true, step: stored.rows[0]!.step });
    await scored(b!, runId, 'b1', acks);
    // And on the killed replica, started again.
    a!.start();
    await a!.healthy();
    expect(await scored(a!, runId, 'doomed', acks, items)).toMatchObject({ replayed: true });
    expect(await audit(db, runId, acks)).toEqual([]);
  }, 180_000);

  it('start two replicas of a new run at once: the second waits for the first to create it, however long, and joins', async () => {
    const {
      runId,
      replicas: [a, b],
    } = await newRun(2, (i, id): Record<string, string> => (i === 0 ? { COGEN_FAULT_PAUSE_IN_CREATION: id } : {}));
    // A stops inside the run's creation; B, started beside it, waits for the creation lock past the 4 s lock limit.
    a!.start();
    await until('paused', () => isStopped(a!.child!.pid!));
    b!.start();
    await until('waiting for the creation past the lock limit', async () => {
      if (b!.child!.exitCode !== null) expect.fail(`B exited: ${b!.lines.map((l) => l.line).join(' | ')}`);
      const waiting = await db.query(
        `SELECT 1 FROM pg_stat_activity WHERE application_name LIKE $1 AND wait_event_type = 'Lock' AND now() - query_start > interval '6 seconds'`,
        [`cogen ${b!.child!.pid} %`],
      );
      return (waiting.rowCount ?? 0) > 0;
    });
    a!.child!.kill('SIGCONT');
    await Promise.all([a!.healthy(), b!.healthy()]);
    const acks = new Map<string, Ack>();
    await scored(b!, runId, 'b1', acks);
    await scored(a!, runId, 'a1', acks);
    expect(await audit(db, runId, acks)).toEqual([]);
  }, 180_000);
});
