// A replica's verification through the queue (`cogen serve --verify nats://…`, docs/scale-out.md):
// the answers of a request go out as batch messages (at most MAX_BATCH answers each, native and
// bridged answers on their own subjects), each with a message id the queue deduplicates on, and the
// request waits for every verdict on this replica's own verdict subject. A batch that no worker
// answers in time, or a queue that cannot be reached, makes the request a 503 (VerificationUnavailable):
// nothing was recorded, and the trainer sends it again.
import { randomBytes } from 'node:crypto';
import { jetstream, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { SandboxConfig } from '../../sandbox/config.js';
import { isBridgedProblem, type Task } from '../../core/task.js';
import { VerificationUnavailable, type Scored, type Verifier } from '../server/verifier.js';
import {
  DEFAULT_ACK_WAIT_S,
  SUBJECTS,
  type Lane,
  VERDICT_PREFIX,
  connectNats,
  ensureQueue,
  queueStats,
  watchReachable,
} from './nats.js';
import { MAX_BATCH, batchHeaders, encodeBatch, readVerdicts } from './protocol.js';

export interface QueueVerifierOptions {
  /** The run's sandbox settings (read at each batch): workers verify with these. */
  sandbox: () => SandboxConfig;
  /** How long a request waits for all its verdicts before it answers 503 (ms). */
  timeoutMs?: number;
  ackWaitS?: number;
  log?: (line: string) => void;
}

/** How long a request waits for its verdicts by default: a batch of hostile answers, each run to its budget, takes seconds. */
export const DEFAULT_VERIFY_TIMEOUT_MS = 60_000;

interface Waiting {
  verdicts: (Scored | undefined)[];
  left: number;
  done: () => void;
  fail: (e: Error) => void;
}

/** A replica's end of the queue: where its batches go, the subject its verdicts come back on, the batches awaiting them. */
interface Link {
  js: JetStreamClient;
  display: string;
  reply: string;
  waiting: Map<string, Waiting>;
  sandbox: () => SandboxConfig;
  timeoutMs: number;
}

export async function queueVerifier(url: string, opts: QueueVerifierOptions): Promise<Verifier> {
  const log = opts.log ?? (() => {});
  const timeoutMs = opts.timeoutMs ?? DEFAULT_VERIFY_TIMEOUT_MS;
  const { nc, display, jsm } = await openQueue(url, opts.ackWaitS ?? DEFAULT_ACK_WAIT_S);
  const js: JetStreamClient = jetstream(nc);
  const id = randomBytes(9).toString('base64url');
  const link: Link = {
    js,
    display,
    reply: `${VERDICT_PREFIX}${id}`,
    waiting: new Map(),
    sandbox: opts.sandbox,
    timeoutMs,
  };
  let seq = 0;
  const down = watchReachable(nc, display);
  const sub = subscribeVerdicts(nc, link.reply, link.waiting, log);

  return {
    kind: 'queue',
    async score(items) {
      const reason = down();
      if (reason) throw new VerificationUnavailable(reason);
      const out: Scored[] = new Array(items.length);
      await Promise.all(
        chunks(items).map(async (idx) => {
          const verdicts = await send(
            link,
            `${id}.${seq++}`,
            idx.map((i) => items[i]!),
          );
          idx.forEach((i, k) => (out[i] = verdicts[k]!));
        }),
      );
      return out;
    },
    ping: async () =>
      down() ?? (nc.isClosed() ? `the verification queue (NATS at ${display}) connection is closed` : null),
    queueStats: () => queueStats(jsm).catch(() => null),
    async close() {
      for (const w of link.waiting.values()) w.fail(new VerificationUnavailable('the replica is stopping'));
      sub.unsubscribe();
      await nc.close().catch(() => {});
    },
  };
}

/** Connects and makes sure the queue's streams and consumers exist; a connection whose queue cannot be set up is closed. */
async function openQueue(
  url: string,
  ackWaitS: number,
): Promise<{ nc: NatsConnection; display: string; jsm: JetStreamManager }> {
  const { nc, display } = await connectNats(url, 'cogen-serve');
  try {
    return { nc, display, jsm: await ensureQueue(nc, ackWaitS) };
  } catch (e) {
    await nc.close();
    throw e;
  }
}

/** The indices of the items in batches of at most MAX_BATCH: the native answers' batches, then the bridged answers'. */
function chunks(items: { task: Task }[]): number[][] {
  const lanes = [
    items.flatMap((it, i) => (isBridgedProblem(it.task) ? [] : [i])),
    items.flatMap((it, i) => (isBridgedProblem(it.task) ? [i] : [])),
  ];
  return lanes.flatMap((idx) =>
    Array.from({ length: Math.ceil(idx.length / MAX_BATCH) }, (_, k) => idx.slice(k * MAX_BATCH, (k + 1) * MAX_BATCH)),
  );
}

/**
 * Listens on the replica's verdict subject. A callback rather than an async iterator: verdicts are taken as
 * the connection reads them, with no promise per message. The client calls it from its reader, which an
 * exception would end: none escapes.
 */
function subscribeVerdicts(
  nc: NatsConnection,
  reply: string,
  waiting: Map<string, Waiting>,
  log: (line: string) => void,
): Subscription {
  return nc.subscribe(reply, {
    callback: (err, m) => {
      if (err) return log(`verdict subscription ended: ${err.message}`);
      try {
        take(waiting, m.data);
      } catch (e) {
        log(`a verdict message could not be read: ${(e as Error).message}`);
      }
    },
  });
}

/** Fills in a waiting batch's verdicts from one verdict message; the batch is done once it has them all. */
function take(waiting: Map<string, Waiting>, data: Uint8Array): void {
  const verdicts = readVerdicts(data);
  // A verdict for a batch no request waits for any more (answered already, or timed out): dropped.
  const w = verdicts && waiting.get(verdicts.batch);
  if (!w) return;
  for (const r of verdicts.results) {
    if (r.i >= w.verdicts.length || w.verdicts[r.i] !== undefined) continue;
    w.verdicts[r.i] = {
      answer: r.answer,
      verdict: {
        reward: r.reward,
        ...(r.reason === null ? {} : { reason: r.reason }),
        ...(r.passed === undefined ? {} : { passed: r.passed, total: r.total }),
      },
    };
    w.left--;
  }
  if (w.left === 0) w.done();
}

/** Publishes one batch (each task once) and resolves with its results (by index within the batch). */
async function send(link: Link, batch: string, items: { task: Task; completion: string }[]): Promise<Scored[]> {
  const lane = isBridgedProblem(items[0]!.task) ? 'bridged' : 'native';
  const w: Waiting = {
    verdicts: new Array(items.length).fill(undefined),
    left: items.length,
    done: () => {},
    fail: () => {},
  };
  const answered = new Promise<void>((resolve, reject) => Object.assign(w, { done: resolve, fail: reject }));
  link.waiting.set(batch, w);
  let timer: NodeJS.Timeout | undefined;
  try {
    await publish(link, lane, batch, items);
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new VerificationUnavailable(
              `no verification worker answered within ${link.timeoutMs / 1000} s (is a \`cogen worker --nats ${link.display}\` running?)`,
            ),
          ),
        link.timeoutMs,
      );
    });
    await Promise.race([answered, late]);
    return w.verdicts as Scored[];
  } finally {
    clearTimeout(timer);
    link.waiting.delete(batch);
  }
}

/** Puts a batch on its lane's subject, its id the message id the queue deduplicates on; a queue that does not take it is a VerificationUnavailable. */
async function publish(
  link: Link,
  lane: Lane,
  batch: string,
  items: { task: Task; completion: string }[],
): Promise<void> {
  const tasks: Task[] = [];
  const at = new Map<string, number>();
  const refs = items.map((it, i) => {
    let t = at.get(it.task.id);
    if (t === undefined) at.set(it.task.id, (t = tasks.push(it.task) - 1));
    return { i, t, completion: it.completion };
  });
  await link.js
    .publish(SUBJECTS[lane], encodeBatch({ v: 2, batch, sandbox: link.sandbox(), tasks, items: refs }), {
      msgID: batch,
      headers: batchHeaders(link.reply, batch),
      timeout: 5000,
    })
    .catch((e: Error) => {
      throw new VerificationUnavailable(
        `the verification queue (NATS at ${link.display}) did not take the batch: ${e.message.split('\n')[0]}`,
      );
    });
}
