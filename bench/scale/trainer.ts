// A trainer as the chaos benches play it (docs/scale-out.md): it samples tasks, scores half right and
// half wrong answers under an idempotency key of its own, and on a 503 or a failed connection sends
// the same request again, to the next replica (or, pinned to one replica, to that one), after the
// server's Retry-After. Every answer it gets is reported with when the request left and came back,
// and every 2xx score noted in the log of acknowledged requests (audit.ts).
import type pg from 'pg';
import { referenceAnswer, type Task } from '../../core/task.js';
import { noteAck, type Ack } from './audit.js';
import type { Proc } from './procs.js';

/** One answer a trainer got: status 0 is a failed connection (refused, reset, or no answer in time). */
export interface Outcome {
  trainer: string;
  replica: string;
  path: string;
  status: number;
  retryAfter: boolean;
  /** ms (performance.now()) when the request left, and when its answer (or failure) came. */
  sent: number;
  at: number;
  /** Completions a 2xx score carried. */
  items: number;
  detail?: string;
}

export interface TrainerOptions {
  name: string;
  replicas: Proc[];
  /** Only this replica (a probe of one replica's service); by default the trainer fails over. */
  pin?: number;
  /** The replica it starts with (when not pinned). */
  first?: number;
  db: pg.Pool;
  runId: string;
  /** Reference answers by task id, shared by the trainers of a run. */
  refs: Map<string, string>;
  tasksPerRequest: number;
  /** No new request after this (ms, performance.now()); a request under way is retried 60 s more. */
  end: number;
  /** Every 5th request is sent again to another replica, which must answer it identically. */
  resend?: boolean;
  /** A bearer token for replicas bound beyond loopback. */
  token?: string;
  /** Pause between requests (ms). */
  pauseMs?: number;
  acks: Map<string, Ack>;
  onOutcome(o: Outcome): void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function trainer(o: TrainerOptions): Promise<void> {
  let at = o.pin ?? (o.first ?? 0) % o.replicas.length;
  const next = () => (at = o.pin ?? (at + 1) % o.replicas.length);
  /** A request sent until a replica answers 200 (or the run ends); null when none did. */
  const send = async (path: string, body: unknown): Promise<{ step: number; results: unknown[] } | null> => {
    while (performance.now() < o.end + 60_000) {
      const r = o.replicas[at]!;
      const sent = performance.now();
      const base = { trainer: o.name, replica: r.name, path, sent, items: 0 };
      try {
        const res = await fetch(`${r.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(o.token ? { authorization: `Bearer ${o.token}` } : {}) },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(75_000),
        });
        const text = await res.text();
        const retryAfter = res.headers.get('retry-after') !== null;
        if (res.status === 200) {
          const parsed = JSON.parse(text) as { step: number; results: unknown[] };
          o.onOutcome({ ...base, status: 200, retryAfter, at: performance.now(), items: parsed.results?.length ?? 0 });
          return parsed;
        }
        o.onOutcome({ ...base, status: res.status, retryAfter, at: performance.now(), detail: text.slice(0, 200) });
        next();
        await sleep(res.status === 503 ? 200 : 1000);
      } catch (e) {
        o.onOutcome({ ...base, status: 0, retryAfter: false, at: performance.now(), detail: (e as Error).message });
        next();
        await sleep(100);
      }
      if (performance.now() > o.end && path === '/v1/sample') return null;
    }
    return null;
  };
  for (let n = 0; performance.now() < o.end; n++) {
    const sampled = (await send('/v1/sample', { n: o.tasksPerRequest })) as { tasks?: { id: string }[] } | null;
    if (!sampled?.tasks) break;
    const ids = sampled.tasks.map((t) => t.id);
    const missing = ids.filter((id) => !o.refs.has(id));
    if (missing.length) await readRefs(o, missing);
    const items = ids.flatMap((id, k) => [
      { task_id: id, completion: `ANSWER: ${(o.refs.get(id) ?? '0').split('\n').join(' ')} // ${o.name}-${n}-${k}` },
      { task_id: id, completion: `ANSWER: "not it ${o.name}-${n}-${k}"` },
    ]);
    const key = `${o.name}-${n}`;
    const res = await send('/v1/score', { items, idempotency_key: key });
    if (!res) continue;
    noteAck(o.acks, key, res);
    // Now and then the same request again, on another replica: it must get the same body back.
    if (o.resend && n % 5 === 4) {
      next();
      const again = await send('/v1/score', { items, idempotency_key: key });
      if (again) noteAck(o.acks, key, again);
    }
    if (o.pauseMs) await sleep(o.pauseMs);
  }
}

/** The reference answers of tasks, read from the store (retried while the database is away, as in a service fault). */
async function readRefs(o: TrainerOptions, ids: string[]): Promise<void> {
  while (performance.now() < o.end + 60_000) {
    try {
      const rows = await o.db.query<{ id: string; data: string }>(
        `SELECT id, data FROM "${o.runId}".tasks WHERE id = ANY($1)`,
        [ids],
      );
      for (const r of rows.rows) o.refs.set(r.id, referenceAnswer(JSON.parse(r.data) as Task));
      return;
    } catch {
      await sleep(200);
    }
  }
}
