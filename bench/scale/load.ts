// Score traffic for the scale-out benches: batches of completions of a served run's own tasks (a
// task's 8 completions: 4 right, 4 wrong and each different, as sampled answers are; optionally a
// share of hostile answers), posted by concurrent keep-alive HTTP clients, each request with an
// idempotency key of its own as the Python client sends.
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { RunStore } from '../../src/run/testing.js';
import { referenceAnswer, type Task } from '../../core/task.js';

/** Answers that run to their budget or their limits (bench/sandbox-hostile.ts's kinds). */
const HOSTILE: Record<string, string[]> = {
  induction: [
    'function f(a){ for(;;){} }',
    "function f(a){ let s=''; for(let i=0;i<1e9;i++) s+='x'; return s }",
    "function f(a){ throw new Error('x'.repeat(1e7)) }",
  ],
  problem: [JSON.stringify('x'.repeat(60_000)), `${'['.repeat(2000)}${']'.repeat(2000)}`],
};

function wrong(t: Task, k: number): string {
  if (t.type === 'induction') return `(...xs) => ${k} + xs.length`;
  if (t.type === 'problem') return JSON.stringify(t.failures[k % t.failures.length] ?? null);
  return JSON.stringify(`wrong ${k}`);
}

/** The tasks a SQLite run recorded (the bench reads the replica's own store). */
export function tasksOf(runsDir: string, runId: string): Task[] {
  const store = RunStore.open(join(runsDir, runId), { create: false });
  try {
    return store.tasks().map((r) => r.task);
  } finally {
    store.close();
  }
}

/** Request bodies of `size` completions each, a task's 8 together; with `hostile` > 0 that share of answers is hostile. */
export function bodies(
  tasks: Task[],
  size: number,
  hostile = 0,
): { items: { task_id: string; completion: string }[] }[] {
  let n = 0;
  const items = tasks.flatMap((t) =>
    Array.from({ length: 8 }, (_, i) => {
      const k = n++;
      const bad = HOSTILE[t.type];
      if (hostile > 0 && bad && k % Math.round(1 / hostile) === 3)
        return { task_id: t.id, completion: `${bad[k % bad.length]}\n// ${k}` };
      // A program answer is a text of its own each time (a model rarely writes the same program twice), so each runs.
      const right =
        t.type === 'induction'
          ? `${referenceAnswer(t).split('\n').join(' ')} // ${k}`
          : referenceAnswer(t).split('\n').join(' ');
      return { task_id: t.id, completion: i % 2 === 0 ? `Thinking.\nANSWER: ${right}` : wrong(t, k) };
    }),
  );
  const out = [];
  for (let i = 0; i + size <= items.length; i += size) out.push({ items: items.slice(i, i + size) });
  return out;
}

export interface LoadResult {
  rewards: number;
  requests: number;
  /** Responses other than 200, by status (0: no response). */
  errors: Record<number, number>;
  seconds: number;
}

/** `clients` keep-alive clients posting the bodies in turn to /v1/score for `seconds`. */
export async function scoreLoad(
  url: string,
  list: { items: unknown[] }[],
  clients: number,
  seconds: number,
): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  const { hostname, port } = new URL(url);
  const texts = list.map((b) => JSON.stringify(b.items));
  const out: LoadResult = { rewards: 0, requests: 0, errors: {}, seconds: 0 };
  let next = 0;
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  const post = (body: string) =>
    new Promise<number>((resolve) => {
      const req = request(
        {
          agent,
          hostname,
          port,
          path: '/v1/score',
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', () => resolve(0));
      req.end(body);
    });
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < end) {
        const i = next++;
        const status = await post(
          `{"idempotency_key":"load-${process.pid}-${t0}-${i}","items":${texts[i % texts.length]}}`,
        );
        out.requests++;
        if (status === 200) out.rewards += list[i % list.length]!.items.length;
        else out.errors[status] = (out.errors[status] ?? 0) + 1;
      }
    }),
  );
  out.seconds = (performance.now() - t0) / 1000;
  agent.destroy();
  return out;
}
