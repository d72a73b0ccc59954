// cogen's public library entry. Everything a training stack needs to propose, verify and track tasks.
export { createSandbox } from '../sandbox/index.js';
export type { Sandbox, Limits, RunResult, FailureReason } from '../sandbox/types.js';
export { verifyAnswer, verifyMany } from '../sandbox/verify.js';
export { parseLiteral } from '../sandbox/answer.js';
export { generateTask, materialise, mutate, families, getFamily, allSkills, renderCompact, renderNatural, canonicalHash } from '../generators/index.js';
export type { Family } from '../generators/types.js';
export { createController, curriculumConfigSchema } from '../curricula/index.js';
export type { Arm, Pick, Controller } from '../curricula/types.js';
export { openSkillGraph } from '../graphs/index.js';
export type { SkillGraph, GraphEvent, Mastery } from '../graphs/types.js';
export { createPolicy, solverConfigSchema } from './solver/index.js';
export type { Policy, TrainStats } from './solver/types.js';
export { loadPreset, listPresets, parseConfig, runConfigSchema, ConfigError, type RunConfig } from './config.js';
export { startRun, type RunOptions, type RunSummary, type StepProgress } from './loop.js';
export { RunStore } from './store.js';
export { exportTasks, exportRun, toRecord, EXPORT_FORMATS, EXPORT_KINDS } from './export.js';
export { createRng, type Rng } from './rng.js';
export * from './task.js';
