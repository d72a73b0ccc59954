// Who checks a served run's answers: its own sandbox pool (the default), or verification workers
// behind a NATS JetStream queue (`--verify nats://…`, src/workers/). The served run only asks for
// verdicts in the order of the items.
import type { DetailedVerdict, Sandbox } from '../../sandbox/index.js';
import type { Task } from '../../core/task.js';
import { verifyTasks } from '../verification.js';

/** Verification cannot be had now (the queue is away, or no worker answered in time): a 503, retried. */
export class VerificationUnavailable extends Error {}

export interface QueueStats {
  /** Batches waiting in the queue, and batches delivered but not yet acknowledged. */
  pending: number;
  ackPending: number;
  /** Deliveries of a batch after its first (a worker died or stalled with it). */
  redelivered: number;
}

export interface Verifier {
  readonly kind: 'local' | 'queue';
  verify(items: { task: Task; answer: string }[]): Promise<DetailedVerdict[]>;
  /** null when verification can be had now, else a one-line reason. */
  ping(): Promise<string | null>;
  /** The queue's depth and redeliveries (a queue verifier only). */
  queueStats?(): Promise<QueueStats | null>;
  close(): Promise<void>;
}

/** Verification in this process's sandbox pool (bridged problems in the Reasoning Gym bridge). */
export const localVerifier = (sandbox: Sandbox): Verifier => ({
  kind: 'local',
  verify: (items) => verifyTasks(sandbox, items),
  ping: async () => null,
  close: async () => {},
});
