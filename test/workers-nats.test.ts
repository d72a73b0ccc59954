// Verification workers on a real NATS JetStream (docs/scale-out.md): verdicts through the queue are
// the verdicts of the replica's own sandbox (hostile answers keep their budget), a batch that
// crashes a worker is split and retried so the answers beside a bad one keep their rewards, an
// answer that crashes a worker 3 times is dead-lettered with reward 0, junk on the verify subject is
// refused, and with no worker a request gives up with a one-line reason.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import fc from 'fast-check';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { loadPreset } from '../src/run/config.js';
import { openServedRun, type ServedRun, type Verifier } from '../src/server/index.js';
import { scoreHere } from '../src/server/verifier.js';
import { queueVerifier } from '../src/workers/remote.js';
import { startWorker, type RunningWorker } from '../src/workers/worker.js';
import { DEAD_STREAM, STREAM, SUBJECTS, queueStats } from '../src/workers/nats.js';
import { batchHeaders, encode, encodeBatch, readBatch, readVerdicts, verdictsOf } from '../src/workers/protocol.js';
import { referenceAnswer, type Task } from '../core/task.js';
import { isCI, natsUrl } from './services.js';
import { CLI, ROOT, tempDir } from './helpers.js';

const { url, reason } = natsUrl();

/** Answers of every kind for a task: right, wrong, malformed, and hostile (a loop that never ends, a memory bomb). */
function answersFor(t: Task): string[] {
  const hostile =
    t.type === 'induction'
      ? ['(x) => { while (true) {} }', '(x) => { const a = []; while (true) a.push(new Array(1e6).fill(1)); }']
      : ['{"x": [[[[[[[[[[[[1]]]]]]]]]]]]}'];
  return [referenceAnswer(t), '"no"', 'not even json', ...hostile];
}

