// Which answer is to blame for a worker's death (docs/scale-out.md, "Verification workers"). Workers
// die for reasons of their own (an operator, the OOM killer, a preemption, a deploy), so a batch
// delivered again says only that the worker holding it died or stalled, not that the batch killed
// it. A batch of several answers is split and every answer retried alone; an answer counts as
// having crashed a worker only when a worker died while verifying that answer alone. Before it
// starts, the worker writes an open claim on the answer in a JetStream key-value bucket, and closes
// it once the verdict is out: the next delivery of the answer finds the claim of a worker that died
// on it still open. A worker killed while it only held the answer (waiting for its turn), or
// stopped with SIGTERM (it gives its batches back), left no open claim.
import { createHash } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import { Kvm, type KV } from '@nats-io/kv';
import { UserError } from '../../core/errors.js';

export const BLAME_BUCKET = 'COGEN_VERIFY_BLAME';
/** How long the ledger remembers an answer: as long as the queue keeps a batch. */
const KEEP_MS = 600_000;

interface Claim {
  /** Workers that died verifying this answer alone. */
  crashes: number;
  /** The worker verifying it alone now (or that died doing so), null once its verdict is out. */
  open: string | null;
}

export class BlameLedger {
  private constructor(
    private readonly kv: KV,
    private readonly me: string,
  ) {}

  static async open(nc: NatsConnection, me: string): Promise<BlameLedger> {
    try {
      return new BlameLedger(await new Kvm(nc).create(BLAME_BUCKET, { history: 1, ttl: KEEP_MS }), me);
    } catch (e) {
      throw new UserError(
        `cannot open the key-value bucket ${BLAME_BUCKET} on the NATS server: ${(e as Error).message.split('\n')[0]}`,
      );
    }
  }

  /**
   * The crashes an answer caused so far, a claim left open by a worker that died on it counted;
   * below `max`, the answer is claimed for this worker (compare-and-set: a concurrent claim retries).
   */
  async claim(msgId: string, max: number): Promise<number> {
    const key = keyOf(msgId);
    for (let attempt = 0; ; attempt++) {
      const e = await this.kv.get(key);
      const prev: Claim = e?.operation === 'PUT' ? e.json<Claim>() : { crashes: 0, open: null };
      // A claim of this worker's own (its verdict out, the claim not closed: NATS was away) is no death.
      const crashes = prev.crashes + (prev.open === null || prev.open === this.me ? 0 : 1);
      const next = JSON.stringify({ crashes, open: crashes >= max ? null : this.me } satisfies Claim);
      try {
        if (e?.operation === 'PUT') await this.kv.update(key, next, e.revision);
        else await this.kv.create(key, next);
        return crashes;
      } catch (err) {
        if (attempt >= 4) throw err;
      }
    }
  }

  /** The verdict is out: the claim is closed, the crashes kept. */
  async close(msgId: string): Promise<void> {
    const key = keyOf(msgId);
    const e = await this.kv.get(key);
    if (e?.operation !== 'PUT') return;
    const prev = e.json<Claim>();
    await this.kv.put(key, JSON.stringify({ crashes: prev.crashes, open: null } satisfies Claim));
  }
}

/** A message id as a key (ids carry characters a key may not). */
const keyOf = (msgId: string): string => createHash('sha256').update(msgId).digest('hex').slice(0, 40);
