// A verification worker (`cogen worker --nats nats://…`, docs/scale-out.md): stateless, it pulls
// batches from the queue's durable consumers, verifies them in its own sandbox pool with the run's
// settings and each task's budget, answers with verdicts on the batch's verdict subject, and only
// then acknowledges the batch. While it holds a batch it tells the queue it is still working
// (in-progress acks), so a batch is delivered again only when its worker died or stalled, AckWait
// after its last sign of life. A batch of several answers delivered again is split and every answer
// retried alone, so the answers beside a bad one keep their rewards; an answer that crashed
// MAX_CRASHES workers while they verified it alone (blame.ts) goes to the dead-letter subject and
// scores 0 with a reason. A worker that is stopped (SIGTERM) finishes what it verifies and gives back
// what it only holds, without blame.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstream, type JetStreamManager, type JsMsg } from '@nats-io/jetstream';
import { bridgeReady, notSetUpLine } from '../../bridges/index.js';
import { createSandbox, type Sandbox } from '../../sandbox/index.js';
import type { SandboxConfig } from '../../sandbox/config.js';
import type { Task } from '../../core/task.js';
import { scoreHere, type Scored } from '../server/verifier.js';
import { STREAM, SUBJECTS, connectNats, ensureQueue, watchReachable, type Lane } from './nats.js';
import { BlameLedger } from './blame.js';
import { Turns } from './turns.js';
import {
  MAX_CRASHES,
  batchHeaders,
  encode,
  readBatch,
  single,
  verdictsOf,
  type Batch,
  type Verdicts,
} from './protocol.js';
import { createWorkerMetrics, type WorkerMetrics } from './worker-metrics.js';

export interface WorkerOptions {
  nats: string;
  ackWaitS: number;
  /** Batches verified at once (the sandbox pool runs their answers in parallel). */
  concurrency: number;
  /** Threads of each sandbox pool (default: one per core). */
  sandboxWorkers?: number;
  log: (line: string) => void;
  /** Fault injection for tests and the chaos bench: the process kills itself (SIGKILL) on a batch with an answer containing this text. */
  crashOn?: string;
  /** Fault injection for tests: the worker holds a batch with an answer containing this text for a minute before its turn (as if its pool were busy). */
  stallOn?: string;
  /** Log a line when a batch is taken and when it is answered (the chaos bench follows batches by these). */
  trace?: boolean;
}

export interface RunningWorker {
  lanes: Lane[];
  display: string;
  metrics: WorkerMetrics;
  jsm: JetStreamManager;
  /** null while the queue can be reached, else why not. */
  unavailable(): string | null;
  close(): Promise<void>;
}

/** Verdicts of batches this worker answered, by message id: a redelivery of one whose ack was lost is answered again, not verified again. */
class Answered {
  private readonly map = new Map<string, Verdicts>();
  constructor(private readonly size: number) {}
  get(id: string): Verdicts | undefined {
    return this.map.get(id);
  }
  set(id: string, v: Verdicts): void {
    this.map.set(id, v);
    if (this.map.size > this.size) this.map.delete(this.map.keys().next().value!);
  }
}

export async function startWorker(opts: WorkerOptions): Promise<RunningWorker> {
  const { nc, display } = await connectNats(opts.nats, 'cogen-worker');
  let jsm: JetStreamManager;
  let ledger: BlameLedger;
  try {
    jsm = await ensureQueue(nc, opts.ackWaitS);
    ledger = await BlameLedger.open(nc, `${hostname()}/${process.pid}/${randomBytes(4).toString('hex')}`);
  } catch (e) {
    await nc.close();
    throw e;
  }
  const lanes: Lane[] = ['native'];
  if (bridgeReady()) lanes.push('bridged');
  else opts.log(`this worker takes no bridged rg.* batches: ${notSetUpLine()}`);
  const metrics = createWorkerMetrics(jsm);
  const stop = new AbortController();
  const handler = new BatchHandler(nc, opts, metrics, ledger, stop.signal);
  const down = watchReachable(nc, display);
  const js = jetstream(nc);
  const pull = async (lane: Lane): Promise<void> => {
    const consumer = await js.consumers.get(STREAM, lane);
    let quiet = false;
    while (!stop.signal.aborted) {
      let m: JsMsg | null;
      try {
        m = await consumer.next({ expires: 1000 });
        quiet = false;
      } catch (e) {
        if (!quiet && !stop.signal.aborted)
          opts.log(`pulling from ${lane}: ${(e as Error).message.split('\n')[0]} (retrying)`);
        quiet = true;
        await new Promise((r) => setTimeout(r, 250));
        continue;
      }
      if (!m) continue;
      metrics.inFlight.inc();
      await handler.handle(m).catch((e: Error) => opts.log(`batch on ${m!.subject}: ${e.message.split('\n')[0]}`));
      metrics.inFlight.dec();
    }
  };
  const loops = lanes.flatMap((lane) =>
    Array.from({ length: lane === 'native' ? opts.concurrency : 1 }, () => pull(lane)),
  );
  return {
    lanes,
    display,
    metrics,
    jsm,
    unavailable: down,
    async close() {
      // Batches waiting for their turn go back to the queue; those being verified finish.
      stop.abort(new Error('the worker is stopping'));
      await Promise.allSettled(loops);
      await handler.close();
      await nc.drain().catch(() => {});
    },
  };
}