describe('verification workers on NATS JetStream', () => {
  if (!url) {
    // Under CI a missing server fails the run; elsewhere the tests are skipped with the reason.
    if (isCI) it('has nats-server', () => expect.fail(reason));
    else it.skip(`needs nats-server: ${reason}`, () => undefined);
    return;
  }
  let run: ServedRun;
  let tasks: Task[];
  let worker: RunningWorker;
  const heavy = loadPreset('heavy', { probes: { perArm: 1 } });
  beforeAll(async () => {
    // Tasks of the heavy preset, drawn by a served run of it (the probes of one arm each keep it quick).
    run = await openServedRun(heavy, { runsDir: tempDir('cogen-workers-'), preset: 'heavy', runId: 'w' });
    const sampled = await run.sample(10);
    tasks = await Promise.all(sampled.tasks.map(async (t) => (await run.records.task(t.id))!));
    worker = await startWorker({ nats: url!, ackWaitS: 2, concurrency: 2, sandboxWorkers: 1, log: () => undefined });
  }, 300_000);
  afterAll(async () => {
    await worker?.close();
    await run?.close();
  });

  it("give the verdicts of the replica's own sandbox, hostile answers included", async () => {
    const remote = await queueVerifier(url!, { sandbox: () => heavy.sandbox });
    try {
      const items = tasks.flatMap((task) => answersFor(task).map((completion) => ({ task, completion })));
      const [viaQueue, local] = await Promise.all([remote.score(items), scoreHere(run.sandboxHandle, items)]);
      expect(viaQueue).toEqual(local);
      expect(local.filter((v) => v.verdict.reward === 1).length).toBeGreaterThanOrEqual(tasks.length);
      expect(local.some((v) => /budget|memory|steps/i.test(v.verdict.reason ?? ''))).toBe(true);
      expect(await drained(async () => (await remote.queueStats!())!)).toMatchObject({ pending: 0, ackPending: 0 });
    } finally {
      await remote.close();
    }
  }, 120_000);

  it('refuse junk on the verify subject for good, and publish verdicts nowhere but a verdict subject', async () => {
    const nc = await connect({ servers: url! });
    const js = jetstream(nc);
    const before = (await worker.metrics.render()).match(/cogen_worker_refused_total (\d+)/)?.[1];
    const elsewhere = natsHeaders();
    elsewhere.set('Cogen-Reply', 'cogen.verify.native');
    elsewhere.set('Nats-Msg-Id', 'junk-2');
    const heard = nc.subscribe('cogen.verify.>');
    let published = 0;
    void (async () => {
      for await (const m of heard) if (m.subject !== SUBJECTS.native) published++;
    })();
    await js.publish(SUBJECTS.native, new TextEncoder().encode('{"v": 1, "batch": "x"'), {
      headers: batchHeaders('cogen.verdict.junk', 'junk-1'),
    });
    await js.publish(
      SUBJECTS.native,
      encode({ v: 2, batch: 'x', sandbox: {}, tasks: [tasks[0]], items: [{ i: 0, t: 0, completion: '1' }] }),
      { headers: elsewhere },
    );
    const deadline = Date.now() + 20_000;
    let refused = Number(before ?? 0);
    while (Date.now() < deadline) {
      refused = Number((await worker.metrics.render()).match(/cogen_worker_refused_total (\d+)/)?.[1] ?? 0);
      if (refused >= Number(before ?? 0) + 2) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(refused).toBe(Number(before ?? 0) + 2);
    const jsm = await jetstreamManager(nc);
    expect(await drained(() => queueStats(jsm))).toMatchObject({ pending: 0, ackPending: 0 });
    expect(published).toBe(0);
    heard.unsubscribe();
    await nc.close();
  }, 60_000);

  it('read any bytes and headers without throwing, and read back every batch they wrote', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 300 }),
        fc.string(),
        fc.string(),
        fc.string(),
        (data, reply, id, crashes) => {
          const h = natsHeaders();
          if (reply) h.set('Cogen-Reply', reply.replace(/[\r\n]/g, ''));
          if (id) h.set('Nats-Msg-Id', id.replace(/[\r\n]/g, ''));
          if (crashes) h.set('Cogen-Split', crashes.replace(/[\r\n]/g, ''));
          const r = readBatch(data, h);
          expect('refused' in r || 'batch' in r).toBe(true);
        },
      ),
    );
    fc.assert(
      fc.property(
        fc.array(fc.record({ k: fc.nat(tasks.length - 1), completion: fc.string() }), { minLength: 1, maxLength: 20 }),
        fc.stringMatching(/^[A-Za-z0-9_-]{1,20}$/),
        fc.boolean(),
        (picked, rid, split) => {
          const batch = {
            v: 2 as const,
            batch: `b-${rid}`,
            sandbox: heavy.sandbox,
            tasks,
            items: picked.map((p, i) => ({ i, t: p.k, completion: p.completion })),
          };
          // A replica's message (each task's text made once) is the same bytes as the batch encoded whole.
          expect(Buffer.from(encodeBatch(batch)).equals(Buffer.from(encode(batch)))).toBe(true);
          const r = readBatch(encodeBatch(batch), batchHeaders(`cogen.verdict.${rid}`, `id-${rid}`, split));
          expect(r).toEqual({
            batch: JSON.parse(JSON.stringify(batch)),
            reply: `cogen.verdict.${rid}`,
            msgId: `id-${rid}`,
            split,
          });
        },
      ),
      { numRuns: 50 },
    );
  });

  it('read verdict messages as a replica does: what a worker writes, and nothing malformed', () => {
    const verdict = fc.record({
      i: fc.nat(),
      answer: fc.string(),
      reward: fc.double({ min: 0, max: 1, noNaN: true }),
      reason: fc.option(fc.string(), { nil: null }),
      passed: fc.option(fc.nat(), { nil: undefined }),
      total: fc.option(fc.nat(), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.string(), fc.array(verdict, { maxLength: 20 }), (batch, results) => {
        const out = verdictsOf(
          batch,
          results,
          results.map((r) => ({
            answer: r.answer,
            verdict: {
              reward: r.reward,
              ...(r.reason === null ? {} : { reason: r.reason }),
              ...(r.passed === undefined ? {} : { passed: r.passed, total: r.total }),
            },
          })),
        );
        expect(readVerdicts(encode(out))).toEqual(JSON.parse(JSON.stringify(out)));
      }),
      { numRuns: 100 },
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (data) => {
        expect(() => readVerdicts(data)).not.toThrow();
      }),
    );
    const good = { v: 2, batch: 'b', results: [{ i: 0, answer: 'a', reward: 1, reason: null }] };
    const bad = [
      { ...good, v: 1 },
      { ...good, batch: 3 },
      { ...good, results: {} },
      { ...good, results: [{ ...good.results[0], i: -1 }] },
      { ...good, results: [{ ...good.results[0], i: 0.5 }] },
      { ...good, results: [{ ...good.results[0], reward: 1.5 }] },
      { ...good, results: [{ ...good.results[0], reason: 3 }] },
      { ...good, results: [{ ...good.results[0], answer: undefined }] },
      { ...good, results: [{ ...good.results[0], passed: '1' }] },
      { ...good, results: [null] },
      null,
      [],
    ];
    expect(readVerdicts(encode(good))).toEqual(good);
    for (const b of bad) expect(readVerdicts(encode(b))).toBeNull();
  });

  it('give up with one line when no worker answers in time', async () => {
    await worker.close();
    const remote: Verifier = await queueVerifier(url!, { sandbox: () => heavy.sandbox, timeoutMs: 1500 });
    try {
      await expect(remote.score([{ task: tasks[0]!, completion: referenceAnswer(tasks[0]!) }])).rejects.toThrow(
        /^no verification worker answered within 1\.5 s \(is a `cogen worker --nats nats:\/\/127\.0\.0\.1:\d+` running\?\)$/,
      );
    } finally {
      await remote.close();
    }
    // The batch nobody answered waits in the queue; a worker that comes takes it (its verdict goes unheard).
    worker = await startWorker({ nats: url!, ackWaitS: 2, concurrency: 1, sandboxWorkers: 1, log: () => undefined });
    const nc = await connect({ servers: url! });
    const jsm = await jetstreamManager(nc);
    expect(await drained(() => queueStats(jsm))).toMatchObject({ pending: 0, ackPending: 0 });
    await nc.close();
  }, 60_000);

  it('split a batch that crashed a worker, keep the rewards beside the bad answer, and dead-letter it after 3 crashes alone', async () => {
    await worker.close();
    const nc = await connect({ servers: url! });
    const jsm = await jetstreamManager(nc);
    const deadBefore = (await jsm.streams.info(DEAD_STREAM)).state.messages;
    const queuedBefore = (await jsm.streams.info(STREAM)).state.messages;
    // Two workers that die on the poisoned answer, each restarted as a supervisor would.
    const workers = [0, 1].map(() => superviseWorker(url!, { COGEN_WORKER_CRASH_ON: 'CRASH-ME' }));
    const remote = await queueVerifier(url!, { sandbox: () => heavy.sandbox, timeoutMs: 90_000 });
    try {
      const good = tasks.slice(0, 5).map((task) => ({ task, completion: referenceAnswer(task) }));
      const poisoned = { task: tasks[5]!, completion: `${referenceAnswer(tasks[5]!)} /* CRASH-ME */` };
      const items = [...good.slice(0, 2), poisoned, ...good.slice(2)];
      const verdicts = (await remote.score(items)).map((x) => x.verdict);
      expect(verdicts.map((v) => v.reward)).toEqual([1, 1, 0, 1, 1, 1]);
      expect(verdicts[2]!.reason).toMatch(/^dead-letter: this answer crashed a verification worker 3 times/);
      // One death on the whole batch (no answer blamed: it is split), then 3 on the bad answer alone:
      // never dead-lettered on fewer. On a loaded machine a worker may die on it once more than the
      // ledger needed (a batch held past the 1 s ack wait goes to a second worker as well).
      const deaths = workers.reduce((n, w) => n + w.deaths(), 0);
      expect(deaths, workers.flatMap((w) => w.lines()).join('\n')).toBeGreaterThanOrEqual(4);
      expect(deaths).toBeLessThanOrEqual(5);
      expect((await jsm.streams.info(DEAD_STREAM)).state.messages).toBe(deadBefore + 1);
      // A worker acknowledges a batch after its verdicts went out (and, alone, after closing its claim).
      expect(await drained(() => queueStats(jsm))).toMatchObject({ pending: 0, ackPending: 0 });
      expect((await jsm.streams.info(STREAM)).state.messages).toBe(queuedBefore);
    } finally {
      await remote.close();
      await Promise.all(workers.map((w) => w.stop()));
      await nc.close();
    }
  }, 180_000);

  it('never dead-letter a valid answer whose workers were killed from outside while they held it, and count every redelivery', async () => {
    await worker.close();
    const nc = await connect({ servers: url! });
    const jsm = await jetstreamManager(nc);
    const deadBefore = (await jsm.streams.info(DEAD_STREAM)).state.messages;
    // A worker that holds the answer a minute before verifying it (as behind a busy pool), restarted when it dies.
    const w = superviseWorker(url!, { COGEN_WORKER_STALL_ON: 'HOLD-ME' });
    const remote = await queueVerifier(url!, { sandbox: () => heavy.sandbox, timeoutMs: 180_000 });
    try {
      const item = { task: tasks[0]!, completion: `${referenceAnswer(tasks[0]!)} // HOLD-ME` };
      expect((await scoreHere(run.sandboxHandle, [item]))[0]!.verdict.reward).toBe(1);
      const verdict = remote.score([item]);
      const signals: NodeJS.Signals[] = ['SIGKILL', 'SIGTERM', 'SIGKILL', 'SIGTERM', 'SIGKILL'];
      let killing = true;
      const early = verdict.then((v) => {
        if (killing) throw new Error(`answered while its workers were still being killed: ${JSON.stringify(v)}`);
      });
      early.catch(() => undefined);
      for (const [k, signal] of signals.entries()) {
        await Promise.race([w.holding(), early]);
        // The last start verifies it.
        if (k === signals.length - 1) w.env = {};
        await w.kill(signal);
      }
      killing = false;
      expect((await verdict)[0]!.verdict).toMatchObject({ reward: 1 });
      expect((await jsm.streams.info(DEAD_STREAM)).state.messages).toBe(deadBefore);
      // A worker stopped with SIGTERM gave the batch back and exited cleanly.
      expect(w.exits.filter((e) => e.signal === null).map((e) => e.code)).toEqual([0, 0]);
      expect(w.lines().filter((l) => /^gave batch \S+ back to the queue \(stopping\)$/.test(l))).toHaveLength(2);
      // Redeliveries counted, and still counted once every batch is acknowledged.
      expect(await drained(() => queueStats(jsm))).toMatchObject({ pending: 0, ackPending: 0 });
      worker = await startWorker({ nats: url!, ackWaitS: 2, concurrency: 1, sandboxWorkers: 1, log: () => undefined });
      const text = await worker.metrics.render();
      const counted = Number(/^cogen_queue_redeliveries_total (\d+)$/m.exec(text)?.[1] ?? -1);
      expect(counted).toBeGreaterThanOrEqual(signals.length);
    } finally {
      await remote.close();
      await w.stop();
      await nc.close();
    }
  }, 300_000);
});

