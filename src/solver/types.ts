// The solver's interface as the loop sees it (docs/DESIGN.md, "Solver and the GRPO family").
import type { AnswerKind, AnswerShape } from '../../core/task.js';
import type { ChoiceRow } from './choices.js';
import type { EpisodeRows } from './episodes.js';

/**
 * What sample() returns and update() takes back: the G answers to each prompt, and whatever else the
 * policy needs to learn from them, so that a policy keeps no state between the two calls.
 */
export interface Rollout {
  /** answers[g][i]: answer i of the G to prompt g */
  readonly answers: string[][];
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

/** A policy; R is its rollout (update takes back only rollouts its own sample returned). */
export interface Policy<R extends Rollout = Rollout> {
  readonly backend: string;
  /** G answers per prompt, decoding constrained to the answer grammar of each prompt's kind (or shape). */
  sample(prompts: PolicyPrompt[], groupSize: number): Promise<R>;
  /** Greedy answers, for mastery probes and evaluation. */
  greedy(prompts: PolicyPrompt[]): Promise<string[]>;
  /** One GRPO-family update on a rollout with its rewards, grouped as its answers (rewards[g][i]). */
  update(rollout: R, rewards: number[][]): Promise<TrainStats>;
  save(dir: string): Promise<void>;
  load(dir: string): Promise<void>;
  dispose(): void;
}

/** What an update trains on beside the rollout's answers. */
export interface UpdateAlso {
  /**
   * Self-play: the proposer role's rows, each with its own advantage; their loss (times
   * `proposalWeight`, default 1) is added to the solver role's (one policy, two roles).
   */
  proposals?: readonly ChoiceRow[];
  proposalWeight?: number;
  /** Environment arms' episodes, one group per environment (multi-turn GRPO's rows, episodes.ts turnRows). */
  episodes?: EpisodeRows[][];
}
