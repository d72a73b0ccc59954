// The run room's door (docs/DESIGN.md, "The house"): an autonomous run (the loop), what a run and a
// served run share (task space, proposing, probes, graph sinks), a run's records and its config. The
// rest of the roof (the command line, the server, the dashboard, the workers) enters here.
export { ConfigError, listPresets, loadPreset, parseConfig, runConfigSchema, type RunConfig } from './config.js';
export { serveConfigSchema, type ServeConfig } from './serve-config.js';
export type { RunOptions, RunSummary, StepProgress } from './loop.js';
import type { startRun as run } from './loop.js';
/** Runs an autonomous run (./loop.ts), loaded on first use: the loop brings the LLM agents (LangChain), which a served run never loads. */
export const startRun: typeof run = async (...args) => (await import('./loop.js')).startRun(...args);
export { createProgress, formatDuration } from './progress.js';
export {
  frontierMetrics,
  learnedMetrics,
  learnedProposerOf,
  openCeilings,
  openGraphs,
  propose,
  sandboxOf,
  taskSpace,
  type GraphSink,
  type TaskSpace,
} from './parts.js';
export {
  latestSkillProbes,
  masterableSkills,
  masterySummary,
  probeScores,
  probeSets,
  SKILL_PROBE_PREFIX,
  skillProbeMetrics,
  type Probe,
} from './probes.js';
export { drawRunProbes, storedRunProbeIds } from './draw-probes.js';
export { evalSet } from './level-evals.js';
export {
  climbOf,
  frontierHistory,
  LEVEL_PREFIX,
  levelSetMetrics,
  levelsPassedOf,
  reachedAt,
  OLD_LEVEL_PREFIX,
  PASSED_PREFIX,
  type FamilyClimb,
  type LevelClimb,
  type LevelResult,
} from './level-sets.js';
export { answerOf, spaceFamily, verifyTasks } from './verification.js';
export {
  RunStore,
  StoreError,
  type EnvEpisodeRow,
  type IssueRecord,
  type StoredRequest,
  type TaskRow,
} from './records/store.js';
export {
  armResult,
  graphTask,
  masteryRecords,
  newRunId,
  newTaskRecords,
  refuseExisting,
  runEvent,
} from './records/rows.js';
export type { Prefetch, ServedRecords, WriteOp, WriterTx } from './records/types.js';
export { RunOpening } from './records/opening.js';
export { TaskArchive } from './task-archive.js';
export { SqliteRecords } from './records/sqlite.js';
export { PgRecords } from './records/postgres.js';
