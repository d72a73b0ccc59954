// Helpers shared by the two SkillGraph stores: the connection error, the canonical ordering of a
// snapshot (so that both stores return equal values for equal event streams), and the batching plan
// that lets the Neo4j store apply a list of events as a few UNWIND queries with the same effect as
// applying them one by one in order.
import type { GraphEvent, GraphSnapshot, Mastery } from './types.js';

/** Opening a graph failed: wrong credentials, unreachable server, bad URI, missing database. */
export class GraphConnectionError extends Error {
  override readonly name = 'GraphConnectionError';
  constructor(
    message: string,
    readonly reason: 'credentials' | 'unreachable' | 'uri' | 'database' | 'other',
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export const COUNT_KEYS = [
  'Skill',
  'Task',
  'Run',
  'Checkpoint',
  'REQUIRES',
  'EXERCISES',
  'DERIVED_FROM',
  'PROPOSED',
  'MASTERED',
  'SAVED',
] as const;

const cmp = (a: string | number | null, b: string | number | null): number => {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a < b ? -1 : 1;
};
const by =
  <T>(...keys: ((x: T) => string | number | null)[]) =>
  (x: T, y: T): number => {
    for (const k of keys) {
      const c = cmp(k(x), k(y));
      if (c !== 0) return c;
    }
    return 0;
  };

export const byMastery = by<Mastery>(
  (m) => m.runId,
  (m) => m.skillId,
  (m) => m.sinceStep,
);

/** Sorts every list of a snapshot by its key, in place, and returns it. */
export function canonicalize(s: GraphSnapshot): GraphSnapshot {
  s.skills.sort(by((x) => x.id));
  s.requires.sort(by((x) => x.skillId, (x) => x.requiresId));
  s.runs.sort(by((x) => x.id));
  s.tasks.sort(by((x) => x.id));
  s.exercises.sort(by((x) => x.taskId, (x) => x.skillId));
  s.derivedFrom.sort(by((x) => x.taskId, (x) => x.parentId));
  s.proposed.sort(by((x) => x.runId, (x) => x.taskId, (x) => x.step));
  s.mastered.sort(byMastery);
  s.checkpoints.sort(by((x) => x.id));
  s.saved.sort(by((x) => x.runId, (x) => x.checkpointId));
  return s;
}

/*
 * The MASTERED rules, the same in both stores. For a (run, skill), with events in step order:
 * - `learned` at step s opens an interval {sinceStep: s} unless an interval is open, or was closed at
 *   a step >= s;
 * - `forgotten` at step s closes the open interval if it began before s (untilStep = s);
 * - at most one transition per skill per step counts (a probe runs once per step).
 * Intervals are never deleted. These rules make every event a no-op on any state reached after it,
 * so resending a batch, replaying a whole outbox, or duplicating events changes nothing.
 */

type Kind = GraphEvent['kind'];
export type EventOf<K extends Kind> = Extract<GraphEvent, { kind: K }>;
export interface Segment<K extends Kind = Kind> {
  kind: K;
  events: EventOf<K>[];
}

const entityKey = (e: GraphEvent): string | null => {
  switch (e.kind) {
    case 'run':
      return e.runId;
    case 'task':
      return e.task.id;
    case 'solve-rate':
      return e.taskId;
    case 'mastery':
      return `${e.runId}\u0000${e.skillId}`;
    case 'checkpoint':
      return e.id;
    case 'skills':
      return null;
  }
};

/**
 * Plans a batch of events as segments, each applied by one UNWIND query, with the same result as
 * applying the events one by one in order:
 * - the kinds touch disjoint properties (a node referenced by another kind is only MERGEd as a stub),
 *   so they are applied class by class (skills, runs, tasks + solve rates, checkpoints, mastery);
 *   tasks and solve rates both write Task.solveRate, so they stay in their original relative order;
 * - within a segment an entity (a run, a task, a (run, skill) pair, …) appears at most once, so no
 *   row of an UNWIND depends on an earlier row of the same query (the planner may read all rows
 *   before writing any); a repeated entity starts a new segment.
 */
export function planSegments(events: GraphEvent[]): Segment[] {
  const classOf = (k: Kind): number =>
    ({ skills: 0, run: 1, task: 2, 'solve-rate': 2, checkpoint: 3, mastery: 4 })[k];
  const flat: GraphEvent[] = [];
  for (const e of events) {
    if (e.kind === 'skills') {
      for (const skill of e.skills) flat.push({ kind: 'skills', skills: [skill] });
    } else flat.push(e);
  }
  const ordered = flat
    .map((e, i) => ({ e, i }))
    .sort((a, b) => classOf(a.e.kind) - classOf(b.e.kind) || a.i - b.i)
    .map((x) => x.e);
  const segments: Segment[] = [];
  let current: Segment | null = null;
  let seen = new Set<string>();
  for (const e of ordered) {
    const key = e.kind === 'skills' ? (e.skills[0]?.id ?? '') : entityKey(e);
    if (current === null || current.kind !== e.kind || (key !== null && seen.has(key))) {
      current = { kind: e.kind, events: [] };
      segments.push(current);
      seen = new Set();
    }
    (current.events as GraphEvent[]).push(e);
    if (key !== null) seen.add(key);
  }
  return segments;
}

export function emptySnapshot(): GraphSnapshot {
  return {
    skills: [],
    requires: [],
    runs: [],
    tasks: [],
    exercises: [],
    derivedFrom: [],
    proposed: [],
    mastered: [],
    checkpoints: [],
    saved: [],
  };
}
