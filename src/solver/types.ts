// The solver's interface as the loop sees it (DESIGN.md, "Solver and the GRPO family").
import type { AnswerKind, AnswerShape } from '../../core/task.js';

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

/** What a policy is asked: the rendered task, the kind of answer, and (optionally) its type. */
export interface PolicyPrompt {
  text: string;
  kind: AnswerKind;
  /** The answer's type (task.ts, answerShape); the built-in solver decodes to it when typedAnswers is on. */
  shape?: AnswerShape;
}

export interface Policy {
  readonly backend: string;
  /** G samples per prompt, decoding constrained to the answer grammar of each prompt's kind (or shape). */
  sample(prompts: PolicyPrompt[], groupSize: number): Promise<Sample[][]>;
  /** Greedy answers, for mastery probes and evaluation. */
  greedy(prompts: PolicyPrompt[]): Promise<string[]>;
  /** One GRPO-family update on the last sampled batch with its rewards (rewards[g][i]). */
  update(rewards: number[][]): Promise<TrainStats>;
  save(dir: string): Promise<void>;
  load(dir: string): Promise<void>;
  dispose(): void;
}
