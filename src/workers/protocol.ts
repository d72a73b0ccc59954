// What travels on the verification queue (docs/scale-out.md). A batch message carries completions
// to verify and the tasks they answer, each task once (with its budget of interpreter steps, so an
// answer verified by a worker has the budget it would have had in the replica), and the run's sandbox
// settings; its headers name the replica's verdict subject, the batch's message id (the queue's
// dedup key) and whether it is a completion split out of a batch whose worker died (it is then
// verified alone, workers/blame.ts). A worker extracts each answer, verifies it, and answers on the
// verdict subject with one result per completion, by index: the answer it extracted and its verdict.
import { headers as natsHeaders, type MsgHdrs } from '@nats-io/nats-core';
import { z } from 'zod';
import { TaskSchema } from '../server/schemas.js';
import type { DetailedVerdict } from '../../sandbox/index.js';
import { sandboxConfigSchema, type SandboxConfig } from '../../sandbox/config.js';
import type { Task } from '../../core/task.js';
import { VERDICT_PREFIX } from './nats.js';

/** An answer that crashed this many workers verifying it alone goes to the dead-letter subject and scores 0. */
export const MAX_CRASHES = 3;
/** Most answers in one batch message. */
export const MAX_BATCH = 256;

export const HEADER = { reply: 'Cogen-Reply', split: 'Cogen-Split', msgId: 'Nats-Msg-Id' } as const;

const ItemSchema = z.object({
  i: z.number().int().nonnegative(),
  t: z.number().int().nonnegative(),
  completion: z.string(),
});

export const BatchSchema = z
  .object({
    v: z.literal(2),
    batch: z.string().min(1).max(200),
    sandbox: sandboxConfigSchema,
    tasks: z.array(TaskSchema).min(1).max(MAX_BATCH),
    items: z.array(ItemSchema).min(1).max(MAX_BATCH),
  })
  .refine((b) => b.items.every((it) => it.t < b.tasks.length), {
    message: 'an item names a task the batch does not carry',
    path: ['items'],
  });
export interface BatchItem {
  i: number;
  t: number;
  completion: string;
}
export interface Batch {
  v: 2;
  batch: string;
  sandbox: SandboxConfig;
  tasks: Task[];
  items: BatchItem[];
}

/** A batch of one of its items (split out of it), carrying only that item's task. */
export const single = (b: Batch, item: BatchItem): Batch => ({
  ...b,
  tasks: [b.tasks[item.t]!],
  items: [{ ...item, t: 0 }],
});

export interface Verdict {
  i: number;
  answer: string;
  reward: number;
  reason: string | null;
  passed?: number;
  total?: number;
}
export interface Verdicts {
  v: 2;
  batch: string;
  results: Verdict[];
}

const isVerdict = (r: unknown): r is Verdict => {
  if (typeof r !== 'object' || r === null) return false;
  const x = r as Record<string, unknown>;
  return (
    Number.isInteger(x.i) &&
    (x.i as number) >= 0 &&
    typeof x.answer === 'string' &&
    typeof x.reward === 'number' &&
    x.reward >= 0 &&
    x.reward <= 1 &&
    (x.reason === null || typeof x.reason === 'string') &&
    (x.passed === undefined || typeof x.passed === 'number') &&
    (x.total === undefined || typeof x.total === 'number')
  );
};

/**
 * A verdict message as a replica reads it, or null when it is not one (dropped). Checked by hand
 * rather than with a zod schema: a replica reads one per batch on its main thread (docs/scale-out.md,
 * "Where the coordinator's main thread goes").
 */
export function readVerdicts(data: Uint8Array): Verdicts | null {
  let raw: unknown;
  try {
    raw = JSON.parse(DECODER.decode(data));
  } catch {
    return null;
  }
  const x = raw as Partial<Verdicts> | null;
  if (
    typeof x !== 'object' ||
    x === null ||
    x.v !== 2 ||
    typeof x.batch !== 'string' ||
    !Array.isArray(x.results) ||
    !x.results.every(isVerdict)
  )
    return null;
  return x as Verdicts;
}

/** A verdict subject: the prefix and one token of safe characters (a worker publishes nowhere else). */
const REPLY = new RegExp(`^${VERDICT_PREFIX.replace(/\./g, '\\.')}[A-Za-z0-9_-]{1,64}$`);

export function batchHeaders(reply: string, msgId: string, split = false): MsgHdrs {
  const h = natsHeaders();
  h.set(HEADER.reply, reply);
  h.set(HEADER.msgId, msgId);
  if (split) h.set(HEADER.split, '1');
  return h;
}

/** A delivered batch message, checked: the batch, where its verdicts go, and whether it was split out of a batch whose worker died; or a one-line reason it is refused. */
export function readBatch(
  data: Uint8Array,
  h: MsgHdrs | undefined,
): { batch: Batch; reply: string; msgId: string; split: boolean } | { refused: string } {
  const reply = h?.get(HEADER.reply) ?? '';
  if (!REPLY.test(reply))
    return {
      refused: `no verdict subject of the form ${VERDICT_PREFIX}<id> (got ${JSON.stringify(reply.slice(0, 80))})`,
    };
  const msgId = h?.get(HEADER.msgId) ?? '';
  if (!msgId) return { refused: 'no message id' };
  const split = h?.get(HEADER.split) ?? '';
  if (split !== '' && split !== '1') return { refused: `bad ${HEADER.split} header` };
  let raw: unknown;
  try {
    raw = JSON.parse(DECODER.decode(data));
  } catch {
    return { refused: 'the batch is not JSON' };
  }
  const r = BatchSchema.safeParse(raw);
  if (!r.success)
    return {
      refused: `the batch is malformed: ${r.error.issues[0]!.path.join('.') || '(body)'}: ${r.error.issues[0]!.message}`,
    };
  return { batch: r.data as unknown as Batch, reply, msgId, split: split === '1' };
}

export function verdictsOf(
  batch: string,
  items: { i: number }[],
  scored: { answer: string; verdict: DetailedVerdict }[],
): Verdicts {
  return {
    v: 2,
    batch,
    results: items.map((it, k) => {
      const { answer, verdict: v } = scored[k]!;
      return {
        i: it.i,
        answer,
        reward: v.reward,
        reason: v.reason ?? null,
        ...(v.passed === undefined ? {} : { passed: v.passed, total: v.total }),
      };
    }),
  };
}

const ENCODER = new TextEncoder();
const DECODER = new TextDecoder();
export const encode = (x: unknown): Uint8Array => ENCODER.encode(JSON.stringify(x));

/** JSON texts of tasks and sandbox settings, made once per object: a run's tasks are immutable, and a task is sent in every batch that answers it. */
const texts = new WeakMap<object, string>();
const textOf = (x: object): string => {
  let t = texts.get(x);
  if (t === undefined) texts.set(x, (t = JSON.stringify(x)));
  return t;
};

/** The message of a batch: the same JSON text as encode({ v: 2, batch, sandbox, tasks, items }), with each task's and the settings' text made once. */
export function encodeBatch(b: Batch): Uint8Array {
  return ENCODER.encode(
    `{"v":2,"batch":${JSON.stringify(b.batch)},"sandbox":${textOf(b.sandbox)},"tasks":[${b.tasks.map(textOf).join(',')}],"items":${JSON.stringify(b.items)}}`,
  );
}
