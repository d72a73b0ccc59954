// The model's layers below a block: LayerNorm and GELU with their gradients written out, the linear
// product with its bias, and embeddings. Each asks fused.ts for a fused op and runs its composite
// when the backend has none.
import * as tf from '@tensorflow/tfjs-core';
import { fusedOp } from './fused.js';

/**
 * LayerNorm over the last axis of x [n, d], with its gradient written out (autodiff through the
 * mean/variance ops costs ~25 kernels and saved copies):
 *   x̂ = (x − μ)·r, r = 1/√(σ² + ε);  dx = r·(g·dy − mean(g·dy) − x̂·mean(g·dy·x̂)),  dg = Σ dy·x̂,  db = Σ dy.
 */
export function layerNorm(x: tf.Tensor, g: tf.Tensor, b: tf.Tensor): tf.Tensor {
  // the same formulas in one pass each way where the backend has them (fused.ts)
  const fused = fusedOp('layerNorm', x.shape.at(-1)!);
  if (fused) return fused(x, g, b);
  const f = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const [x, g, b] = args as tf.Tensor[];
    const save = args[3] as tf.GradSaveFunc;
    const xc = tf.sub(x!, tf.mean(x!, -1, true));
    const r = tf.rsqrt(tf.add(tf.mean(tf.square(xc), -1, true), 1e-5));
    const xh = tf.mul(xc, r);
    save([xh, r, g!]);
    return {
      value: tf.add(tf.mul(xh, g!), b!),
      gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
        const d = dy as tf.Tensor;
        const [xh, r, g] = saved as [tf.Tensor, tf.Tensor, tf.Tensor];
        const gdy = tf.mul(d, g);
        const dx = tf.mul(
          tf.sub(tf.sub(gdy, tf.mean(gdy, -1, true)), tf.mul(xh, tf.mean(tf.mul(gdy, xh), -1, true))),
          r,
        );
        return [dx, tf.sum(tf.mul(d, xh), 0), tf.sum(d, 0)];
      },
    };
  });
  return f(x, g, b);
}

/**
 * GELU, tanh approximation (as GPT-2): 0.5·x·(1 + tanh(u)), u = √(2/π)·(x + 0.044715·x³), computed
 * as the identical x·σ(2u) (1 + tanh(u) = 2σ(2u)): tfjs-wasm's Sigmoid is vectorised (XNNPACK),
 * its Tanh is ~20x slower.
 */
export function gelu(x: tf.Tensor): tf.Tensor {
  const c = 2 * Math.sqrt(2 / Math.PI);
  // the same formulas in one pass each way where the backend has them (fused.ts)
  const fused = fusedOp('gelu', x.size);
  if (fused) return fused(x);
  const f = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const x = args[0] as tf.Tensor;
    const save = args[1] as tf.GradSaveFunc;
    const x2 = tf.square(x);
    const s = tf.sigmoid(tf.mul(tf.mul(tf.add(tf.mul(x2, 0.044715), 1), x), c));
    save([x, x2, s]);
    return {
      value: tf.mul(x, s),
      // d/dx x·σ(z) = σ + x·σ·(1 − σ)·z',  z' = c·(1 + 3·0.044715·x²)
      gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
        const [x, x2, s] = saved as [tf.Tensor, tf.Tensor, tf.Tensor];
        const zp = tf.add(tf.mul(x2, 3 * 0.044715 * c), c);
        return [tf.mul(dy as tf.Tensor, tf.add(s, tf.mul(tf.mul(tf.mul(x, s), tf.sub(1, s)), zp)))];
      },
    };
  });
  return f(x);
}

/**
 * x·w + b as one op: fused (fused.ts) where the backend has it; else tfjs's fused matMul (on wasm,
 * accel/'s SIMD matMul starts its sums from the bias; the gradient is tfjs-core's: two matMuls and a
 * sum over rows for the bias).
 */
export function linear(x: tf.Tensor2D, w: tf.Tensor, b: tf.Tensor): tf.Tensor2D {
  const fused = fusedOp('linear');
  return fused ? fused(x, w, b) : (tf.fused.matMul({ a: x, b: w as tf.Tensor2D, bias: b }) as tf.Tensor2D);
}

/** Embeddings of int ids [n] (tokens or positions): one-hot matMul where tf.gather has no gradient (wasm), gather elsewhere. */
// (wasm's OneHot ignores a float dtype, hence int32 + cast)
export function embed(wte: tf.Tensor, ids: tf.Tensor1D, vocab: number, oneHot: boolean): tf.Tensor2D {
  if (oneHot) return tf.matMul(tf.cast(tf.oneHot(ids, vocab), 'float32') as tf.Tensor2D, wte as tf.Tensor2D);
  return tf.gather(wte, ids) as tf.Tensor2D;
}
