// bench:train's fixed-shape step (the vocab 64, d 64, 2 layers, 4 heads, seq 48, batch 64)
// as a ShardModule (src/solver/accel/parallel.ts), so that the shard workers can run it data-parallel:
// the same model, batch and GRPO loss as train.ts's single-thread step, on a shard of the rows.
import * as tf from '@tensorflow/tfjs-core';
import {
  gradsByName,
  head,
  hidden,
  type LossNorm,
  type ModelConfig,
  type Params,
  paramShapes,
  policyLoss,
  targetLogp,
} from '../src/solver/testing.js';

export interface ShapeSetup {
  mc: ModelConfig;
}

/** Rows of token ids, their next-token targets and advantages, and (for a shard) the whole batch's normalisers. */
export interface ShapeRows {
  N: number;
  T: number;
  tokens: Int32Array;
  targets: Int32Array;
  adv: Float32Array;
  /** sampling log-probs [N·T] */
  old?: Float32Array;
  norm?: LossNorm;
}

/** Log-probs [N, T] of the targets: our model (fused qkv matMul, batched attention, accel/'s kernels on wasm). */
export function shapeLogp(params: Params, mc: ModelConfig, b: ShapeRows): tf.Tensor2D {
  const { h } = hidden(params, mc, { tokens: b.tokens, N: b.N, T: b.T, pad: new Int32Array(b.N) }, true);
  return tf.reshape(targetLogp(head(params, h), b.targets, false).logp, [b.N, b.T]) as tf.Tensor2D;
}

export const shardParamShapes = (s: ShapeSetup): [string, number[]][] => paramShapes(s.mc);

export function shardGrads(
  params: Params,
  _ref: Params | null,
  s: ShapeSetup,
  b: ShapeRows,
): { grads: Map<string, tf.Tensor>; stats: Record<string, number> } {
  const grads = gradsByName(params, () =>
    tf.tidy(
      () =>
        policyLoss(
          {
            logp: shapeLogp(params, s.mc, b),
            old: tf.tensor2d(b.old!, [b.N, b.T]),
            mask: tf.ones([b.N, b.T]) as tf.Tensor2D,
            adv: tf.tensor1d(b.adv),
          },
          { type: 'grpo', epsLow: 0.2, epsHigh: 0.2, beta: 0, maxLen: b.T, norm: b.norm },
        ).loss,
    ),
  );
  return { grads, stats: {} };
}
