// AdamW (decoupled weight decay, as torch.optim.AdamW) with global-norm gradient clipping and a
// linear warm-up + cosine learning-rate schedule. Decay applies to matrices and embeddings only
// (rank ≥ 2), as nanoGPT does.
import * as tf from '@tensorflow/tfjs-core';
import type { SolverConfig } from './config.js';
import { fusedOp } from './fused.js';
import type { Params } from './params.js';

/** The optimiser's settings, and the schedule's length: the run's steps (a run's property, not a preset's). */
export type OptimConfig = SolverConfig['optim'] & { totalSteps: number };

export function learningRate(step: number, o: OptimConfig): number {
  if (o.warmupSteps > 0 && step < o.warmupSteps) return (o.lr * (step + 1)) / o.warmupSteps;
  const span = Math.max(1, o.totalSteps - o.warmupSteps);
  const t = Math.min(1, (step - o.warmupSteps) / span);
  const min = o.lr * o.minLrRatio;
  return min + 0.5 * (o.lr - min) * (1 + Math.cos(Math.PI * t));
}

export class AdamW {
  /** Optimizer steps taken so far. */
  step = 0;
  readonly m = new Map<string, tf.Variable>();
  readonly v = new Map<string, tf.Variable>();

  constructor(
    private readonly params: Params,
    private readonly cfg: OptimConfig,
  ) {
    for (const [name, p] of params) {
      this.m.set(name, tf.variable(tf.zerosLike(p), false));
      this.v.set(name, tf.variable(tf.zerosLike(p), false));
    }
  }

  /** Clips, applies one update, disposes `grads`. Returns the learning rate used and the pre-clip gradient norm (a tensor; the caller reads it). */
  apply(grads: Map<string, tf.Tensor>): { lr: number; gradNorm: tf.Scalar } {
    const o = this.cfg;
    const lr = learningRate(this.step, o);
    this.step++;
    const t = this.step;
    const bc1 = 1 - o.beta1 ** t;
    const bc2 = 1 - o.beta2 ** t;
    const gradNorm = tf.tidy(() => {
      const sq = [...grads.values()].map((g) => tf.sum(tf.square(g)));
      const norm = tf.sqrt(tf.addN(sq)) as tf.Scalar;
      const scale = o.gradClip > 0 ? tf.minimum(tf.scalar(1), tf.div(o.gradClip, tf.add(norm, 1e-6))) : tf.scalar(1);
      for (const [name, p] of this.params) {
        const g0 = grads.get(name);
        if (!g0) continue;
        const m = this.m.get(name)!;
        const v = this.v.get(name)!;
        const decay = p.shape.length >= 2 && o.weightDecay > 0 ? 1 - lr * o.weightDecay : 1;
        const fused = fusedOp('adamw', p.size);
        if (fused) {
          // the same step, in the same operation order, in one pass (fused.ts)
          const [p1, m1, v1] = fused(p, g0, m, v, scale, {
            lr,
            beta1: o.beta1,
            beta2: o.beta2,
            eps: o.eps,
            decay,
            bc1,
            bc2,
          });
          m.assign(m1!);
          v.assign(v1!);
          p.assign(p1!);
          continue;
        }
        const g = tf.mul(g0, scale);
        const m1 = tf.add(tf.mul(m, o.beta1), tf.mul(g, 1 - o.beta1));
        const v1 = tf.add(tf.mul(v, o.beta2), tf.mul(tf.square(g), 1 - o.beta2));
        m.assign(m1);
        v.assign(v1);
        const decayed = decay !== 1 ? tf.mul(p, decay) : p;
        const upd = tf.div(tf.div(m1, bc1), tf.add(tf.sqrt(tf.div(v1, bc2)), o.eps));
        p.assign(tf.sub(decayed, tf.mul(upd, lr)));
      }
      return norm;
    });
    for (const g of grads.values()) g.dispose();
    return { lr, gradNorm };
  }

  dispose(): void {
    for (const t of [...this.m.values(), ...this.v.values()]) t.dispose();
  }
}
