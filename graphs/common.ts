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
  s.requires.sort(
    by(
      (x) => x.skillId,
      (x) => x.requiresId,
    ),
  );
  s.runs.sort(by((x) => x.id));
  s.tasks.sort(by((x) => x.id));
  s.exercises.sort(
    by(
      (x) => x.taskId,
      (x) => x.skillId,
    ),
  );
  s.derivedFrom.sort(
    by(
      (x) => x.taskId,
      (x) => x.parentId,
    ),
  );
  s.proposed.sort(
    by(
      (x) => x.runId,
      (x) => x.taskId,
      (x) => x.step,
    ),
  );
  s.mastered.sort(byMastery);
  s.checkpoints.sort(by((x) => x.id));
  s.saved.sort(
    by(
      (x) => x.runId,
      (x) => x.checkpointId,
    ),
  );
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

/** The entity an event writes (the key that orders events on one entity). */
const entityKey = (e: GraphEvent): string => {
  switch (e.kind) {
    case 'skills':
      return e.skills.map((k) => k.id).join('\u0000');
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
  }
};

const CLASS_OF: Record<Kind, number> = { skills: 0, run: 1, task: 2, 'solve-rate': 2, checkpoint: 3, mastery: 4 };

/**
 * Plans a batch of events as segments, each applied by one UNWIND query, with the same result as
 * applying the events one by one in order:
 * - the kinds touch disjoint properties (a node referenced by another kind is only MERGEd as a stub),
 *   so they are applied class by class: skills, runs, tasks + solve rates, checkpoints, mastery;
 * - within a class each event goes to the first layer after the last layer holding an event on the
 *   same entity (for a solve rate, also after a task that MERGEd that task as its parent; a task's own
 *   MERGE of a parent stub commutes with everything else), so events on one entity keep their order
 *   and a layer holds each entity at most once
 *   (no row of an UNWIND depends on an earlier row of the same query: the planner may read all rows
 *   before writing any). Tasks and solve rates both write Task.solveRate: they share a class whose
 *   layers alternate task / solve-rate.
 * A batch of many tasks, rates and transitions thus becomes a handful of queries, not one per event.
 */
export function planSegments(events: GraphEvent[]): Segment[] {
  const classes: GraphEvent[][] = [[], [], [], [], []];
  for (const e of events) {
    if (e.kind === 'skills') for (const skill of e.skills) classes[0]!.push({ kind: 'skills', skills: [skill] });
    else classes[CLASS_OF[e.kind]]!.push(e);
  }
  const segments: Segment[] = [];
  for (const [c, list] of classes.entries()) {
    const layers: GraphEvent[][] = [];
    const last = new Map<string, number>();
    // a task MERGEs its parent as a stub: a later solve rate of the parent must come after that
    const stubbed = new Map<string, number>();
    for (const e of list) {
      const key = entityKey(e);
      let layer = Math.max(last.get(key) ?? -1, e.kind === 'solve-rate' ? (stubbed.get(key) ?? -1) : -1) + 1;
      if (c === CLASS_OF.task && layer % 2 !== (e.kind === 'task' ? 0 : 1)) layer++;
      (layers[layer] ??= []).push(e);
      last.set(key, layer);
      if (e.kind === 'task' && e.task.parent)
        stubbed.set(e.task.parent.id, Math.max(stubbed.get(e.task.parent.id) ?? -1, layer));
    }
    for (const layer of layers) {
      if (layer && layer.length > 0) segments.push({ kind: layer[0]!.kind, events: layer } as Segment);
    }
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
