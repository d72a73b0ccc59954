// Shared by the graph tests (and usable by any test that needs Neo4j): the connection provided by
// test/setup/neo4j.ts, the CI rule (no Neo4j under CI = failure, elsewhere = skip), and a lock that
// serialises test files using the one Neo4j database (Community has a single user database and
// vitest runs files in parallel), plus the event streams the tests replay.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import type { Skill } from '../core/task.js';
import type { GraphEvent, GraphTask, OutboxSource } from '../graphs/testing.js';

export const isCI = process.env.CI === 'true' || process.env.CI === '1';

export interface Neo4jConn {
  uri: string;
  user: string;
  password: string;
  database?: string;
}

/** The test Neo4j, or the reason there is none. */
export function neo4jConnection(): { conn: Neo4jConn | null; reason: string | null } {
  let provided: ReturnType<typeof inject<'neo4j'>> | undefined;
  try {
    provided = inject('neo4j');
  } catch {
    provided = undefined;
  }
  const uri = provided?.uri ?? process.env.NEO4J_URI ?? null;
  if (!uri) return { conn: null, reason: provided?.error ?? 'NEO4J_URI is not set and no local Neo4j was started' };
  return {
    conn: {
      uri,
      user: provided?.user ?? process.env.NEO4J_USER ?? 'neo4j',
      password: provided?.password ?? process.env.NEO4J_PASSWORD ?? '',
      database: provided?.database ?? (process.env.NEO4J_DATABASE || undefined),
    },
    reason: null,
  };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** A cross-process lock on the test Neo4j database: await acquire(), then release(). */
export async function lockNeo4j(uri: string, timeoutMs = 900_000): Promise<() => void> {
  const dir = join(tmpdir(), `cogen-neo4j-lock-${uri.replace(/[^a-zA-Z0-9]+/g, '_')}`);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      mkdirSync(dir);
      writeFileSync(join(dir, 'pid'), String(process.pid));
      return () => rmSync(dir, { recursive: true, force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      let holder = NaN;
      try {
        holder = Number(readFileSync(join(dir, 'pid'), 'utf8'));
      } catch {
        // being created or removed right now
      }
      if (Number.isFinite(holder) && holder > 0 && !alive(holder)) rmSync(dir, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`timed out waiting for the Neo4j test lock ${dir}`);
      await new Promise((r) => setTimeout(r, 150));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// event fixtures

export const SKILLS: Skill[] = [
  { id: 'arith.add', family: 'arith', name: 'addition', description: 'integer addition', requires: [], level: 1 },
  {
    id: 'arith.mul',
    family: 'arith',
    name: 'multiplication',
    description: 'integer product',
    requires: ['arith.add'],
    level: 2,
  },
  {
    id: 'arith.mod',
    family: 'arith',
    name: 'modulo',
    description: 'remainder "mod" n',
    requires: ['arith.mul'],
    level: 3,
  },
  { id: 'list.map', family: 'list', name: 'map', description: 'apply f to each\nelement', requires: [], level: 1 },
  { id: 'list.filter', family: 'list', name: 'filter', description: 'keep elements', requires: ['list.map'], level: 2 },
  {
    id: 'list.fold',
    family: 'list',
    name: 'fold',
    description: 'reduce a list',
    requires: ['list.map', 'arith.add'],
    level: 3,
  },
];

export const AT = (step: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, step)).toISOString();

export function task(id: string, over: Partial<GraphTask> = {}): GraphTask {
  return {
    id,
    type: 'deduction',
    family: 'arith',
    level: 1,
    program: `function f(x) { return x + ${id.length}; }`,
    skills: ['arith.add'],
    hash: `h-${id}`,
    prompt: `f(1) = ?`,
    parent: null,
    solveRate: null,
    ...over,
  };
}

export const mastery = (
  runId: string,
  skillId: string,
  event: 'learned' | 'forgotten',
  step: number,
  accuracy: number,
  /** The trivial baseline; left out, the event is as a run made before baselines wrote it. */
  baseline?: number,
): GraphEvent => ({
  kind: 'mastery',
  runId,
  skillId,
  event,
  step,
  at: AT(step),
  accuracy,
  ...(baseline === undefined ? {} : { baseline }),
});

/** A small but complete run: skills, run start/end, tasks with lineage, solve rates, mastery, checkpoints. */
export function runEvents(runId = 'run-a'): GraphEvent[] {
  return [
    { kind: 'skills', skills: SKILLS },
    {
      kind: 'run',
      runId,
      preset: 'default',
      config: '{"steps":40}',
      startedAt: AT(0),
      endedAt: null,
      status: 'running',
    },
    { kind: 'task', runId, step: 1, task: task(`${runId}-t1`) },
    { kind: 'task', runId, step: 1, task: task(`${runId}-t2`, { skills: ['arith.add', 'arith.mul'], level: 2 }) },
    { kind: 'solve-rate', taskId: `${runId}-t1`, solveRate: 0.25 },
    { kind: 'solve-rate', taskId: `${runId}-t2`, solveRate: 0 },
    mastery(runId, 'arith.add', 'learned', 5, 0.9, 0.25),
    mastery(runId, 'list.map', 'learned', 5, 0.8), // no baseline: an event of an older run store
    {
      kind: 'task',
      runId,
      step: 6,
      task: task(`${runId}-t3`, { parent: { id: `${runId}-t1`, op: 'mutate' }, skills: ['arith.add'], solveRate: 0.5 }),
    },
    { kind: 'checkpoint', runId, id: `${runId}-ckpt-10`, step: 10, path: `runs/${runId}/ckpt-10.safetensors` },
    mastery(runId, 'arith.mul', 'learned', 12, 0.75, 0.2),
    mastery(runId, 'arith.add', 'forgotten', 20, 0.4, 0.25),
    { kind: 'task', runId, step: 21, task: task(`${runId}-t1`, { solveRate: null }) }, // replayed task
    { kind: 'solve-rate', taskId: `${runId}-t1`, solveRate: 0.625 },
    mastery(runId, 'arith.add', 'learned', 30, 0.95, 0.3),
    { kind: 'checkpoint', runId, id: `${runId}-ckpt-30`, step: 30, path: `runs/${runId}/ckpt-30.safetensors` },
    {
      kind: 'run',
      runId,
      preset: 'default',
      config: '{"steps":40}',
      startedAt: AT(0),
      endedAt: AT(40),
      status: 'done',
    },
  ];
}

/** An in-memory OutboxSource, as the run store's outbox table behaves. */
export class MemoryOutbox implements OutboxSource {
  private rows: { seq: number; event: GraphEvent }[] = [];
  doneUpTo = 0;
  marks: number[] = [];
  push(...events: GraphEvent[]) {
    for (const event of events) this.rows.push({ seq: this.rows.length + 1, event });
  }
  pending(limit: number) {
    return this.rows.filter((r) => r.seq > this.doneUpTo).slice(0, limit);
  }
  markDone(maxSeq: number) {
    this.marks.push(maxSeq);
    this.doneUpTo = Math.max(this.doneUpTo, maxSeq);
  }
}
