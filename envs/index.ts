// The environment room (docs/DESIGN.md, "Environments"): multi-turn, tool-using environments made
// from the same programs as the tasks, checked by the same sandbox. Enter through here.
export * from './types.js';
export { Env, toolsOf } from './env.js';
export {
  ENV_SKILLS,
  envId,
  envSkills,
  envSourceType,
  generateEnv,
  validateEnv,
  type GenerateEnvOptions,
  type ValidatedEnv,
} from './generate.js';
export {
  CONSTANT_SUBMISSIONS,
  constantSolves,
  constantSubmission,
  playEpisode,
  randomPolicy,
  referenceActions,
  referencePolicy,
  replay,
  type Policy,
} from './policies.js';
export { MAX_OBSERVATION_CHARS, MAX_PROGRAM_CHARS, resultText, runAll } from './kinds/common.js';
export { ENV_SYSTEM_PROMPT, toolCallId, trajectoryMessages, type EnvMessage, type ToolCall } from './chat.js';
export {
  EnvSessions,
  EnvSessionError,
  requestRng,
  type EnvRequest,
  type EnvSessionOptions,
  type StartedEpisode,
} from './sessions.js';
export { NO_TOOL_CALL, ScriptedToolModel, playWithChatModel, type ToolScript } from './llm.js';
