// cogen's public library entry. Everything a training stack needs to propose, verify and track tasks.
export { createSandbox } from '../sandbox/index.js';
export type { Sandbox, Limits, RunResult, FailureReason } from '../sandbox/index.js';
export { verifyAnswer, verifyMany } from '../sandbox/index.js';
export { parseLiteral } from '../sandbox/index.js';
export {
  generateTask,
  materialise,
  mutate,
  families,
  getFamily,
  allSkills,
  renderCompact,
  renderNatural,
  canonicalHash,
} from '../generators/index.js';
export type { Family } from '../generators/index.js';
export { createController, curriculumConfigSchema } from '../curricula/index.js';
export type { Arm, Pick, Controller } from '../curricula/index.js';
export { openSkillGraph } from '../graphs/index.js';
export type { SkillGraph, GraphEvent, Mastery } from '../graphs/index.js';
export { createPolicy, solverConfigSchema } from './solver/index.js';
export type { Policy, Rollout, TrainStats } from './solver/index.js';
export { loadPreset, listPresets, parseConfig, runConfigSchema, ConfigError, type RunConfig } from './run/index.js';
export { startRun, type RunOptions, type RunSummary, type StepProgress } from './run/index.js';
export { RunStore } from './run/index.js';
export { exportTasks, exportRun, toRecord, EXPORT_FORMATS, EXPORT_KINDS } from './export.js';
export { createRng, type Rng } from '../core/rng.js';
export * from '../core/task.js';
export {
  Env,
  ENV_KINDS,
  ENV_SKILLS,
  generateEnv,
  validateEnv,
  playEpisode,
  referenceActions,
  referencePolicy,
  randomPolicy,
  replay,
  playWithChatModel,
  ScriptedToolModel,
  trajectoryMessages,
  EnvSessions,
} from '../envs/index.js';
export type {
  EnvSpec,
  EnvKind,
  EnvAction,
  EnvObservation,
  StepResult,
  Trajectory,
  ToolSchema,
  EnvMessage,
  Policy as EnvPolicy,
} from '../envs/index.js';