class BatchHandler {
  private readonly answered = new Answered(4096);
  private readonly sandboxes = new Map<string, Promise<Sandbox>>();
  private readonly turns = new Turns();
  private readonly js;

  constructor(
    private readonly nc: NatsConnection,
    private readonly opts: WorkerOptions,
    private readonly metrics: WorkerMetrics,
    private readonly ledger: BlameLedger,
    private readonly stopping: AbortSignal,
  ) {
    this.js = jetstream(nc);
  }

  async handle(m: JsMsg): Promise<void> {
    const read = readBatch(m.data, m.headers);
    if ('refused' in read) {
      // Never delivered again: no worker could do more with it. (No reason with +TERM: servers before 2.10 ignore such an ack.)
      this.metrics.refused.inc();
      this.opts.log(`refused a message on ${m.subject}: ${read.refused}`);
      m.term();
      return;
    }
    const { batch, reply, msgId, split } = read;
    const deliveries = m.info.deliveryCount;
    if (deliveries > 1) {
      this.metrics.redeliveries.inc();
      this.opts.log(
        `batch ${msgId} delivered again (delivery ${deliveries}): the worker that had it died, stalled or stopped`,
      );
    }
    const known = this.answered.get(msgId);
    if (known) {
      // Verified here already; only the acknowledgement was lost.
      this.nc.publish(reply, encode(known));
      await this.done(m, msgId);
      return;
    }
    if (this.opts.trace) this.opts.log(`took batch ${msgId}`);
    if (deliveries > 1 && batch.items.length > 1) return this.split(m, batch, reply, msgId);
    // Signs of life for as long as it holds the batch: waiting for its turn, or verifying.
    const alive = setInterval(() => m.working(), Math.max(200, (this.opts.ackWaitS * 1000) / 3));
    try {
      await this.take(m, batch, reply, msgId, split || deliveries > 1);
    } catch (e) {
      if (!this.stopping.aborted) throw e;
      // Stopped before its turn: back to the queue at once, with no claim on it, so without blame.
      m.nak();
      this.opts.log(`gave batch ${msgId} back to the queue (stopping)`);
    } finally {
      clearInterval(alive);
    }
  }

  /** Waits for its turn (alone for an answer under suspicion, which the ledger then claims), and verifies. */
  private async take(m: JsMsg, batch: Batch, reply: string, msgId: string, suspect: boolean): Promise<void> {
    const alone = suspect && batch.items.length === 1;
    if (this.opts.stallOn && batch.items.some((it) => it.completion.includes(this.opts.stallOn!)))
      await abortableSleep(60_000, this.stopping);
    const end = await this.turns.take(alone, this.stopping);
    try {
      if (!alone) return await this.verify(m, batch, reply, msgId);
      const crashes = await this.ledger.claim(msgId, MAX_CRASHES);
      if (crashes >= MAX_CRASHES) return await this.deadLetter(m, batch, reply, msgId, crashes);
      await this.verify(m, batch, reply, msgId, () => this.ledger.close(msgId));
    } finally {
      end();
    }
  }

