// The writes of one commit in PostgreSQL: every op of the batch gathered into one statement per table
// (arrays through unnest), so that a commit costs the same dozen round trips however many requests
// it carries. Rows keep the order of the ops (the outbox's order is the events' order).
import type pg from 'pg';
import type { GraphEvent } from '../../../graphs/index.js';
import type { EnvSpec, Trajectory } from '../../../envs/index.js';
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

/** The columns of each table a commit writes (name, PostgreSQL type), in the order of its rows' values. */
const COLUMNS = {
  tasks: [
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
  issued: [
    ['task_id', 'text'],
    ['issued_at', 'bigint'],
    ['expires_at', 'bigint'],
  ],
  task_scores: [
    ['step', 'int'],
    ['task_id', 'text'],
    ['solved', 'int'],
    ['attempts', 'int'],
  ],
  episodes: [
    ['step', 'int'],
    ['task_id', 'text'],
    ['answer', 'text'],
    ['reward', 'float8'],
    ['reason', 'text'],
  ],
  env_episodes: [
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
  metrics: [
    ['step', 'int'],
    ['data', 'text'],
  ],
  outbox: [
    ['step', 'int'],
    ['event', 'text'],
  ],
  requests: [
    ['key', 'text'],
    ['digest', 'text'],
    ['step', 'int'],
  ],
} satisfies Record<string, [name: string, type: string][]>;

type NewTask = StepRecord['newTasks'][number] & { step: number };

/** A commit's rows, gathered from its ops table by table (in the ops' order). */
interface Batch {
  tasks: NewTask[];
  issues: unknown[][];
  outbox: unknown[][];
  scoreRows: unknown[][];
  /** Per task, what its scores add to its attempts and solved. */
  scoreSums: Map<string, { solved: number; attempts: number }>;
  episodes: unknown[][];
  envEpisodes: unknown[][];
  /** Each step's metrics row; a probe round's metrics merge into the row of the step they land on. */
  metrics: Map<number, Record<string, unknown>>;
  /** The issues (their ids) that this commit scored. */
  closed: number[];
  requests: unknown[][];
  lastStep: number | null;
}

/** Writes the ops of one commit: one statement per table, in the same order whatever the ops. */
export async function writeOps(c: Client, s: string, ops: WriteOp[]): Promise<void> {
  const b = gather(ops);
  await insert(c, `${s}.tasks`, COLUMNS.tasks, b.tasks.map(taskRow), 'ON CONFLICT (id) DO NOTHING');
  await insert(c, `${s}.issued`, COLUMNS.issued, b.issues);
  await addScores(c, s, b.scoreSums);
  await insert(c, `${s}.task_scores`, COLUMNS.task_scores, b.scoreRows);
  await insert(c, `${s}.episodes`, COLUMNS.episodes, b.episodes);
  await insert(c, `${s}.env_episodes`, COLUMNS.env_episodes, b.envEpisodes);
  const metrics = [...b.metrics].map(([step, data]) => [step, JSON.stringify(data)]);
  const merge = `ON CONFLICT (step) DO UPDATE SET data = (${s}.metrics.data::jsonb || excluded.data::jsonb)::text`;
  await insert(c, `${s}.metrics`, COLUMNS.metrics, metrics, merge);
  await insert(c, `${s}.outbox`, COLUMNS.outbox, b.outbox);
  await markScored(c, s, b.closed);
  await insert(c, `${s}.requests`, COLUMNS.requests, b.requests);
  await setLastStep(c, s, b.lastStep);
}

function gather(ops: WriteOp[]): Batch {
  const b: Batch = {
    tasks: [],
    issues: [],
    outbox: [],
    scoreRows: [],
    scoreSums: new Map(),
    episodes: [],
    envEpisodes: [],
    metrics: new Map(),
    closed: [],
    requests: [],
    lastStep: null,
  };
  for (const op of ops) {
    if (op.op === 'issue') {
      b.tasks.push(...op.newTasks.map((t) => ({ ...t, step: op.step })));
      for (const i of op.issues) b.issues.push([i.taskId, i.issuedAt, i.expiresAt]);
      addEvents(b, op.step, op.outbox);
    } else if (op.op === 'events') {
      addEvents(b, op.step, op.outbox);
      if (op.metrics) addMetrics(b, op.step, op.metrics);
    } else if (op.op === 'env-episode') b.envEpisodes.push(envEpisodeRow(op.step, op.spec, op.trajectory));
    else gatherStep(b, op.record);
  }
  return b;
}

/** A scored step's rows: its new tasks, scores, episodes, metrics, events, closed issues and request. */
function gatherStep(b: Batch, r: StepRecord): void {
  b.tasks.push(...r.newTasks.map((t) => ({ ...t, step: r.step })));
  for (const sc of r.scored) {
    b.scoreRows.push([r.step, sc.taskId, sc.solved, sc.attempts]);
    const sum = b.scoreSums.get(sc.taskId) ?? { solved: 0, attempts: 0 };
    b.scoreSums.set(sc.taskId, { solved: sum.solved + sc.solved, attempts: sum.attempts + sc.attempts });
  }
  for (const e of r.episodes) b.episodes.push([r.step, e.taskId, text(e.answer), e.reward, text(e.reason)]);
  for (const { spec, trajectory } of r.envEpisodes ?? []) b.envEpisodes.push(envEpisodeRow(r.step, spec, trajectory));
  addMetrics(b, r.step, r.metrics);
  addEvents(b, r.step, r.outbox);
  b.closed.push(...(r.scoredIssues ?? []));
  if (r.request) b.requests.push([text(r.request.key), r.request.digest, r.request.step]);
  b.lastStep = Math.max(b.lastStep ?? r.step, r.step);
}

function addMetrics(b: Batch, step: number, metrics: Record<string, unknown>): void {
  b.metrics.set(step, { ...(b.metrics.get(step) ?? {}), step, ...metrics });
}

function addEvents(b: Batch, step: number, out: GraphEvent[]): void {
  for (const ev of out) b.outbox.push([step, JSON.stringify(ev)]);
}

function envEpisodeRow(step: number, spec: EnvSpec, t: Trajectory): unknown[] {
  return [
    step,
    spec.id,
    spec.kind,
    spec.family,
    spec.level,
    t.seed,
    t.reward,
    text(t.reason ?? null),
    text(JSON.stringify(spec)),
    text(JSON.stringify(t)),
  ];
}

function taskRow({ task, compact, natural, step }: NewTask): unknown[] {
  return [
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
  ];
}

/** Adds the scores of this commit to each task's attempts and solved. */
async function addScores(c: Client, s: string, sums: Batch['scoreSums']): Promise<void> {
  if (sums.size === 0) return;
  await c.query(
    `UPDATE ${s}.tasks t SET attempts = t.attempts + d.a, solved = t.solved + d.s FROM unnest($1::text[], $2::int[], $3::int[]) d(id, a, s) WHERE t.id = d.id`,
    [[...sums.keys()], [...sums.values()].map((v) => v.attempts), [...sums.values()].map((v) => v.solved)],
  );
}

async function markScored(c: Client, s: string, closed: number[]): Promise<void> {
  if (closed.length > 0)
    await c.query(`UPDATE ${s}.issued SET state = 'scored' WHERE id = ANY($1::bigint[])`, [closed]);
}

async function setLastStep(c: Client, s: string, lastStep: number | null): Promise<void> {
  if (lastStep === null) return;
  await c.query(
    `INSERT INTO ${s}.meta (key, value) VALUES ('lastStep', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
    [String(lastStep)],
  );
}
