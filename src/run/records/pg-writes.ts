// The writes of one commit in PostgreSQL: every op of the batch gathered into one statement per table
// (arrays through unnest), so that a commit costs the same dozen round trips however many requests
// it carries. Rows keep the order of the ops (the outbox's order is the events' order).
import type pg from 'pg';
import type { GraphEvent } from '../../../graphs/index.js';
import type { StepRecord } from './store.js';
import { storableText } from './pg-schema.js';
import type { WriteOp } from './types.js';

type Client = pg.PoolClient;

/** INSERT … SELECT FROM unnest(arrays): one statement for any number of rows. */
async function insert(
  c: Client,
  table: string,
  cols: [name: string, type: string][],
  rows: unknown[][],
  tail = '',
): Promise<void> {
  if (rows.length === 0) return;
  const arrays = cols.map((_, i) => rows.map((r) => r[i]));
  const args = cols.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ');
  await c.query(
    `INSERT INTO ${table} (${cols.map(([n]) => `"${n}"`).join(', ')}) SELECT * FROM unnest(${args}) ${tail}`,
    arrays,
  );
}

const text = (s: string | null): string | null => (s === null ? null : storableText(s));

export async function writeOps(c: Client, s: string, ops: WriteOp[]): Promise<void> {
  const tasks: StepRecord['newTasks'] = [];
  const issues: unknown[][] = [];
  const outbox: unknown[][] = [];
  const scoreRows: unknown[][] = [];
  const scoreSums = new Map<string, { solved: number; attempts: number }>();
  const episodes: unknown[][] = [];
  const envEpisodes: unknown[][] = [];
  const metrics: unknown[][] = [];
  const closed: number[] = [];
  const requests: unknown[][] = [];
  let lastStep: number | null = null;
  const addEvents = (step: number, out: GraphEvent[]) => {
    for (const ev of out) outbox.push([step, JSON.stringify(ev)]);
  };
  for (const op of ops) {
    if (op.op === 'issue') {
      tasks.push(...op.newTasks.map((t) => ({ ...t, step: op.step })));
      for (const i of op.issues) issues.push([i.taskId, i.issuedAt, i.expiresAt]);
      addEvents(op.step, op.outbox);
    } else if (op.op === 'events') {
      addEvents(op.step, op.outbox);
    } else if (op.op === 'env-episode') {
      const t = op.trajectory;
      envEpisodes.push([
        op.step,
        op.spec.id,
        op.spec.kind,
        op.spec.family,
        op.spec.level,
        t.seed,
        t.reward,
        text(t.reason ?? null),
        text(JSON.stringify(op.spec)),
        text(JSON.stringify(t)),
      ]);
    } else {
      const r = op.record;
      tasks.push(...r.newTasks.map((t) => ({ ...t, step: r.step })));
      for (const sc of r.scored) {
        scoreRows.push([r.step, sc.taskId, sc.solved, sc.attempts]);
        const sum = scoreSums.get(sc.taskId) ?? { solved: 0, attempts: 0 };
        scoreSums.set(sc.taskId, { solved: sum.solved + sc.solved, attempts: sum.attempts + sc.attempts });
      }
      for (const e of r.episodes) episodes.push([r.step, e.taskId, text(e.answer), e.reward, text(e.reason)]);
      for (const { spec, trajectory: t } of r.envEpisodes ?? []) {
        envEpisodes.push([
          r.step,
          spec.id,
          spec.kind,
          spec.family,
          spec.level,
          t.seed,
          t.reward,
          text(t.reason ?? null),
          text(JSON.stringify(spec)),
          text(JSON.stringify(t)),
        ]);
      }
      metrics.push([r.step, JSON.stringify({ step: r.step, ...r.metrics })]);
      addEvents(r.step, r.outbox);
      closed.push(...(r.scoredIssues ?? []));
      if (r.request) requests.push([text(r.request.key), r.request.digest, r.request.step]);
      lastStep = Math.max(lastStep ?? r.step, r.step);
    }
  }
  await insert(
    c,
    `${s}.tasks`,
    [
      ['id', 'text'],
      ['step', 'int'],
      ['type', 'text'],
      ['family', 'text'],
      ['level', 'int'],
      ['skills', 'text'],
      ['program', 'text'],
      ['hash', 'text'],
      ['parent_id', 'text'],
      ['parent_op', 'text'],
      ['proposer', 'text'],
      ['data', 'text'],
      ['compact', 'text'],
      ['natural', 'text'],
    ],
    tasks.map(({ task, compact, natural, step }: StepRecord['newTasks'][number] & { step?: number }) => [
      task.id,
      step,
      task.type,
      task.family,
      task.level,
      JSON.stringify(task.skills),
      text(task.program),
      task.hash,
      task.parent?.id ?? null,
      task.parent?.op ?? null,
      task.proposer,
      text(JSON.stringify(task)),
      text(compact),
      text(natural),
    ]),
    'ON CONFLICT (id) DO NOTHING',
  );
  await insert(
    c,
    `${s}.issued`,
    [
      ['task_id', 'text'],
      ['issued_at', 'bigint'],
      ['expires_at', 'bigint'],
    ],
    issues,
  );
  if (scoreSums.size > 0) {
    await c.query(
      `UPDATE ${s}.tasks t SET attempts = t.attempts + d.a, solved = t.solved + d.s FROM unnest($1::text[], $2::int[], $3::int[]) d(id, a, s) WHERE t.id = d.id`,
      [
        [...scoreSums.keys()],
        [...scoreSums.values()].map((v) => v.attempts),
        [...scoreSums.values()].map((v) => v.solved),
      ],
    );
  }
  await insert(
    c,
    `${s}.task_scores`,
    [
      ['step', 'int'],
      ['task_id', 'text'],
      ['solved', 'int'],
      ['attempts', 'int'],
    ],
    scoreRows,
  );
  await insert(
    c,
    `${s}.episodes`,
    [
      ['step', 'int'],
      ['task_id', 'text'],
      ['answer', 'text'],
      ['reward', 'float8'],
      ['reason', 'text'],
    ],
    episodes,
  );
  await insert(
    c,
    `${s}.env_episodes`,
    [
      ['step', 'int'],
      ['env_id', 'text'],
      ['kind', 'text'],
      ['family', 'text'],
      ['level', 'int'],
      ['seed', 'bigint'],
      ['reward', 'float8'],
      ['reason', 'text'],
      ['spec', 'text'],
      ['trajectory', 'text'],
    ],
    envEpisodes,
  );
  await insert(
    c,
    `${s}.metrics`,
    [
      ['step', 'int'],
      ['data', 'text'],
    ],
    metrics,
    'ON CONFLICT (step) DO UPDATE SET data = excluded.data',
  );
  await insert(
    c,
    `${s}.outbox`,
    [
      ['step', 'int'],
      ['event', 'text'],
    ],
    outbox,
  );
  if (closed.length > 0)
    await c.query(`UPDATE ${s}.issued SET state = 'scored' WHERE id = ANY($1::bigint[])`, [closed]);
  await insert(
    c,
    `${s}.requests`,
    [
      ['key', 'text'],
      ['digest', 'text'],
      ['step', 'int'],
    ],
    requests,
  );
  if (lastStep !== null) {
    await c.query(
      `INSERT INTO ${s}.meta (key, value) VALUES ('lastStep', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      [String(lastStep)],
    );
  }
}
