// The src/run room's second door, for test/ and bench/ only: the internals they check directly. The
// house enters by index.ts (docs/DESIGN.md, "The house"); nothing in it imports this file.
export { caseType, valueClass } from './case-type.js';
export { drawRunProbes, storedRunProbeIds } from './draw-probes.js';
export {
  evaluateSolver,
  oneTokenEdits,
  playSolver,
  solverObservation,
  solverPrompt,
  solverTools,
  toEnvAction,
  trainAgentic,
  type Actor,
  type SolverEpisode,
} from './env-training.js';
export {
  demonstrate,
  demonstrator,
  type Demonstration,
  type Demonstrator,
  type DemonstratorOptions,
  type ShownView,
} from './env-demonstrators.js';
export { envBaseline, type EnvProbe } from './env-arms.js';
export { evalSet, LevelEvals } from './level-evals.js';
export { taskPrompt } from './prompts.js';
export { climbOf, frontierHistory, levelsPassedOf, levelSetMetrics, reachedAt } from './level-sets.js';
export { learnedProposerOf, sandboxOf, taskSpace } from './parts.js';
export {
  buildProbes,
  canonical,
  holdLimit,
  latestSkillProbes,
  masterySummary,
  probeScores,
  probeSets,
  skillProbeSet,
  trivialBaseline,
  trivialGroup,
  trivialKeys,
  type Probe,
} from './probes.js';
export { schemaOf } from './records/pg-schema.js';
export { parsePgUrl } from './records/pg-url.js';
export { RunStore, type TaskRow } from './records/store.js';
export { referenceWorking, trainingReward } from './training-reward.js';
export { answerOf, availableFamilies, drawTask, spaceFamily, verifyTasks } from './verification.js';
