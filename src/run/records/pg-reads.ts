// What a served run's writer reads from PostgreSQL inside its lock (records/postgres.ts): the state
// snapshot, the tasks other replicas added, and what a batch of changes looks up (idempotency keys,
// open issues, task scores), each in one statement.
import type pg from 'pg';
import type { Task } from '../../../core/task.js';
import type { StoredRequest } from './store.js';
import type { Prefetch } from './types.js';

type Client = pg.PoolClient;

export async function snapshotOf(c: Client, s: string): Promise<string> {
  const r = await c.query<{ value: string }>(`SELECT value FROM ${s}.meta WHERE key = 'served'`);
  return r.rows[0]?.value ?? 'null';
}

export async function tasksSince(c: Client, s: string, cursor: number): Promise<{ tasks: Task[]; cursor: number }> {
  const r = await c.query<{ seq: string; data: string }>(
    `SELECT seq, data FROM ${s}.tasks WHERE seq > $1 ORDER BY seq`,
    [cursor],
  );
  const last = r.rows.at(-1);
  return { tasks: r.rows.map((x) => JSON.parse(x.data) as Task), cursor: last ? Number(last.seq) : cursor };
}

export async function prefetch(c: Client, s: string, keys: string[], taskIds: string[]): Promise<Prefetch> {
  const wanted = new Map<string, number>();
  for (const id of taskIds) wanted.set(id, (wanted.get(id) ?? 0) + 1);
  const [reqs, issues, scores] = [
    keys.length
      ? await c.query<StoredRequest>(`SELECT key, digest, step FROM ${s}.requests WHERE key = ANY($1)`, [keys])
      : { rows: [] },
    wanted.size
      ? await c.query<{ id: string; task_id: string }>(
          `SELECT i.id, i.task_id FROM unnest($1::text[], $2::int[]) w(task_id, n)
           CROSS JOIN LATERAL (SELECT id, task_id FROM ${s}.issued WHERE state = 'open' AND task_id = w.task_id ORDER BY id LIMIT w.n) i ORDER BY i.id`,
          [[...wanted.keys()], [...wanted.values()]],
        )
      : { rows: [] },
    wanted.size
      ? await c.query<{ id: string; solved: number; attempts: number }>(
          `SELECT id, solved, attempts FROM ${s}.tasks WHERE id = ANY($1)`,
          [[...wanted.keys()]],
        )
      : { rows: [] },
  ];
  const openIssues = new Map<string, number[]>();
  for (const r of issues.rows)
    (openIssues.get(r.task_id) ?? openIssues.set(r.task_id, []).get(r.task_id)!).push(Number(r.id));
  return {
    requests: new Map(reqs.rows.map((r) => [r.key, r])),
    openIssues,
    scores: new Map(scores.rows.map((r) => [r.id, { solved: r.solved, attempts: r.attempts }])),
  };
}
