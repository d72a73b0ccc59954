// The one seam where faster kernels plug in. model.ts, layers.ts, optim.ts and gradients.ts write every op in
// plain tfjs. Some of those ops are many small kernels each (LayerNorm and GELU with their
// gradients, Softmax's gradient, the AdamW step, attention, a product with a bias, the targets'
// log-probs, a whole decoding step); accel/ has them as fused passes and plugs them in here: the
// first four on wasm, all but Softmax's gradient on tensorflow. A caller asks for the fused op first
// and runs its own composite when there is none: on other backends, without the native code, or
// with the fast kernels switched off. Both compute the same formulas (the tests check both against
// float64 references, or the decoding step against the composite's).
import type * as tf from '@tensorflow/tfjs-core';

/** One AdamW step's scalars (optim.ts). */
export interface AdamWStep {
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  /** 1 − lr·weightDecay on decayed parameters, else 1 */
  decay: number;
  /** bias corrections 1 − β1^t and 1 − β2^t */
  bc1: number;
  bc2: number;
}

/**
 * The step's scalars in the order both fused kernels take them (the wasm module's adamw, tf-ops.cc's
 * CogenAdamW): lr, β1, 1 − β1, β2, 1 − β2, ε, decay, bc1, bc2 — 1 − β computed here, in double, as
 * the composite computes it before uploading.
 */
export const adamwScalars = (
  a: AdamWStep,
): [number, number, number, number, number, number, number, number, number] => [
  a.lr,
  a.beta1,
  1 - a.beta1,
  a.beta2,
  1 - a.beta2,
  a.eps,
  a.decay,
  a.bc1,
  a.bc2,
];

export interface FusedOps {
  /** LayerNorm over the last axis, with its gradient (layers.ts's layerNorm). */
  layerNorm(x: tf.Tensor, g: tf.Tensor, b: tf.Tensor): tf.Tensor;
  /** GELU, tanh approximation, with its gradient (layers.ts's gelu). */
  gelu(x: tf.Tensor): tf.Tensor;
  /** Softmax's gradient over the last axis, y·(dy − Σ dy·y) (gradients.ts). */
  softmaxGrad(y: tf.Tensor, dy: tf.Tensor): tf.Tensor;
  /**
   * The targets' log-probabilities and the rows' entropies of logits z [n, V] (train-step.ts's
   * targetLogp), as [logp [n], ent [n]]; with z's gradient (targets, ints, have none).
   */
  targetLogp(z: tf.Tensor2D, targets: tf.Tensor1D): [tf.Tensor1D, tf.Tensor1D];
  /** x·w + b, x [n, k], w [k, m], b [m] (layers.ts's linear), with the gradients of all three. */
  linear(x: tf.Tensor2D, w: tf.Tensor, b: tf.Tensor): tf.Tensor2D;
  /**
   * Causal self-attention of qkv [N·T, 3d] (q, k and v side by side, as c_attn makes them) split into
   * `heads` heads, merged back into [N·T, d] (model.ts's attention without a cache):
   * softmax(q·kᵀ/√dh + mask)·v, mask [N|1, 1, T, T] additive and without gradient; with qkv's gradient.
   */
  attention(qkv: tf.Tensor2D, mask: tf.Tensor, heads: number): tf.Tensor2D;
  /** One AdamW step of one parameter, in optim.ts's operation order: [p', m', v']. */
  adamw(p: tf.Tensor, g: tf.Tensor, m: tf.Tensor, v: tf.Tensor, scale: tf.Tensor, step: AdamWStep): tf.Tensor[];
  /** One decoding step of the whole model (kv-decode.ts), without gradient: [logits [N, V], this token's keys and values [layers, 2, N, d]]. */
  decodeStep(s: DecodeStepInputs): [tf.Tensor2D, tf.Tensor];
}

/**
 * A decoding step's inputs (kv-decode.ts): N = B·G rows, row r answering prompt ⌊r / G⌋; each
 * prompt's keys and values are read from its layers' c_attn products (q, k and v side by side).
 */
export interface DecodeStepInputs {
  /** [N] int32: the step's tokens */
  ids: tf.Tensor;
  /** [] int32: their position id */
  pos: tf.Tensor;
  /** [B] int32: left pads of each prompt (keys hidden) */
  pad: tf.Tensor;
  /** per layer [B·Tp, 3d]: the prompt's c_attn product */
  prompt: tf.Tensor[];
  /** per earlier answer token [layers, 2, N, d]: its keys and values, as this op returned them */
  past: tf.Tensor[];
  /** the model's parameters in paramShapes order (params.ts) */
  weights: tf.Tensor[];
  heads: number;
}

export type FusedOpName = keyof FusedOps;

let plugged: { ops: FusedOps; applies: (op: FusedOpName, size: number) => boolean } | null = null;

/** accel/ plugs its ops in; `applies(op, size)` says whether one runs now (on this backend, for `size` floats). */
export function plugFusedOps(ops: FusedOps, applies: (op: FusedOpName, size: number) => boolean): void {
  plugged = { ops, applies };
}

/** The fused version of `op` when one applies on the current backend to `size` floats; else null. */
export function fusedOp<K extends FusedOpName>(op: K, size = 0): FusedOps[K] | null {
  return plugged?.applies(op, size) ? plugged.ops[op] : null;
}
