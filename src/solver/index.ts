// The solver: a small transformer policy trained with the GRPO family (docs/DESIGN.md, "Solver and
// the GRPO family"). createPolicy() is what the loop uses; tests and benchmarks enter by testing.ts.
import { initBackend } from './backend.js';
import { solverConfigSchema, type SolverConfig } from './config.js';
import { TransformerPolicy } from './policy.js';
import type { TrainablePolicy } from './types.js';

export { solverConfigSchema, type SolverConfig, type SolverConfigInput } from './config.js';
export { answerIds } from './answer-grammar.js';
export { grammarFor } from './grammars.js';
export { answerFromView, answerInView, answerTokenIds } from './answer-view.js';
export { VIEW_RULE, hfTokenizer, viewAnswer, viewAnswerText, viewPrompt } from './served-view.js';
export type { Policy, PolicyPrompt, Rollout, SolverRollout, TrainablePolicy, TrainStats, UpdateAlso } from './types.js';
export type { ChoiceDecoder, ChoiceRow } from './choices.js';
export { parseAction, turnContext, type ActionTool, type EpisodeRows, type Turn } from './episodes.js';

/**
 * The built-in solver for a run of `totalSteps` updates (the learning-rate schedule spans them).
 * `batchFloats`: a training batch's memory budget (memoryChunks; default BATCH_FLOATS, lowered by
 * tests to check the chunked path).
 */
export async function createPolicy(
  cfg: SolverConfig,
  opts: { seed: number; totalSteps: number; log?: (line: string) => void; proposalLen?: number; batchFloats?: number },
): Promise<TrainablePolicy> {
  const log = opts.log ?? ((l: string) => console.error(l));
  const parsed = solverConfigSchema.parse(cfg);
  const backend = await initBackend(parsed.backend, { threads: parsed.threads, log });
  const policy = new TransformerPolicy(parsed, backend, opts.seed, opts.totalSteps, log, opts.proposalLen);
  if (opts.batchFloats !== undefined) policy.state.batchFloats = opts.batchFloats;
  return policy;
}
