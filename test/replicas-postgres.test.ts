// Several replicas of one served run on PostgreSQL (docs/scale-out.md): the same history as one
// replica on SQLite when their requests alternate (sampling, scores, probe rounds, the curriculum's
// and the learned proposer's state), idempotency keys answered once across replicas, expiry seen by
// every replica, and a database that goes away: 503 with Retry-After, nothing acknowledged lost.
import { afterAll, describe, expect, it } from 'vitest';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { loadPreset } from '../src/run/config.js';
import { openServedRun, startServer, type ServedRun } from '../src/server/index.js';
import pg from 'pg';
import { RunStore, schemaOf } from '../src/run/testing.js';
import { referenceAnswer, type Task } from '../core/task.js';
import { isCI, postgresUrl } from './services.js';
import { tempDir } from './helpers.js';

const { url: pgUrl, reason } = postgresUrl();
const pgClient = pg.Client;
const config = () => loadPreset('smoke', { probes: { every: 2 }, proposer: { learned: { enabled: true } } });
let ids = 0;
const runIdOf = (name: string) => `${name}-${process.pid}-${Date.now()}-${ids++}`;
const clock = { t: Date.UTC(2026, 0, 1) };
const now = () => clock.t;

/** A task's completions: the reference twice, then two different wrong answers. */
const completions = (t: Task) =>
  [referenceAnswer(t), referenceAnswer(t), '"surely not"', '"nor this"'].map((completion) => ({
    task_id: t.id,
    completion,
  }));

/** The same requests, in the same order, each sent to replicas[i % n] and awaited. */
async function history(
  replicas: ServedRun[],
  taskOf: (id: string) => Promise<Task>,
  probes: Map<string, Task>,
  rounds: number,
): Promise<void> {
  let i = 0;
  const next = () => replicas[i++ % replicas.length]!;
  for (let r = 0; r < rounds; r++) {
    const { tasks } = await next().sample(3);
    const full = await Promise.all(tasks.map((t) => taskOf(t.id)));
    // Two score requests per sample, on two replicas: the second group of each task arrives unfed.
    await next().score(full.flatMap(completions), { key: `k${r}`, digest: `d${r}` });
    await next().score(full.slice(0, 1).flatMap(completions), { key: `k${r}b`, digest: `d${r}b` });
    const set = await next().probeSet();
    if (set.due) {
      // Right on every other probe: per-skill accuracies that learn some skills and not others.
      const answers = set.tasks.map((p, k) => ({
        task_id: p.id,
        completion: k % 2 ? '"no"' : referenceAnswer(probes.get(p.id)!),
      }));
      await next().reportProbes(set.round, answers);
    }
  }
}

