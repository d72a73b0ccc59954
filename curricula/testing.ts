// The curricula room's second door, for test/ and bench/ only: the internals they check directly. The
// house enters by index.ts (docs/DESIGN.md, "The house"); nothing in it imports this file.
export { BanditController, banditUpdate } from './bandit.js';
export { meanAbsAdvantage } from './dynamic.js';
export { createGate, newlyOpened, openArms, unlockedSkills, type GateSkill, type GatingInput } from './gating.js';
export { hardestArms } from './hardest.js';
export { LadderController } from './ladder.js';
export { LearnabilityController } from './learnability.js';
export {
  MasteryTracker,
  binomialTail,
  createMasteryTracker,
  emptyMastery,
  masterable,
  masteryConfigSchema,
  masteryStep,
  minProbes,
  masteryBar,
  passes,
  levelPassed,
  type LevelProbe,
} from './mastery.js';
export { ProgressController } from './progress.js';
export { RehearsalWrapper, withRehearsal } from './rehearsal.js';
export { ReplayController, replayProbabilities, type ArchiveEntry } from './replay.js';
export { simArms, simulate } from './sim.js';
export {
  armKey,
  type Arm,
  type ArmResult,
  type Controller,
  type MasteredSkill,
  type Pick,
  type TaskArm,
} from './types.js';
export { UniformController } from './uniform.js';
export { UnmasteredController } from './unmastered.js';
export { normalise, slope, softmax } from './util.js';
