// The curriculum interface (docs/DESIGN.md, "Curricula"). Controllers see per-arm statistics only.
import type { Rng } from '../core/rng.js';
import { TASK_TYPES, type EnvKind, type TaskType } from '../core/task.js';

/** What an arm serves: a task type, or an environment kind (envs/). The two sets of names are disjoint. */
export type ArmType = TaskType | EnvKind;

/** An arm is one (family, level, task type or environment kind) cell of the task space. */
export interface Arm {
  family: string;
  level: number;
  type: ArmType;
}
/** An arm that serves tasks (the generators' and proposers' arms). */
export interface TaskArm extends Arm {
  type: TaskType;
}

export const isTaskArm = (arm: Arm): arm is TaskArm => (TASK_TYPES as readonly string[]).includes(arm.type);

export const armKey = (a: Arm): string => `${a.family}/${a.level}/${a.type}`;

/** What the controller asks the proposer for: a fresh task of an arm, or a replay/mutation of an archived one. */
export type Pick =
  | {
      kind: 'new';
      arm: Arm;
      /**
       * Skills the fresh task should not be made of alone (the mastered ones, from a controller that
       * follows mastery): the generators pass over up to AVOID_DRAFTS drafts whose every skill is
       * here (generators/generate.ts), and an exhausted arm replays another where it has one
       * (src/run/parts.ts); an arm with nothing else gives one anyway.
       */
      avoid?: readonly string[];
    }
  | { kind: 'replay'; arm: Arm; taskId: string }
  | {
      kind: 'mutate';
      arm: Arm;
      taskId: string;
      /** A directed operator or crossover (the frontier proposer's, curricula/evolve.ts); absent, any of replay's. */
      op?: string;
      /** The second parent of a crossover. */
      mate?: string;
    };

/** The outcome of one task in one step, fed back to the controller. */
export interface ArmResult {
  arm: Arm;
  taskId: string;
  step: number;
  /** Rewards of the G answers. */
  rewards: number[];
  /** Solve rate p over the G answers (reward ≥ 1 counts as solved). */
  solveRate: number;
  /** Mean |advantage| of the group (0 when all rewards are equal). */
  meanAbsAdvantage: number;
  /** Every skill the task exercises was mastered when it was scored: practice, not learning. */
  practice?: boolean;
  /** The task is a proposed child (a mutation or crossover) and the operator that made it: it never counts toward h's promotion. */
  child?: { op: string };
}

export interface PickContext {
  step: number;
  /** Arms the proposer can materialise; with skill gating, only the open ones. */
  arms: Arm[];
  /** Skills mastered now, each with the arms that exercise it (what rehearsal draws from); none when absent. */
  mastered?: MasteredSkill[];
  /**
   * Masterable skills not mastered now, each with the open arms that exercise it (what the
   * unmastered controller weighs arms by); none when absent.
   */
  unmastered?: SkillArms[];
  /**
   * Families whose task levels go on past the arms listed, with the highest level each may reach
   * (the run's maxLevel or the family's last renderable level; docs/levels.md): only the
   * level-frontier controller picks those levels. A family is here only while its highest listed
   * level is open.
   */
  ceilings?: ReadonlyMap<string, number>;
}

/** A skill and the open arms at its family and level (src/run's probes for it are drawn there). */
export interface SkillArms {
  skillId: string;
  arms: Arm[];
}
export type MasteredSkill = SkillArms;

export interface Controller {
  readonly name: string;
  pick(n: number, rng: Rng, ctx: PickContext): Pick[];
  update(results: ArmResult[]): void;
  /** JSON-serialisable state, saved with checkpoints. */
  state(): unknown;
  restore(state: unknown): void;
  /** The level frontier h of each family × type (`family/type`), for a controller that keeps one (else undefined). */
  frontier?(): Record<string, number> | undefined;
}