describe('replicas on PostgreSQL', () => {
  if (!pgUrl) {
    // Under CI a missing server fails the run; elsewhere the tests are skipped with the reason.
    if (isCI) it('has PostgreSQL', () => expect.fail(reason));
    else it.skip(`needs PostgreSQL: ${reason}`, () => undefined);
    return;
  }
  const open: ServedRun[] = [];
  afterAll(async () => {
    for (const r of open) await r.close().catch(() => undefined);
  });

  it('write the history one SQLite replica writes when their requests alternate', async () => {
    const base = tempDir('cogen-replicas-');
    const single = await openServedRun(config(), { runsDir: join(base, 'sqlite'), preset: 'smoke', runId: 'one', now });
    open.push(single);
    const store = () => RunStore.open(join(base, 'sqlite', 'one'), { create: false });
    const sqliteTask = async (id: string) => {
      const s = store();
      try {
        return s.task(id)!;
      } finally {
        s.close();
      }
    };
    const runId = runIdOf('alt');
    const a = await openServedRun(config(), { runsDir: join(base, 'a'), preset: 'smoke', runId, store: pgUrl!, now });
    const b = await openServedRun(config(), { runsDir: join(base, 'b'), preset: 'smoke', runId, store: pgUrl!, now });
    open.push(a, b);
    const pgTask = async (id: string) => (await a.records.task(id))!;
    // The probes the PostgreSQL run keeps are the ones the SQLite run drew (the same config and seed).
    const kept = JSON.parse((await a.records.getMeta('probes'))!) as { probes: { task: Task }[] };
    const probes = new Map(kept.probes.map((p) => [p.task.id, p.task]));
    expect((await single.probeSet()).tasks.map((t) => t.id)).toEqual([...probes.keys()]);
    await history([single], sqliteTask, probes, 8);
    await history([a, b], pgTask, probes, 8);
    const s = store();
    const expected = JSON.parse(s.getMeta('served')!) as Record<string, unknown>;
    const expectedTasks = s.tasks().map((r) => [r.task.id, r.attempts, r.solved]);
    s.close();
    const got = JSON.parse((await a.records.getMeta('served'))!) as Record<string, unknown>;
    expect(got).toEqual(expected);
    expect(expected.probeRound).toBeGreaterThanOrEqual(1);
    const gotTasks: unknown[] = [];
    for (const [id] of expectedTasks) {
      const t = await a.records.task(id as string);
      gotTasks.push(t?.id);
    }
    expect(gotTasks).toEqual(expectedTasks.map((r) => r[0]));
    // The metrics rows, probe rounds merged into their steps' rows, are the single run's.
    const s2 = store();
    const expectedMetrics = s2.metrics();
    s2.close();
    expect(expectedMetrics.some((m) => typeof m.probeAccuracy === 'number' && 'meanReward' in m)).toBe(true);
    const pg = new pgClient({ connectionString: pgUrl! });
    await pg.connect();
    try {
      const rows = (await pg.query(`SELECT data FROM ${schemaOf(runId)}.metrics ORDER BY step`)).rows as {
        data: string;
      }[];
      expect(rows.map((r) => JSON.parse(r.data))).toEqual(expectedMetrics);
    } finally {
      await pg.end();
    }
    // Both replicas read the same counters, whichever wrote last.
    const [sa, sb, s1] = await Promise.all([a.stats(), b.stats(), single.stats()]);
    for (const k of [
      'step',
      'groups',
      'unfed_groups',
      'completions',
      'solved',
      'tasks',
      'probes_reported',
      'open',
      'abandoned',
    ] as const) {
      expect(sa[k]).toBe(s1[k]);
      expect(sb[k]).toBe(s1[k]);
    }
  }, 300_000);

  it('answer an idempotency key once across replicas, and refuse it with another body', async () => {
    const runId = runIdOf('idem');
    const base = tempDir('cogen-replicas-idem-');
    const a = await openServedRun(config(), { runsDir: join(base, 'a'), preset: 'smoke', runId, store: pgUrl!, now });
    const b = await openServedRun(config(), { runsDir: join(base, 'b'), preset: 'smoke', runId, store: pgUrl!, now });
    open.push(a, b);
    const { tasks } = await a.sample(4);
    const full = await Promise.all(tasks.map(async (t) => (await a.records.task(t.id))!));
    const items = full.flatMap(completions);
    const before = await b.stats();
    const answers = await Promise.all([a, b, a, b].map((r) => r.score(items, { key: 'same', digest: 'D' })));
    expect(answers.filter((x) => !x.replayed)).toHaveLength(1);
    for (const x of answers)
      expect({ step: x.step, results: x.results }).toEqual({ step: answers[0]!.step, results: answers[0]!.results });
    const after = await a.stats();
    expect(after.completions - before.completions).toBe(items.length);
    expect(after.step - before.step).toBe(1);
    await expect(b.score(items.slice(1), { key: 'same', digest: 'other' })).rejects.toMatchObject({ status: 409 });
  }, 120_000);

  it('abandon an expired task on every replica, and take a probe round once', async () => {
    const runId = runIdOf('expiry');
    const base = tempDir('cogen-replicas-exp-');
    const ttl = loadPreset('smoke', { probes: { every: 1 }, serve: { ttlSeconds: 5 } });
    const a = await openServedRun(ttl, { runsDir: join(base, 'a'), preset: 'smoke', runId, store: pgUrl!, now });
    const b = await openServedRun(ttl, { runsDir: join(base, 'b'), preset: 'smoke', runId, store: pgUrl!, now });
    open.push(a, b);
    const { tasks } = await a.sample(2);
    clock.t += 10_000;
    const full = await Promise.all(tasks.map(async (t) => (await a.records.task(t.id))!));
    await b.score(completions(full[0]!));
    const s = await a.stats();
    expect(s.unfed_groups).toBe(1);
    expect(s.groups).toBe(0);
    expect(s.abandoned).toBe(2);
    const fresh = await b.sample(1);
    await a.score(completions((await b.records.task(fresh.tasks[0]!.id))!));
    const set = await b.probeSet();
    expect(set.due).toBe(true);
    const empty = set.tasks.map((t) => ({ task_id: t.id, completion: '' }));
    const [ra, rb] = await Promise.all([a.reportProbes(set.round, empty), b.reportProbes(set.round, empty)]);
    expect([ra.accepted, rb.accepted].sort()).toEqual([false, true]);
    expect([ra, rb].find((r) => !r.accepted)!.detail).toMatch(/reported already/);
  }, 120_000);

  it('answer 503 with Retry-After while the database is away, lose nothing acknowledged, and go on after', async () => {
    const target = new URL(pgUrl!);
    const proxy = await tcpProxy(Number(target.port), target.hostname);
    const viaProxy = `postgres://${target.username}@127.0.0.1:${proxy.port}${target.pathname}`;
    const runId = runIdOf('away');
    const logged: string[] = [];
    const server = await startServer(config(), {
      runsDir: tempDir('cogen-replicas-away-'),
      preset: 'smoke',
      runId,
      store: viaProxy,
      host: '127.0.0.1',
      port: 0,
      now,
      log: (l) => logged.push(l),
    });
    try {
      const post = (path: string, body: unknown) =>
        fetch(server.url + path, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const sampled = (await (await post('/v1/sample', { n: 2 })).json()) as { tasks: { id: string }[] };
      const full = await Promise.all(sampled.tasks.map(async (t) => (await server.run.records.task(t.id))!));
      const acked = await post('/v1/score', { items: completions(full[0]!), idempotency_key: 'before' });
      expect(acked.status).toBe(200);
      proxy.cut();
      const refused = await post('/v1/score', { items: completions(full[1]!), idempotency_key: 'during' });
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('1');
      const line = ((await refused.json()) as { error: string }).error;
      expect(line).toMatch(
        /^the run store \(PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres\) failed: \S.*$/,
      );
      expect(line).not.toContain('\n');
      const health = await fetch(server.url + '/health');
      expect(health.status).toBe(503);
      expect(health.headers.get('retry-after')).toBe('1');
      await proxy.restore();
      const retried = await post('/v1/score', { items: completions(full[1]!), idempotency_key: 'during' });
      expect(retried.status).toBe(200);
      const again = (await (
        await post('/v1/score', { items: completions(full[0]!), idempotency_key: 'before' })
      ).json()) as { replayed: boolean };
      expect(again.replayed).toBe(true);
      const stats = (await (await fetch(server.url + '/v1/stats')).json()) as {
        step: number;
        completions: number;
        groups: number;
      };
      expect(stats).toMatchObject({ step: 2, completions: 8, groups: 2 });
      expect((await fetch(server.url + '/health')).status).toBe(200);
      // The password (PGPASSWORD) is in no log line and no answer.
      expect(logged.length).toBeGreaterThan(0);
      expect(process.env.PGPASSWORD).toBeTruthy();
      for (const text of [...logged, line]) expect(text).not.toContain(process.env.PGPASSWORD!);
    } finally {
      await server.close();
      proxy.close();
    }
  }, 120_000);
});

/** A loopback TCP proxy to a server, whose connections can be cut (and refused) and restored. */
async function tcpProxy(port: number, host: string) {
  const sockets = new Set<Socket>();
  let server: Server;
  const listen = (at: number) =>
    new Promise<number>((resolve) => {
      server = createServer((inbound) => {
        const outbound = createConnection({ port, host });
        for (const s of [inbound, outbound]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => s.destroy());
        }
        inbound.pipe(outbound).pipe(inbound);
      });
      server.listen(at, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
    });
  const at = await listen(0);
  return {
    port: at,
    cut() {
      server.close();
      for (const s of sockets) s.destroy();
    },
    restore: () => listen(at),
    close() {
      server.close();
      for (const s of sockets) s.destroy();
    },
  };
}
