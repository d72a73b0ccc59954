// The NATS JetStream side of verification workers (docs/scale-out.md): how to connect (credentials
// from the environment only), and the queue itself: one work-queue stream of verification batches
// with a subject for native answers and one for bridged (rg.*) answers, a durable pull consumer on
// each that every worker shares (explicit ack, AckWait in seconds), the dead-letter stream, and the
// duplicate window in which a batch's message id makes a second publish of it a no-op.
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, RetentionPolicy, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { UserError } from '../../core/errors.js';

export const STREAM = 'COGEN_VERIFY';
export const DEAD_STREAM = 'COGEN_VERIFY_DEAD';
export const SUBJECTS = {
  native: 'cogen.verify.native',
  bridged: 'cogen.verify.bridged',
  dead: 'cogen.verify.dead',
} as const;
export type Lane = 'native' | 'bridged';
/** Where a replica hears its verdicts: one subject per replica (the batch id says which request). */
export const VERDICT_PREFIX = 'cogen.verdict.';
/** AckWait when none is given: a killed worker's batch is delivered again this long after its last sign of life. */
export const DEFAULT_ACK_WAIT_S = 2;
const ns = (s: number): number => Math.round(s * 1e9);

/** Connection options for a nats:// URL; credentials come from NATS_TOKEN or NATS_USER and NATS_PASSWORD, never from the URL. */
export function natsTarget(url: string): {
  servers: string;
  display: string;
  token?: string;
  user?: string;
  pass?: string;
} {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new UserError('expected a NATS URL: nats://host[:port]');
  }
  if (u.protocol !== 'nats:' && u.protocol !== 'tls:')
    throw new UserError(`expected a nats:// URL, got ${u.protocol}//…`);
  if (u.username || u.password)
    throw new UserError(
      'the NATS URL carries credentials; set NATS_TOKEN, or NATS_USER and NATS_PASSWORD, in the environment instead (a command line shows in process lists)',
    );
  const servers = `${u.hostname}:${u.port || 4222}`;
  const env = process.env;
  return {
    servers,
    display: `nats://${servers}`,
    ...(env.NATS_TOKEN ? { token: env.NATS_TOKEN } : {}),
    ...(env.NATS_USER ? { user: env.NATS_USER, pass: env.NATS_PASSWORD ?? '' } : {}),
  };
}

/** Connects, retrying for ever once connected (a NATS restart is ridden out); the first connect fails with one line. */
export async function connectNats(url: string, name: string): Promise<{ nc: NatsConnection; display: string }> {
  const { display, ...opts } = natsTarget(url);
  try {
    // noAsyncTraces: no stack captured for every request (each JetStream publish is one); errors keep their messages.
    const nc = await connect({
      ...opts,
      name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      timeout: 5000,
      pingInterval: 5000,
      noAsyncTraces: true,
    });
    return { nc, display };
  } catch (e) {
    throw new UserError(
      `cannot reach the verification queue (NATS at ${display}): ${(e as Error).message.split('\n')[0]}`,
    );
  }
}

/** Follows the connection's status: the one-line reason the queue is unreachable while it is, else null. */
export function watchReachable(nc: NatsConnection, display: string): () => string | null {
  let down: string | null = null;
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect') down = `the verification queue (NATS at ${display}) is unreachable`;
      else if (s.type === 'reconnect') down = null;
    }
  })().catch(() => {});
  return () => down;
}

/** Creates the streams and the two durable consumers when they are missing, and sets the consumers' AckWait. */
export async function ensureQueue(nc: NatsConnection, ackWaitS: number): Promise<JetStreamManager> {
  let jsm: JetStreamManager;
  try {
    jsm = await jetstreamManager(nc);
  } catch (e) {
    throw new UserError(
      `the NATS server has no JetStream (start it with -js, or give its config a jetstream block: docs/scale-out.md): ${(e as Error).message.split('\n')[0]}`,
    );
  }
  const has = async (f: () => Promise<unknown>) =>
    f().then(
      () => true,
      () => false,
    );
  if (!(await has(() => jsm.streams.info(STREAM)))) {
    // A batch nobody verified within 10 minutes is dropped: its request answered 503 long before.
    await jsm.streams.add({
      name: STREAM,
      subjects: [SUBJECTS.native, SUBJECTS.bridged],
      retention: RetentionPolicy.Workqueue,
      duplicate_window: ns(120),
      max_age: ns(600),
    });
  }
  if (!(await has(() => jsm.streams.info(DEAD_STREAM)))) {
    await jsm.streams.add({
      name: DEAD_STREAM,
      subjects: [SUBJECTS.dead],
      retention: RetentionPolicy.Limits,
      max_age: ns(7 * 24 * 3600),
      max_msgs: 100_000,
    });
  }
  for (const lane of ['native', 'bridged'] as const) {
    const config = {
      durable_name: lane,
      filter_subject: SUBJECTS[lane],
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: ns(ackWaitS),
      max_deliver: -1,
      max_ack_pending: 10_000,
    };
    if (!(await has(() => jsm.consumers.info(STREAM, lane)))) await jsm.consumers.add(STREAM, config);
    else await jsm.consumers.update(STREAM, lane, { ack_wait: config.ack_wait });
  }
  return jsm;
}

/**
 * The queue's depth over both lanes, and its redeliveries since the stream was made: every delivery
 * (the consumers' sequences) less the batches delivered at least once (every batch the stream took,
 * less those never delivered yet). JetStream's own `num_redelivered` counts only redelivered batches
 * not yet acknowledged, so it falls back to 0. The consumers are read before the stream, so a batch
 * published in between makes the count low by one for a moment, never high.
 */
export async function queueStats(
  jsm: JetStreamManager,
): Promise<{ pending: number; ackPending: number; redelivered: number }> {
  const out = { pending: 0, ackPending: 0, redelivered: 0 };
  let deliveries = 0;
  for (const lane of ['native', 'bridged'] as const) {
    const ci = await jsm.consumers.info(STREAM, lane);
    out.pending += ci.num_pending;
    out.ackPending += ci.num_ack_pending;
    deliveries += ci.delivered.consumer_seq;
  }
  const taken = (await jsm.streams.info(STREAM)).state.last_seq;
  out.redelivered = Math.max(0, deliveries - (taken - out.pending));
  return out;
}
