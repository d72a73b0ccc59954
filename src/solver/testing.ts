// The solver's second door, for tests and benchmarks only: what they look at inside the room (a
// policy's weights, log-probs, losses and gradients without a step; supervised steps; the model, its
// kernels and the decoders piece by piece). Product code enters by index.ts; the house's rules keep
// other rooms and the roof out of this door (.dependency-cruiser.cjs). The seams that exist for
// tests alone are written here, below the re-exports.
import * as tf from '@tensorflow/tfjs-core';
import type { AnswerShape } from '../../core/task.js';
import { readWeights, type Weights } from './checkpoint.js';
import { choiceTrainRows, type ChoiceRow } from './choices.js';
import { turnRows, type EpisodeRows } from './episodes.js';
import { answerFromView, answerInView, answerTokenIds } from './answer-view.js';
import { head, hidden, type Batch } from './model.js';
import { setVariable, type ModelConfig, type Params } from './params.js';
import { stateOf } from './policy.js';
import type { PolicyState } from './state.js';
import { refLogProbs, shardGrads, shardObjective, type ShardStatTensors, type TrainRow } from './train-step.js';
import type { RolloutRow, SolverRollout, TrainablePolicy } from './types.js';
import { currentLogProbs, prepare, trainInput, withKeptAnswers as keptAnswers } from './update.js';

export { actionTokens, answerGrammar, answerTokens, supervise, superviseActions } from './supervise.js';
export { workTemplate } from './work-grammar.js';
export type { RolloutRow } from './types.js';
export { initBackend } from './backend.js';
export { LOSS_TYPES, optimSchema, type LossType } from './config.js';
export { joinView, splitView, withSep } from './served-view.js';
export { BOS, EOS, SEP, TOKENS, VIEW, VOCAB_SIZE, charId, decode, encode, tokenText } from './tokenizer.js';
export { stepToken, tokenMask, type Grammar } from './answer-grammar.js';
export { allowedTokens } from './grammars.js';
export { actionGrammar } from './episodes.js';
export { decodeSafetensors, encodeSafetensors } from './safetensors.js';
export { AnswerReplay } from './self-imitation.js';
export { advantages, overlongPenalty, policyLoss, type LossNorm } from './loss.js';
export { AdamW, learningRate } from './optim.js';
export { gradsByName, memoryChunks, targetLogp, type TrainRow } from './train-step.js';
export { decodeMasked, decodeRows, type DecodeOptions, type DecodePrompt } from './decode.js';
export { initWeights, makeParams, paramShapes, setVariable, type ModelConfig, type Params } from './params.js';
export { gelu, layerNorm } from './layers.js';
export { head, hidden, type Batch } from './model.js';
export { groupedWindowLogits } from './grouped.js';
// decoding's two KV-cache paths, for the tests that compare them step by step
export * as compositeDecode from './grouped.js';
export * as kvDecode from './kv-decode.js';
export { fusedOp } from './fused.js';
export { setExplicitTranspose } from './gradients.js';
export { ShardWorkers, readArrays, setFastWasmKernels } from './accel/index.js';
export { FUSED } from './accel/fused-kernels.js';
export { assembleSimdModule, instantiateSimd } from './accel/simd.js';
export type { Weights } from './checkpoint.js';

/** Every weight's values, by name. */
export function policyWeights(policy: TrainablePolicy): Promise<Weights> {
  return readWeights(stateOf(policy).params);
}

/** Sets one weight entry (for finite differences). */
export function setWeight(policy: TrainablePolicy, name: string, index: number, value: number): void {
  const v = stateOf(policy).params.get(name)!;
  const d = v.dataSync().slice() as Float32Array;
  d[index] = value;
  setVariable(v, d);
}

/** The optimiser steps taken. */
export function optimizerStep(policy: TrainablePolicy): number {
  return stateOf(policy).opt.step;
}

/** Self-imitation's first step of an update: the rows and rewards with kept answers in (update.ts). */
export function withKeptAnswers(
  policy: TrainablePolicy,
  rollout: SolverRollout,
  rewards: number[][],
): Promise<{ rows: RolloutRow[][]; rewards: number[][] }> {
  return keptAnswers(stateOf(policy), rollout, rewards);
}

/** A rollout's log-probs, as sampled and as the current weights give them (equal before an update). */
export async function recomputeLogProbs(
  policy: TrainablePolicy,
  rollout: SolverRollout,
): Promise<{ sampled: number[][][]; recomputed: number[][][] }> {
  const recomputed = await currentLogProbs(stateOf(policy), rollout.rows, rollout.temperature);
  return {
    sampled: rollout.rows.map((g) => g.map((r) => Array.from(r.oldLogp))),
    recomputed: recomputed.map((g) => g.map((x) => Array.from(x))),
  };
}

