// The solver's interface as the loop sees it (docs/DESIGN.md, "Solver and the GRPO family").
import type { AnswerKind, AnswerShape } from '../../core/task.js';
import type { ChoiceDecoder, ChoiceRow } from './choices.js';
import type { SolverConfig } from './config.js';
import type { DecodedRow } from './decode.js';
import type { ActionTool, EpisodeRows } from './episodes.js';

/**
 * What sample() returns and update() takes back: the G answers to each prompt, and whatever else the
 * policy needs to learn from them, so that a policy keeps no state between the two calls.
 */
export interface Rollout {
  /** answers[g][i]: answer i of the G to prompt g */
  readonly answers: string[][];
  /** written[g][i]: answer i as the solver wrote it, where that is a working (docs/solver-view.md, "The working"); else undefined. */
  readonly written?: (string | undefined)[][];
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
  /** The task's working template (core/working.ts), for a solver that writes its working (solver.working). */
  work?: AnswerShape;
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

/** One sampled answer of the built-in solver, with what the update needs: its tokens, sampling log-probs and grammar masks. */
export type RolloutRow = DecodedRow;

/** The built-in solver's rollout: each answer's row, grouped as the answers, and the temperature it was sampled at. */
export interface SolverRollout extends Rollout {
  /** rows[g][i] holds answers[g][i] */
  readonly rows: RolloutRow[][];
  readonly temperature: number;
}

/**
 * The built-in solver as a run trains it: a Policy whose update also takes what a run trains on
 * beside the answers, and what environment play (src/run/env-training.ts) and self-play
 * (src/run/self-play-parts.ts) ask of it. A chat-model solver is a Policy only: it neither plays
 * environments nor proposes.
 */
export interface TrainablePolicy extends Policy<SolverRollout> {
  readonly cfg: SolverConfig;
  /** One update on the rollout's groups, and on `also`'s rows in the same optimiser step. */
  update(rollout: SolverRollout, rewards: number[][], also?: UpdateAlso): Promise<TrainStats>;
  /** One action per context (its text cut from the left to maxPromptLen), decoded under its tools' action grammar. */
  decodeActions(prompts: { text: string; tools: readonly ActionTool[] }[], greedy: boolean): Promise<RolloutRow[]>;
  /**
   * One multi-turn GRPO update on environment episodes alone: groups[g] are the episodes of one
   * environment, played at `temperature` (episodes.ts turnRows); the loss covers the agent's tokens only.
   */
  updateEpisodes(groups: EpisodeRows[][], temperature: number): Promise<TrainStats>;
  /** The model as a proposer (self-play): a decoder of choice tokens after `prompt`, at the sampling temperature. */
  openChoices(prompt: string): ChoiceDecoder;
  /**
   * A checkpoint's model weights as the starting point (solver.init), and as the KL reference where
   * one is kept; the optimiser and the sampling stream stay as created.
   */
  loadWeights(dir: string): Promise<void>;
}
