// The skill graph interface (DESIGN.md, "Skills and the skill graph"). Two stores implement it:
// embedded (SQLite, the run's database) and Neo4j. Writes arrive as events through the run store's
// outbox; `apply` must be idempotent (MERGE on ids) so that replaying the outbox is always safe.
import type { Skill } from '../src/task.js';

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
}

export type GraphEvent =
  | { kind: 'skills'; skills: Skill[] }
  | { kind: 'run'; runId: string; preset: string; config: string; startedAt: string; endedAt?: string | null; status: string }
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
  accuracy: number;
}

export interface SkillGraph {
  readonly kind: 'embedded' | 'neo4j';
  /** Creates constraints/indexes/tables; idempotent. */
  init(): Promise<void>;
  /** Applies a batch of events idempotently, in order. */
  apply(events: GraphEvent[]): Promise<void>;
  skills(): Promise<Skill[]>;
  mastery(runId: string): Promise<Mastery[]>;
  tasksForSkill(skillId: string, limit: number): Promise<GraphTask[]>;
  counts(): Promise<Record<string, number>>;
  close(): Promise<void>;
}
