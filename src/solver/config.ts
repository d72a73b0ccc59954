// The solver's configuration (zod 4). Every field has a default: solverConfigSchema.parse({}) is a
// working small model.
import { z } from 'zod';

export const BACKENDS = ['auto', 'tensorflow', 'webgpu', 'wasm', 'cpu'] as const;
export type BackendName = (typeof BACKENDS)[number];
export const LOSS_TYPES = ['grpo', 'bnpo', 'dr_grpo', 'dapo', 'gspo', 'gmpo'] as const;
export type LossType = (typeof LOSS_TYPES)[number];

export const modelSchema = z
  .strictObject({
    dModel: z.number().int().min(8).default(64),
    layers: z.number().int().min(1).default(2),
    heads: z.number().int().min(1).default(4),
    /** Prompts longer than this many tokens are truncated from the left (their end, nearest the answer, is kept). */
    maxPromptLen: z.number().int().min(1).default(128),
    /** Answer tokens (tokenizer.ts), not counting <eos>. */
    maxAnswerLen: z.number().int().min(1).default(40),
    mlpRatio: z.number().int().min(1).default(4),
  })
  .refine((m) => m.dModel % m.heads === 0, { message: 'dModel must be divisible by heads', path: ['dModel'] });

export const lossSchema = z.strictObject({
  type: z.enum(LOSS_TYPES).default('grpo'),
  /** Lower clip ε; default by type: 0.2 (grpo, bnpo, dr_grpo, dapo), 3e-4 (gspo), 0.4 in log space (gmpo). */
  epsLow: z.number().min(0).optional(),
  /** Upper clip ε; default by type: 0.2 (grpo, bnpo, dr_grpo), 0.28 (dapo), 4e-4 (gspo), 0.4 (gmpo). */
  epsHigh: z.number().min(0).optional(),
  /** k3 KL weight against the initial (frozen) policy; 0 keeps no reference model. */
  beta: z.number().min(0).default(0),
  /**
   * Entropy bonus: the objective subtracts this times the masked mean token entropy (of the
   * grammar-restricted distribution), against the collapse to one answer that leaves every group
   * zero-variance. 0 (the default) is the published losses unchanged.
   */
  entropy: z.number().min(0).default(0),
  /** Advantage scaling: per group std, batch std, or none (Dr. GRPO). */
  scale: z.enum(['group', 'batch', 'none']).default('group'),
  /** Inner iterations (optimizer steps) per rollout, on cached old log-probs. At 1 the ratio is 1 up to rounding, so the clip (epsLow, epsHigh) does not act. */
  mu: z.number().int().min(1).default(1),
  /** Drop groups whose rewards are all equal before the update (DAPO's dynamic sampling). */
  dynamicSampling: z.boolean().default(true),
  /** DAPO soft overlong penalty on the reward; on by default for dapo only. */
  overlong: z
    .strictObject({
      enabled: z.boolean().optional(),
      /** Penalty ramps linearly over the last `cache` tokens of maxAnswerLen. */
      cache: z.number().int().min(1).default(8),
      penalty: z.number().min(0).default(1),
    })
    .prefault({}),
});

export const optimSchema = z.strictObject({
  // Small on purpose: a larger step collapses the small model onto one answer (every group
  // zero-variance) early in an RL run unless self-imitation keeps its right answers (learn.yaml).
  lr: z.number().positive().default(1e-3),
  /** Decoupled (AdamW) decay of every matrix, embeddings included (as nanoGPT); vectors (biases, LayerNorm gains) are not. */
  weightDecay: z.number().min(0).default(0.01),
  beta1: z.number().min(0).max(1).default(0.9),
  beta2: z.number().min(0).max(1).default(0.99),
  eps: z.number().positive().default(1e-8),
  warmupSteps: z.number().int().min(0).default(5),
  /** Final learning rate of the cosine schedule, as a fraction of lr. */
  minLrRatio: z.number().min(0).max(1).default(0.1),
  /** Global gradient-norm clip; 0 disables. */
  gradClip: z.number().min(0).default(1),
});

export const samplingSchema = z.strictObject({
  temperature: z.number().min(0).default(1),
  topP: z.number().gt(0).max(1).default(1),
  /** 0 disables top-k. */
  topK: z.number().int().min(0).default(0),
});

export const solverConfigSchema = z.strictObject({
  backend: z.enum(BACKENDS).default('auto'),
  /**
   * wasm threads, or the tensorflow backend's native ops' threads (TensorFlow's own ops keep
   * TF_NUM_INTRAOP_THREADS, default 1); 0 = the backend's default (tensorflow: 1).
   */
  threads: z.number().int().min(0).default(0),
  /**
   * Threads an update runs on (data-parallel gradients, parallel.ts), on the wasm and cpu backends;
   * 0 = one per core up to 4 on wasm, 1 on cpu. 1 runs every update on the main thread.
   */
  workers: z.number().int().min(0).max(64).default(0),
  model: modelSchema.prefault({}),
  loss: lossSchema.prefault({}),
  optim: optimSchema.prefault({}),
  sampling: samplingSchema.prefault({}),
  /**
   * Self-imitation (self-imitation.ts): keep one rewarded answer of the policy's own per prompt and put it
   * into later groups of that prompt that find none. An extension of the published losses, off by
   * default; the recorded rewards, curricula and probes do not see it.
   */
  selfImitation: z.boolean().default(false),
  /**
   * Write a deduction's working before its answer (docs/solver-view.md, "The working"): each step of
   * the program's evaluation, its operands and `=` copied from a template the run gives with the
   * prompt (generators/working.ts) and its value written by the solver; the last value is the
   * answer. 'names' writes operands as the program names them (`a*b=+64;$1-a=+56`), 'values' writes
   * their values (`+08*+08=+64;+64-+08=+56`). 'off' answers at once, as before. Only deductions whose
   * program is a pure integer or boolean expression have a working; the others answer at once.
   */
  working: z.enum(['off', 'names', 'values']).default('off'),
  /**
   * Decode each answer in its type's grammar (an int where f returns an int, true/false where it
   * returns a boolean, the argument types for abduction) instead of any JSON literal. From random
   * initialisation this is what makes a first right answer possible (an untyped policy must first
   * learn to spell a literal; bench/results/learn.md has the counts).
   */
  typedAnswers: z.boolean().default(true),
  /**
   * A checkpoint directory (`runs/<id>/checkpoints/step-…`) whose model weights start this solver
   * instead of random ones: to go on training a solver under another curriculum or proposer. Only
   * the weights: the optimiser, its schedule and the sampling stream start fresh. The model shape
   * must be the checkpoint's.
   */
  init: z.string().min(1).optional(),
});

export type SolverConfig = z.infer<typeof solverConfigSchema>;
export type SolverConfigInput = z.input<typeof solverConfigSchema>;

export function clipRange(loss: SolverConfig['loss']): { epsLow: number; epsHigh: number } {
  const d: Record<LossType, [number, number]> = {
    grpo: [0.2, 0.2],
    bnpo: [0.2, 0.2],
    dr_grpo: [0.2, 0.2],
    dapo: [0.2, 0.28],
    gspo: [3e-4, 4e-4],
    gmpo: [0.4, 0.4],
  };
  const [lo, hi] = d[loss.type];
  return { epsLow: loss.epsLow ?? lo, epsHigh: loss.epsHigh ?? hi };
}
