// The curricula room's entry point: the config schema (embedded by src/run/config.ts under `curriculum`)
// and createController, which builds the named controller with its options and the exploration wrapper.
import { z } from 'zod';
import { BanditController, banditOptions } from './bandit.js';
import { EvolveController, evolveOptions } from './evolve.js';
import { withExploration } from './explore.js';
import { HardestController } from './hardest.js';
import { LadderController, ladderOptions } from './ladder.js';
import { LearnabilityController, learnabilityOptions } from './learnability.js';
import { LevelFrontierController, levelFrontierOptions } from './level-frontier.js';
import { masteryConfigSchema } from './mastery.js';
import { ProgressController, progressOptions } from './progress.js';
import { withRehearsal } from './rehearsal.js';
import { ReplayController, replayOptions } from './replay.js';
import type { Arm, Controller } from './types.js';
import { UniformController } from './uniform.js';
import { UnmasteredController } from './unmastered.js';

export const controllerNames = [
  'uniform',
  'hardest',
  'ladder',
  'learnability',
  'bandit',
  'progress',
  'replay',
  'level-frontier',
  'unmastered',
] as const;
export type ControllerName = (typeof controllerNames)[number];
/** Controllers that can choose the arms of replay's fresh tasks. */
export const baseControllerNames = ['uniform', 'hardest', 'ladder', 'learnability', 'bandit', 'progress'] as const;

const unit = () => z.number().min(0).max(1);

export const curriculumConfigSchema = z
  .strictObject({
    /** Which controller picks the arms. */
    controller: z.enum(controllerNames).default('learnability'),
    /** Fraction of picks drawn uniformly from the open arms, whatever the controller. */
    explore: unit().default(0.1),
    /**
     * Fraction of picks that rehearse a mastered skill (a fresh task of an open arm exercising it),
     * whatever the controller, so that learning one skill does not erase another. 0.15 is not tuned;
     * bench:mastery measures it against rehearsal 0 (bench/results/mastery.md).
     */
    rehearsal: unit().default(0.15),
    /** Open arms only when the skill graph says their prerequisites are mastered. */
    gating: z.boolean().default(false),
    ladder: ladderOptions.prefault({}),
    learnability: learnabilityOptions.prefault({}),
    bandit: banditOptions.prefault({}),
    progress: progressOptions.prefault({}),
    /**
     * RLVE's rule: an upper level h per family × type, raised at accuracy promoteAt over minPrompts
     * tasks at h (curricula/level-frontier.ts). Absent, its defaults; absent, too, from the config a
     * run stores, so that configs that do not name it stay as they were.
     */
    levelFrontier: levelFrontierOptions.optional(),
    /**
     * The frontier proposer (curricula/evolve.ts): a share of each batch made of harder or easier
     * children of the tasks the solver half-solves at h. It needs level-frontier's h. Absent, off,
     * and absent from the stored config, as levelFrontier.
     */
    evolve: evolveOptions.optional(),
    replay: replayOptions.extend({ base: z.enum(baseControllerNames).default('uniform') }).prefault({}),
    /** When probes count a skill as learned or forgotten (curricula/mastery.ts owns the schema). */
    mastery: masteryConfigSchema,
  })
  .refine((c) => !(c.evolve && c.evolve.share > 0 && c.controller !== 'level-frontier'), {
    message: 'evolve (the frontier proposer) needs controller: level-frontier, whose h it proposes at',
    path: ['evolve', 'share'],
  })
  .prefault({});

export type CurriculumConfig = z.infer<typeof curriculumConfigSchema>;
export type CurriculumConfigInput = z.input<typeof curriculumConfigSchema>;

function build(name: ControllerName, cfg: CurriculumConfig, arms: Arm[]): Controller {
  switch (name) {
    case 'uniform':
      return new UniformController();
    case 'hardest':
      return new HardestController();
    case 'ladder':
      return new LadderController(arms, cfg.ladder);
    case 'learnability':
      return new LearnabilityController(cfg.learnability);
    case 'bandit':
      return new BanditController(cfg.bandit);
    case 'progress':
      return new ProgressController(cfg.progress);
    case 'level-frontier':
      return new LevelFrontierController(cfg.levelFrontier ?? {});
    case 'unmastered':
      return new UnmasteredController();
    case 'replay': {
      const { base, ...opts } = cfg.replay;
      return new ReplayController(build(base, cfg, arms), opts);
    }
  }
}

/**
 * The controller a config names, wrapped with its fraction of uniform exploration and its share of
 * rehearsal of mastered skills (the loop passes them in PickContext). Skill gating is
 * not inside the controller: the loop passes only the open arms (curricula/gating.ts) in PickContext.
 */
export function createController(cfg: CurriculumConfig, arms: Arm[]): Controller {
  const built = build(cfg.controller, cfg, arms);
  const inner = cfg.evolve && cfg.evolve.share > 0 ? new EvolveController(built, cfg.evolve) : built;
  // Exploration or rehearsal around the baselines would change what they measure.
  const baseline = cfg.controller === 'uniform' || cfg.controller === 'hardest';
  return withRehearsal(withExploration(inner, baseline ? 0 : cfg.explore), baseline ? 0 : cfg.rehearsal);
}

export type {
  Arm,
  ArmResult,
  ArmType,
  Controller,
  MasteredSkill,
  Pick,
  PickContext,
  SkillArms,
  TaskArm,
} from './types.js';
export { armKey, isTaskArm } from './types.js';
export {
  frontierKey,
  LevelFrontierController,
  levelFrontierOptions,
  type LevelFrontierOptions,
} from './level-frontier.js';
export {
  createGate,
  type Gate,
  openArms,
  newlyOpened,
  unlockedSkills,
  isArmOpen,
  type GateSkill,
  type GatingInput,
} from './gating.js';
export {
  createMasteryTracker,
  MasteryTracker,
  masteryStep,
  emptyMastery,
  masteryConfigSchema,
  masterable,
  masteryBar,
  minProbes,
  passes,
  levelPassed,
  type LevelProbe,
  type MasteryEvent,
  type MasteryOptions,
  type MasteryState,
  type SkillProbe,
  type SkillProbes,
} from './mastery.js';
export { meanAbsAdvantage } from './dynamic.js';
export { EvolveController, evolveOptions, type EvolveOptions } from './evolve.js';
export { withExploration } from './explore.js';
export { masteredSkills, withRehearsal } from './rehearsal.js';
export { unmasteredSkills } from './unmastered.js';
