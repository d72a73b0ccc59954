// The GRPO family (docs/DESIGN.md, "Solver and the GRPO family"). Notation: for answer i, token t,
// lr = logp − old, ratio = exp(lr), A_i the advantage, m the completion mask.
//
//   grpo, bnpo, dr_grpo, dapo   token loss  ℓ = −min(ratio·A, clip(ratio, 1−εl, 1+εh)·A) + β·k3
//     grpo     mean_i [ Σ_t ℓ·m / max(Σ_t m, 1) ]
//     bnpo     Σ ℓ·m / max(Σ m, 1)                      (tokens of this batch)
//     dr_grpo  Σ ℓ·m / (answers · maxLen)               (maxLen = max completion tokens, a constant)
//     dapo     Σ ℓ·m / max(Σ m, 1)                      (tokens of the whole generation batch —
//              one batch here, so the same reduction as bnpo; DAPO differs by εh > εl, dynamic
//              sampling and the overlong penalty, which act on rewards before this function)
//   gspo   s_i = exp(Σ_t lr·m / max(Σ_t m, 1)),  ℓ_i = −min(s_i·A_i, clip(s_i, 1−εl, 1+εh)·A_i)
//   gmpo   lr' = sgn(A)·min(sgn(A)·lr, sgn(A)·clip(lr, −εl, εh))   (pessimistic log-space clip)
//          w_i = exp(Σ_t lr'·m / max(Σ_t m, 1)),   ℓ_i = −w_i·A_i
//   gspo, gmpo: loss = (1/N) Σ_i [Σ_t m > 0]·(ℓ_i + β·mean_t k3)
//   k3 = exp(ref − logp) − (ref − logp) − 1
//
// A data-parallel update (accel/parallel.ts) passes `norm`, the whole batch's answers and tokens: each
// shard then divides by those instead of its own, so the shard losses (and gradients) sum to the
// whole batch's. grpo's mean over answers becomes a sum over the shard's answers / norm.rows.
import * as tf from '@tensorflow/tfjs-core';
import type { LossType } from './config.js';

export interface LossInputs {
  /** [N, A] log-probs of the taken tokens under the current policy (differentiable). */
  logp: tf.Tensor2D;
  /** [N, A] log-probs under the policy that sampled (constant). */
  old: tf.Tensor2D;
  /** [N, A] log-probs under the frozen reference (constant); only when beta > 0. */
  ref?: tf.Tensor2D;
  /** [N, A] 1 for completion tokens, 0 for padding. */
  mask: tf.Tensor2D;
  /** [N] advantages. */
  adv: tf.Tensor1D;
}

export interface LossOptions {
  type: LossType;
  epsLow: number;
  epsHigh: number;
  beta: number;
  /** dr_grpo's constant completion length. */
  maxLen: number;
  /** The whole update's normalisers when this batch is one shard of it (see the header). */
  norm?: LossNorm;
}

export interface LossNorm {
  /** answers in the whole update */
  rows: number;
  /** completion tokens in the whole update */
  tokens: number;
}

export interface LossOutput {
  loss: tf.Scalar;
  /** Fraction of tokens (sequences for gspo) whose term was clipped. */
  clipFraction: tf.Scalar;
  /** Masked mean of k3 (0 without a reference). */
  kl: tf.Scalar;
}

