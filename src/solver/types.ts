// The solver's interface as the loop sees it (DESIGN.md, "Solver and the GRPO family").
import type { AnswerKind } from '../task.js';

export interface Sample {
  /** Index of the prompt in the request; answers with the same index form one group. */
  group: number;
  text: string;
}

export interface TrainStats {
  loss: number;
  meanAbsAdvantage: number;
  clipFraction: number;
  kl: number;
  entropy: number;
  tokens: number;
  /** Groups kept after dynamic sampling. */
  groups: number;
  lr: number;
  /** Mean raw reward of the batch (before shaping and dynamic sampling). */
  reward?: number;
  /** Global gradient norm before clipping (last inner iteration). */
  gradNorm?: number;
}

export interface Policy {
  readonly backend: string;
  /** G samples per prompt, decoding constrained to the answer grammar of each prompt's kind. */
  sample(prompts: { text: string; kind: AnswerKind }[], groupSize: number): Promise<Sample[][]>;
  /** Greedy answers, for mastery probes and evaluation. */
  greedy(prompts: { text: string; kind: AnswerKind }[]): Promise<string[]>;
  /** One GRPO-family update on the last sampled batch with its rewards (rewards[g][i]). */
  update(rewards: number[][]): Promise<TrainStats>;
  save(dir: string): Promise<void>;
  load(dir: string): Promise<void>;
  dispose(): void;
}
