// What travels on the verification queue (docs/scale-out.md). A batch message carries answers to
// verify, each with its task (the task's budget of interpreter steps with it, so an answer verified
// by a worker has the budget it would have had in the replica) and the run's sandbox settings; its
// headers name the replica's verdict subject, the batch's message id (the queue's dedup key) and,
// for an answer split out of a batch that crashed a worker, the crashes it inherits. A worker
// answers with verdicts on the verdict subject, one per answer, by index.
import { headers as natsHeaders, type MsgHdrs } from '@nats-io/nats-core';
import { z } from 'zod';
import { TaskSchema } from '../server/schemas.js';
import type { DetailedVerdict } from '../../sandbox/index.js';
import { sandboxConfigSchema, type SandboxConfig } from '../../sandbox/config.js';
import type { Task } from '../../core/task.js';
import { VERDICT_PREFIX } from './nats.js';

/** An answer that crashed a worker this many times goes to the dead-letter subject and scores 0. */
export const MAX_CRASHES = 3;
/** Most answers in one batch message. */
export const MAX_BATCH = 256;

export const HEADER = { reply: 'Cogen-Reply', crashes: 'Cogen-Crashes', msgId: 'Nats-Msg-Id' } as const;

const ItemSchema = z.object({ i: z.number().int().nonnegative(), task: TaskSchema, answer: z.string() });

export const BatchSchema = z.object({
  v: z.literal(1),
  batch: z.string().min(1).max(200),
  sandbox: sandboxConfigSchema,
  items: z.array(ItemSchema).min(1).max(MAX_BATCH),
});
export type Batch = Omit<z.infer<typeof BatchSchema>, 'items' | 'sandbox'> & { sandbox: SandboxConfig; items: { i: number; task: Task; answer: string }[] };

const VerdictSchema = z.object({ i: z.number().int().nonnegative(), reward: z.number().min(0).max(1), reason: z.string().nullable(), passed: z.number().optional(), total: z.number().optional() });
export const VerdictsSchema = z.object({ v: z.literal(1), batch: z.string(), results: z.array(VerdictSchema) });
export type Verdicts = z.infer<typeof VerdictsSchema>;

/** A verdict subject: the prefix and one token of safe characters (a worker publishes nowhere else). */
const REPLY = new RegExp(`^${VERDICT_PREFIX.replace(/\./g, '\\.')}[A-Za-z0-9_-]{1,64}$`);

export function batchHeaders(reply: string, msgId: string, crashes = 0): MsgHdrs {
  const h = natsHeaders();
  h.set(HEADER.reply, reply);
  h.set(HEADER.msgId, msgId);
  if (crashes > 0) h.set(HEADER.crashes, String(crashes));
  return h;
}

/** A delivered batch message, checked: the batch, where its verdicts go, and the crashes it inherits; or a one-line reason it is refused. */
export function readBatch(data: Uint8Array, h: MsgHdrs | undefined): { batch: Batch; reply: string; msgId: string; inherited: number } | { refused: string } {
  const reply = h?.get(HEADER.reply) ?? '';
  if (!REPLY.test(reply)) return { refused: `no verdict subject of the form ${VERDICT_PREFIX}<id> (got ${JSON.stringify(reply.slice(0, 80))})` };
  const msgId = h?.get(HEADER.msgId) ?? '';
  if (!msgId) return { refused: 'no message id' };
  const inherited = Number(h?.get(HEADER.crashes) || 0);
  if (!Number.isInteger(inherited) || inherited < 0) return { refused: `bad ${HEADER.crashes} header` };
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder().decode(data));
  } catch {
    return { refused: 'the batch is not JSON' };
  }
  const r = BatchSchema.safeParse(raw);
  if (!r.success) return { refused: `the batch is malformed: ${r.error.issues[0]!.path.join('.') || '(body)'}: ${r.error.issues[0]!.message}` };
  return { batch: r.data as unknown as Batch, reply, msgId, inherited };
}

export function verdictsOf(batch: string, items: { i: number }[], verdicts: DetailedVerdict[]): Verdicts {
  return {
    v: 1,
    batch,
    results: items.map((it, k) => {
      const v = verdicts[k]!;
      return { i: it.i, reward: v.reward, reason: v.reason ?? null, ...(v.passed === undefined ? {} : { passed: v.passed, total: v.total }) };
    }),
  };
}

export const encode = (x: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(x));