export function policyLoss(x: LossInputs, o: LossOptions): LossOutput {
  const { logp, old, mask } = x;
  const N = o.norm?.rows ?? logp.shape[0];
  const A = tf.expandDims(x.adv, 1); // [N, 1]
  const lr = tf.sub(logp, old);
  const tokens = tf.sum(mask, 1); // [N]
  const tokensClamped = tf.maximum(tokens, 1);
  const total = o.norm ? tf.scalar(o.norm.tokens) : tf.maximum(tf.sum(mask), 1);
  const hasTokens = tf.cast(tf.greater(tokens, 0), 'float32');
  const meanPerRow = (t: tf.Tensor): tf.Tensor1D => tf.div(tf.sum(tf.mul(t, mask), 1), tokensClamped) as tf.Tensor1D;

  let k3: tf.Tensor | null = null;
  if (o.beta > 0) {
    if (!x.ref) throw new Error('policyLoss: beta > 0 needs ref log-probs');
    const d = tf.sub(x.ref, logp);
    k3 = tf.sub(tf.sub(tf.exp(d), d), 1);
  }
  const kl = k3 ? (tf.div(tf.sum(tf.mul(k3, mask)), total) as tf.Scalar) : tf.scalar(0);

  if (o.type === 'gspo' || o.type === 'gmpo') {
    let seqLog: tf.Tensor1D;
    let clipped: tf.Tensor;
    let perSeq: tf.Tensor1D;
    if (o.type === 'gspo') {
      seqLog = meanPerRow(lr);
      const s = tf.exp(seqLog);
      const a = tf.squeeze(A, [1]);
      const unclipped = tf.mul(s, a);
      const clippedTerm = tf.mul(tf.clipByValue(s, 1 - o.epsLow, 1 + o.epsHigh), a);
      perSeq = tf.neg(tf.minimum(unclipped, clippedTerm)) as tf.Tensor1D;
      const c = tf.logicalOr(
        tf.logicalAnd(tf.less(s, 1 - o.epsLow), tf.less(a, 0)),
        tf.logicalAnd(tf.greater(s, 1 + o.epsHigh), tf.greater(a, 0)),
      );
      clipped = tf.div(
        tf.sum(tf.mul(tf.cast(c, 'float32'), hasTokens)),
        o.norm ? o.norm.rows : tf.maximum(tf.sum(hasTokens), 1),
      );
    } else {
      const sgn = tf.sign(A);
      const sl = tf.mul(sgn, lr);
      const slc = tf.mul(sgn, tf.clipByValue(lr, -o.epsLow, o.epsHigh));
      const lrc = tf.mul(sgn, tf.minimum(sl, slc));
      seqLog = meanPerRow(lrc);
      perSeq = tf.neg(tf.mul(tf.exp(seqLog), tf.squeeze(A, [1]))) as tf.Tensor1D;
      const c = tf.cast(tf.less(slc, sl), 'float32');
      clipped = tf.div(tf.sum(tf.mul(c, mask)), total);
    }
    if (k3) perSeq = tf.add(perSeq, tf.mul(meanPerRow(k3), o.beta)) as tf.Tensor1D;
    const loss = tf.div(tf.sum(tf.mul(perSeq, hasTokens)), N) as tf.Scalar;
    return { loss, clipFraction: clipped as tf.Scalar, kl };
  }

  const ratio = tf.exp(lr);
  const unclipped = tf.mul(ratio, A);
  const clippedTerm = tf.mul(tf.clipByValue(ratio, 1 - o.epsLow, 1 + o.epsHigh), A);
  let per = tf.neg(tf.minimum(unclipped, clippedTerm));
  if (k3) per = tf.add(per, tf.mul(k3, o.beta));
  const isClipped = tf.logicalOr(
    tf.logicalAnd(tf.less(ratio, 1 - o.epsLow), tf.less(A, 0)),
    tf.logicalAnd(tf.greater(ratio, 1 + o.epsHigh), tf.greater(A, 0)),
  );
  const clipFraction = tf.div(tf.sum(tf.mul(tf.cast(isClipped, 'float32'), mask)), total) as tf.Scalar;
  let loss: tf.Scalar;
  switch (o.type) {
    case 'grpo':
      loss = tf.div(tf.sum(meanPerRow(per)), N);
      break;
    case 'bnpo':
    case 'dapo':
      loss = tf.div(tf.sum(tf.mul(per, mask)), total);
      break;
    case 'dr_grpo':
      loss = tf.div(tf.sum(tf.mul(per, mask)), N * o.maxLen);
      break;
  }
  return { loss, clipFraction, kl };
}

/**
 * Supervised learning through the same model (bench:ceiling, docs/solver-view.md): the cross-entropy
 * of given answers' tokens, −Σ logp·m / Σ m (the whole batch's tokens when `norm` is given).
 */
export function supervisedLoss(x: Pick<LossInputs, 'logp' | 'mask'>, norm?: LossNorm): LossOutput {
  const total = norm ? tf.scalar(norm.tokens) : tf.maximum(tf.sum(x.mask), 1);
  return {
    loss: tf.div(tf.neg(tf.sum(tf.mul(x.logp, x.mask))), total) as tf.Scalar,
    clipFraction: tf.scalar(0),
    kl: tf.scalar(0),
  };
}

/**
 * Advantages from rewards[g][i]: r − mean(group), divided by (std + 1e-4) of the group (`group`),
 * of the whole batch (`batch`), or not at all (`none`). std is the unbiased sample std (as TRL);
 * a group of one has std 0.
 */
export function advantages(rewards: number[][], scale: 'group' | 'batch' | 'none'): number[][] {
  const std = (xs: number[]): number => {
    if (xs.length < 2) return 0;
    const m = xs.reduce((a, b) => a + b, 0) / xs.length;
    return Math.sqrt(xs.reduce((a, b) => a + (b - m) ** 2, 0) / (xs.length - 1));
  };
  const batchStd = std(rewards.flat());
  return rewards.map((g) => {
    const m = g.reduce((a, b) => a + b, 0) / Math.max(g.length, 1);
    const s = scale === 'group' ? std(g) : scale === 'batch' ? batchStd : null;
    return g.map((r) => (s === null ? r - m : (r - m) / (s + 1e-4)));
  });
}

/** DAPO's soft overlong penalty for an answer of `len` tokens (0, a linear ramp, then −penalty). */
export function overlongPenalty(len: number, maxLen: number, cache: number, penalty = 1): number {
  if (len <= maxLen - cache) return 0;
  if (len <= maxLen) return (penalty * (maxLen - cache - len)) / cache;
  return -penalty;
}
