// The reference shape of bench:train (vocab 64, d 64, 2 layers, 4 heads, seq 48, batch 64): its
// batch, model, optimiser settings and one GRPO step, shared by bench/train.ts and
// bench/tf-kernel-ab.ts.
import * as tf from '@tensorflow/tfjs-core';
import { createRng } from '../core/rng.js';
import { solverConfigSchema } from '../src/solver/index.js';
import {
  type AdamW,
  initWeights,
  makeParams,
  type ModelConfig,
  type Params,
  policyLoss,
} from '../src/solver/testing.js';

export const SHAPE = { vocab: 64, d: 64, layers: 2, heads: 4, seq: 48, batch: 64 };

export function shapeBatch() {
  const rng = createRng(1);
  const N = SHAPE.batch,
    T = SHAPE.seq;
  const tokens = new Int32Array(N * T).map(() => rng.int(0, SHAPE.vocab - 1));
  const targets = new Int32Array(N * T).map(() => rng.int(0, SHAPE.vocab - 1));
  const adv = new Float32Array(N).map(() => rng.next() * 2 - 1);
  return { N, T, tokens, targets, adv };
}

export function shapeModel(): { mc: ModelConfig; params: Params } {
  const mc: ModelConfig = {
    vocabSize: SHAPE.vocab,
    dModel: SHAPE.d,
    layers: SHAPE.layers,
    heads: SHAPE.heads,
    mlpRatio: 4,
    maxPositions: SHAPE.seq,
  };
  return { mc, params: makeParams(initWeights(mc, createRng(2))) };
}

export const shapeOptim = { ...solverConfigSchema.parse({}).optim, totalSteps: 5000 };

/** One GRPO step (forward, backward, clip, AdamW) of logp() against the sampling log-probs `old`. */
export async function grpoStep(
  params: Params,
  opt: AdamW,
  logp: () => tf.Tensor2D,
  old: tf.Tensor2D,
  mask: tf.Tensor2D,
  adv: tf.Tensor1D,
): Promise<void> {
  const { value, grads } = tf.variableGrads(
    () =>
      policyLoss(
        { logp: logp(), old, mask, adv },
        { type: 'grpo', epsLow: 0.2, epsHigh: 0.2, beta: 0, maxLen: old.shape[1] },
      ).loss,
    [...params.values()],
  );
  const byName = new Map<string, tf.Tensor>();
  for (const [n, v] of params) byName.set(n, grads[v.name]!);
  const r = opt.apply(byName);
  await r.gradNorm.data();
  r.gradNorm.dispose();
  value.dispose();
}