  /** Acknowledges a batch whose verdicts went out (or that went back to the queue split); traced first, so a traced batch not yet answered was never acknowledged. */
  private async done(m: JsMsg, msgId: string): Promise<void> {
    if (this.opts.trace) this.opts.log(`answered batch ${msgId}`);
    await m.ackAck();
  }

  /** A batch whose worker died or stopped: every answer goes back to the queue alone, under suspicion. */
  private async split(m: JsMsg, batch: Batch, reply: string, msgId: string): Promise<void> {
    for (const item of batch.items) {
      const id = `${msgId}/${item.i}`;
      // Its message id makes a second split of the same batch (this worker dying half-way) a no-op.
      await this.js.publish(m.subject, encode(single(batch, item)), {
        msgID: id,
        headers: batchHeaders(reply, id, true),
      });
    }
    this.metrics.splits.inc();
    this.opts.log(`batch ${msgId} lost its worker: split into ${batch.items.length} answers, each verified alone`);
    await this.done(m, msgId);
  }

  private async deadLetter(m: JsMsg, batch: Batch, reply: string, msgId: string, crashes: number): Promise<void> {
    const reason = `dead-letter: this answer crashed a verification worker ${crashes} times (subject ${SUBJECTS.dead})`;
    await this.js.publish(SUBJECTS.dead, encode({ ...batch, reason }), { msgID: `dead/${msgId}` });
    const out = verdictsOf(
      batch.batch,
      batch.items,
      batch.items.map(() => ({ answer: '', verdict: { reward: 0, reason } })),
    );
    this.answered.set(msgId, out);
    this.nc.publish(reply, encode(out));
    this.metrics.deadLetters.inc();
    this.opts.log(`answer ${msgId} crashed ${crashes} workers verifying it alone: sent to ${SUBJECTS.dead}, scored 0`);
    await this.done(m, msgId);
  }

  /** Verifies, publishes the verdicts, runs `after` (the claim closed), and only then acknowledges. */
  private async verify(
    m: JsMsg,
    batch: Batch,
    reply: string,
    msgId: string,
    after?: () => Promise<void>,
  ): Promise<void> {
    const t0 = performance.now();
    if (this.opts.crashOn && batch.items.some((it) => it.completion.includes(this.opts.crashOn!)))
      process.kill(process.pid, 'SIGKILL');
    const sandbox = await this.sandboxFor(batch.sandbox);
    const scored = await scoreSafely(
      sandbox,
      batch.items.map((it) => ({ task: batch.tasks[it.t]!, completion: it.completion })),
    );
    const out = verdictsOf(batch.batch, batch.items, scored);
    this.answered.set(msgId, out);
    this.nc.publish(reply, encode(out));
    this.metrics.answered(batch.items.length, (performance.now() - t0) / 1000);
    await after?.();
    await this.done(m, msgId);
  }

  /** One sandbox pool per distinct sandbox setting (a run has one), made on first use. */
  private sandboxFor(cfg: SandboxConfig): Promise<Sandbox> {
    const key = JSON.stringify([cfg.timeoutMs, cfg.memoryBytes, cfg.budget]);
    let s = this.sandboxes.get(key);
    if (!s) {
      s = createSandbox({
        workers: this.opts.sandboxWorkers,
        limits: { timeoutMs: cfg.timeoutMs, memoryBytes: cfg.memoryBytes },
        budget: cfg.budget,
      });
      this.sandboxes.set(key, s);
    }
    return s;
  }

  async close(): Promise<void> {
    await Promise.all([...this.sandboxes.values()].map(async (s) => (await s).close().catch(() => {})));
  }
}

/** Waits `ms`, or rejects once `signal` aborts. */
const abortableSleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason as Error)), { once: true });
  });

/** Results in order; a completion whose verification throws (not a crash: an error) scores 0 with the error as its reason. */
async function scoreSafely(sandbox: Sandbox, items: { task: Task; completion: string }[]): Promise<Scored[]> {
  try {
    return await scoreHere(sandbox, items);
  } catch {
    return Promise.all(
      items.map((it) =>
        scoreHere(sandbox, [it]).then(
          (v) => v[0]!,
          (e: Error) => ({
            answer: '',
            verdict: { reward: 0, reason: `verification failed: ${e.message.split('\n')[0]}` },
          }),
        ),
      ),
    );
  }
}