/** Each turn row's log-probs under the current weights (equal to the sampling ones before an update). */
export async function turnLogProbs(
  policy: TrainablePolicy,
  rows: RolloutRow[],
  temperature: number,
): Promise<number[][]> {
  return (
    await currentLogProbs(
      stateOf(policy),
      rows.map((r) => [r]),
      temperature,
    )
  ).map((g) => Array.from(g[0]!));
}

/** Loss and gradients on a rollout without stepping, on this thread (for gradient checks). */
export async function lossAndGrads(
  policy: TrainablePolicy,
  rollout: SolverRollout,
  rewards: number[][],
): Promise<{ loss: number; grads: Map<string, Float32Array> }> {
  const s = stateOf(policy);
  const { groups } = prepare(s, rollout.rows, rewards);
  if (groups.length === 0) throw new Error('no group with a gradient');
  return gradsOf(s, groups, rollout.temperature);
}

/** Loss and gradients of the proposer role's rows alone, without stepping. */
export async function choiceGrads(
  policy: TrainablePolicy,
  proposals: readonly ChoiceRow[],
): Promise<{ loss: number; grads: Map<string, Float32Array> }> {
  const s = stateOf(policy);
  const extra = choiceTrainRows(proposals, s.cfg.model.maxPromptLen).map((r) => [r]);
  return gradsOf(s, extra, s.cfg.sampling.temperature);
}

/** The loss only (for finite differences). */
export async function lossOnly(policy: TrainablePolicy, rollout: SolverRollout, rewards: number[][]): Promise<number> {
  const s = stateOf(policy);
  return groupsLoss(s, prepare(s, rollout.rows, rewards).groups, rollout.temperature);
}

/** The multi-turn loss only (for tests of its mask). */
export async function episodesLoss(
  policy: TrainablePolicy,
  groups: EpisodeRows[][],
  temperature: number,
): Promise<number> {
  const s = stateOf(policy);
  return groupsLoss(s, turnRows(groups, s.cfg.loss.scale, false), temperature);
}

async function gradsOf(
  s: PolicyState,
  groups: TrainRow[][],
  temperature: number,
): Promise<{ loss: number; grads: Map<string, Float32Array> }> {
  const { grads: g, stats } = shardGrads(s.params, s.ref, s.setup, trainInput(s, groups, temperature));
  const out = new Map<string, Float32Array>();
  for (const [n, t] of g) {
    out.set(n, (await t.data()) as Float32Array);
    t.dispose();
  }
  return { loss: stats.loss, grads: out };
}

async function groupsLoss(s: PolicyState, groups: TrainRow[][], temperature: number): Promise<number> {
  if (groups.length === 0) throw new Error('no group with a gradient');
  const input = trainInput(s, groups, temperature);
  const ref = refLogProbs(s.ref, s.setup, input);
  const kept: { stats?: ShardStatTensors } = {};
  const l = tf.tidy(() =>
    shardObjective(s.params, s.setup, input, ref, (st) => {
      kept.stats = st;
    })(),
  );
  const v = (await l.data())[0]!;
  l.dispose();
  if (kept.stats) tf.dispose(Object.values(kept.stats));
  ref?.dispose();
  return v;
}

/** Whether `text` is a complete answer of this kind within maxLen tokens (<eos> aside). */
export function isWellFormed(kind: AnswerShape, text: string, maxLen: number): boolean {
  const written = answerInView(kind, text);
  // a text the view does not read back as itself is no answer the solver writes (`01` is read as 1)
  if (answerFromView(kind, written) !== text) return false;
  const ids = answerTokenIds(kind, text);
  return ids !== null && ids.length - 1 <= maxLen;
}

/**
 * Logits [N*A, V] for the A positions starting at column `from` (the answer window: the prompt's last
 * token and the answer inputs), from one full pass over whole rows: what grouped.ts's grouped form
 * must equal. Call inside tf.tidy / under a gradient.
 */
export function windowLogits(
  p: Params,
  c: ModelConfig,
  b: Batch,
  from: number,
  A: number,
  oneHot: boolean,
): tf.Tensor2D {
  const { h } = hidden(p, c, b, oneHot);
  const w = tf.slice(tf.reshape(h, [b.N, b.T, c.dModel]), [0, from, 0], [b.N, A, c.dModel]);
  return head(p, tf.reshape(w, [b.N * A, c.dModel]) as tf.Tensor2D);
}
