// The learned grammar proposer's configuration (issue 24): off by default, so a run without this
// section draws exactly what the fixed generators draw.
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

/** `proposer:` in a run config; absent means every proposer setting at its default (all off). */
export const proposerConfigSchema = z
  .object({
    learned: learnedProposerConfigSchema.prefault({}),
  })
  .strict();

export type LearnedProposerConfig = z.infer<typeof learnedProposerConfigSchema>;
export type ProposerConfig = z.infer<typeof proposerConfigSchema>;