/** The queue's counts once nothing waits in it any more (or as they are after 15 s). */
async function drained(read: () => Promise<{ pending: number; ackPending: number }>) {
  const end = Date.now() + 15_000;
  let q = await read();
  while (q.pending + q.ackPending > 0 && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 100));
    q = await read();
  }
  return q;
}

/**
 * A `cogen worker` (concurrency 1, tracing the batches it takes) started again whenever it dies, as a
 * supervisor would; `env` is read at each start. Counts its deaths by SIGKILL and keeps its stderr lines.
 */
function superviseWorker(nats: string, env: Record<string, string>) {
  let child: ChildProcess | null = null;
  let stopping = false;
  let deaths = 0;
  const lines: string[][] = [];
  const exits: { code: number | null; signal: NodeJS.Signals | null }[] = [];
  const start = () => {
    const c = spawn(
      process.execPath,
      [CLI, 'worker', '--nats', nats, '--ack-wait', '1', '--port', '0', '--sandbox-workers', '1', '--concurrency', '1'],
      { cwd: ROOT, env: { ...process.env, COGEN_WORKER_TRACE: '1', ...sup.env }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const mine: string[] = [];
    lines.push(mine);
    let buf = '';
    c.stderr!.on('data', (d: Buffer) => {
      const parts = (buf + d.toString()).split('\n');
      buf = parts.pop()!;
      mine.push(...parts);
    });
    child = c;
    c.once('exit', (code, signal) => {
      exits.push({ code, signal });
      if (signal === 'SIGKILL') deaths++;
      if (!stopping) start();
    });
  };
  const sup = {
    env,
    deaths: () => deaths,
    exits,
    /** Lines of every start so far, in order. */
    lines: () => lines.flat(),
    /** Resolves once the running worker traced taking a batch. */
    async holding(): Promise<string> {
      const end = Date.now() + 60_000;
      for (;;) {
        const took = lines.at(-1)?.find((l) => l.startsWith('took batch '));
        if (took) return took.slice('took batch '.length);
        if (Date.now() > end) throw new Error('no worker took the batch within 60 s');
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    /** Sends the running worker a signal and resolves once it exited (the next start is under way). */
    kill: (signal: NodeJS.Signals) =>
      new Promise<void>((resolve) => {
        const c = child!;
        c.once('exit', () => resolve());
        c.kill(signal);
      }),
    stop: () =>
      new Promise<void>((resolve) => {
        stopping = true;
        if (!child || child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
  start();
  return sup;
}
