// The learned grammar proposer's configuration (docs/proposers.md): off by default,
// so a run without this section draws exactly what the fixed generators draw.
import { z } from 'zod';

export const learnedProposerConfigSchema = z
  .object({
    /** Sample the grammar's choices from learned preferences instead of the fixed weights. */
    enabled: z.boolean().default(false),
    /**
     * REINFORCE step size on the preferences (logits added to the fixed weights' log). The update
     * is the mean over an arm's drafts of a round, so one round moves a logit by at most ~lr.
     */
    lr: z.number().positive().max(10).default(0.5),
    /** Reward for a task whose canonical hash the run has not seen before. */
    novelty: z.number().min(0).max(10).default(0.2),
    /** Reward for a draft the sandbox accepts (it runs, is deterministic, is no duplicate). */
    validity: z.number().min(0).max(10).default(0.2),
    /** Per-arm baseline: exponential moving average of the reward with this decay. */
    baselineDecay: z.number().min(0).max(0.999).default(0.9),
    /** Preferences are clipped to ±this, so no choice of the grammar ever becomes impossible. */
    maxLogit: z.number().positive().max(20).default(4),
  })
  .strict();

/**
 * The self-play mode (experimental, off by default): the built-in solver's transformer also writes
 * the fresh tasks, choosing the grammar's options under a constrained decoder (self-play.ts).
 */
export const selfPlayConfigSchema = z
  .object({
    enabled: z.boolean().default(false),
    /**
     * Choice tokens the model writes per candidate program; later choices take the fixed weights.
     * The model's positions grow to hold them (a self-play run's weights have this shape only).
     */
    maxChoices: z.number().int().min(1).max(512).default(48),
    /** Candidates one draft may decode before it counts as invalid (the kit would try 400). */
    maxCandidates: z.number().int().min(1).max(399).default(12),
    /** Reward for a task whose canonical hash the run has not seen before. */
    novelty: z.number().min(0).max(10).default(0.2),
    /** Reward for a draft the sandbox accepts. */
    validity: z.number().min(0).max(10).default(0.2),
    /** Weight of the proposer role's loss beside the solver role's in the joint update. */
    weight: z.number().min(0).max(10).default(1),
  })
  .strict();

/** `proposer:` in a run config; absent means every proposer setting at its default (all off). */
export const proposerConfigSchema = z
  .object({
    learned: learnedProposerConfigSchema.prefault({}),
    selfPlay: selfPlayConfigSchema.prefault({}),
  })
  .strict()
  .refine((p) => !(p.learned.enabled && p.selfPlay.enabled), {
    message: 'learned and selfPlay cannot both propose: enable one',
    path: ['selfPlay', 'enabled'],
  });

export type LearnedProposerConfig = z.infer<typeof learnedProposerConfigSchema>;
export type ProposerConfig = z.infer<typeof proposerConfigSchema>;
export type SelfPlayConfig = z.infer<typeof selfPlayConfigSchema>;
