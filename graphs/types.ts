// The skill graph interface (docs/DESIGN.md, "Skills and the skill graph"). Two stores implement
// it: embedded (SQLite, the run's database) and Neo4j. Writes arrive as events through the run
// store's outbox; `apply` must be idempotent (MERGE on ids) so that replaying the outbox is always
// safe.
import type { Skill } from '../core/task.js';

export interface GraphTask {
  id: string;
  type: string;
  family: string;
  level: number;
  program: string;
  skills: string[];
  hash: string;
  prompt: string;
  parent: { id: string; op: string } | null;
  solveRate: number | null;
  /** Who wrote the task: 'generator', 'llm:<model>', 'learned:grammar@<version>' (null in graphs written before it was recorded). */
  proposer?: string | null;
}

export type GraphEvent =
  | { kind: 'skills'; skills: Skill[] }
  | {
      kind: 'run';
      runId: string;
      preset: string;
      config: string;
      startedAt: string;
      endedAt?: string | null;
      status: string;
    }
  | { kind: 'task'; runId: string; step: number; task: GraphTask }
  | { kind: 'solve-rate'; taskId: string; solveRate: number }
  | {
      kind: 'mastery';
      runId: string;
      skillId: string;
      event: 'learned' | 'forgotten';
      step: number;
      at: string;
      accuracy: number;
      /** The trivial baseline of the skill's probe set (absent in events of runs made before it). */
      baseline?: number;
    }
  | { kind: 'checkpoint'; runId: string; id: string; step: number; path: string };

/** A MASTERED interval: open while untilStep is null. */
export interface Mastery {
  runId: string;
  skillId: string;
  sinceStep: number;
  sinceAt: string;
  untilStep: number | null;
  untilAt: string | null;
  /** Probe accuracy when the skill was learned. */
  accuracy: number;
  /** Probe accuracy when it was forgotten (null while open). */
  untilAccuracy?: number | null;
  /** The trivial baseline of the skill's probes when it was learned (null: recorded before baselines). */
  baseline?: number | null;
  /** The trivial baseline when it was forgotten (null while open, or recorded before baselines). */
  untilBaseline?: number | null;
}

export interface GraphRun {
  id: string;
  preset: string | null;
  config: string | null;
  startedAt: string | null;
  endedAt: string | null;
  status: string | null;
}

export interface GraphCheckpoint {
  id: string;
  runId: string;
  step: number | null;
  path: string | null;
}

/**
 * The whole graph in a canonical form (every list sorted by its key; a node referenced before it was
 * declared appears with null properties). Both stores return equal snapshots for equal event streams:
 * this is what the contract tests and the fault test compare, and what the exporters render.
 */
export interface GraphSnapshot {
  skills: Array<
    Omit<Skill, 'requires' | 'family' | 'name' | 'description' | 'level'> & {
      family: string | null;
      name: string | null;
      description: string | null;
      level: number | null;
    }
  >;
  requires: Array<{ skillId: string; requiresId: string }>;
  runs: GraphRun[];
  tasks: Array<
    Omit<GraphTask, 'skills' | 'parent' | 'type' | 'family' | 'level' | 'program' | 'hash' | 'prompt'> & {
      type: string | null;
      family: string | null;
      level: number | null;
      program: string | null;
      hash: string | null;
      prompt: string | null;
    }
  >;
  exercises: Array<{ taskId: string; skillId: string }>;
  derivedFrom: Array<{ taskId: string; parentId: string; op: string | null }>;
  proposed: Array<{ runId: string; taskId: string; step: number }>;
  mastered: Mastery[];
  checkpoints: GraphCheckpoint[];
  saved: Array<{ runId: string; checkpointId: string }>;
}

/** Where the outbox lives (the run store): events in order, each with a increasing sequence number. */
export interface OutboxSource {
  /** Up to `limit` undelivered events, oldest first (a store over the network answers asynchronously). */
  pending(limit: number): { seq: number; event: GraphEvent }[] | Promise<{ seq: number; event: GraphEvent }[]>;
  /** Marks every event with seq <= maxSeq as delivered. */
  markDone(maxSeq: number): void | Promise<void>;
}

export interface SkillGraph {
  readonly kind: 'embedded' | 'neo4j';
  /** Creates constraints/indexes/tables; idempotent. */
  init(): Promise<void>;
  /** Applies a batch of events idempotently, in order. */
  apply(events: GraphEvent[]): Promise<void>;
  skills(): Promise<Skill[]>;
  mastery(runId: string): Promise<Mastery[]>;
  /**
   * Exemplar tasks exercising a skill (optionally only those a run proposed): tasks with a solve rate
   * first, then by level, then id.
   */
  tasksForSkill(skillId: string, limit: number, runId?: string): Promise<GraphTask[]>;
  /**
   * Node and relationship counts by label/type: Skill, Task, Run, Checkpoint, REQUIRES, EXERCISES,
   * DERIVED_FROM, PROPOSED, MASTERED, SAVED (every key present, 0 when none).
   */
  counts(): Promise<Record<string, number>>;
  /** Runs, ordered by startedAt then id. */
  runs(): Promise<GraphRun[]>;
  /** One task by id, or null. */
  task(taskId: string): Promise<GraphTask | null>;
  /** The whole graph, canonical (see GraphSnapshot). */
  snapshot(): Promise<GraphSnapshot>;
  close(): Promise<void>;
}
