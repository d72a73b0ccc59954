// Who checks a served run's answers: its own sandbox pool (the default), or verification workers
// behind a NATS JetStream queue (`--verify nats://…`, src/workers/). A verifier takes completions
// and extracts their answers itself (answerOf), so that with workers the coordinator's main thread
// does neither the extraction nor the verification. Results come in the order of the items.
import type { DetailedVerdict, Sandbox } from '../../sandbox/index.js';
import type { Task } from '../../core/task.js';
import { answerOf, verifyTasks } from '../run/index.js';

/** Verification cannot be had now (the queue is away, or no worker answered in time): a 503, retried. */
export class VerificationUnavailable extends Error {}

export interface QueueStats {
  /** Batches waiting in the queue, and batches delivered but not yet acknowledged. */
  pending: number;
  ackPending: number;
  /** Deliveries of batches after their first (a worker died, stalled or stopped with them), since the queue was made. */
  redelivered: number;
}

/** One completion's answer (as extracted from it) and its verdict. */
export interface Scored {
  answer: string;
  verdict: DetailedVerdict;
}

export interface Verifier {
  readonly kind: 'local' | 'queue';
  score(items: { task: Task; completion: string }[]): Promise<Scored[]>;
  /** null when verification can be had now, else a one-line reason. */
  ping(): Promise<string | null>;
  /** The queue's depth and redeliveries (a queue verifier only). */
  queueStats?(): Promise<QueueStats | null>;
  close(): Promise<void>;
}

/** Answers extracted and verified in this process (the sandbox pool; bridged problems in the Reasoning Gym bridge). */
export async function scoreHere(sandbox: Sandbox, items: { task: Task; completion: string }[]): Promise<Scored[]> {
  const answers = items.map((it) => answerOf(it.completion, it.task));
  const verdicts = await verifyTasks(
    sandbox,
    items.map((it, i) => ({ task: it.task, answer: answers[i]! })),
  );
  return verdicts.map((verdict, i) => ({ answer: answers[i]!, verdict }));
}

export const localVerifier = (sandbox: Sandbox): Verifier => ({
  kind: 'local',
  score: (items) => scoreHere(sandbox, items),
  ping: async () => null,
  close: async () => {},
});
