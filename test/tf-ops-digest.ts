// The native ops of src/solver/accel/tf-ops.cc (forward and gradient) and tf-decode.cc's decoding
// step on fixed inputs large enough for their threads to split them, as one sha256 of their output
// bytes.
// solver.tensorflow-threads.test.ts compares this process's digest (two threads) with one from a
// child on one thread: the ops' results must not depend on the thread count. Run directly
// (`node --import tsx test/tf-ops-digest.ts [threads]`, default 1), it prints the digest.
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import * as tf from '@tensorflow/tfjs-core';
import { createRng } from '../core/rng.js';
import { fusedOp, initBackend, paramShapes } from '../src/solver/testing.js';

export async function tfOpsDigest(threads: number): Promise<string> {
  if ((await initBackend('tensorflow', { threads, log: () => {} })) !== 'tensorflow')
    throw new Error('tensorflow did not start');
  const rng = createRng(51);
  const rnd = (...shape: number[]): tf.Tensor =>
    tf.tensor(
      new Float32Array(shape.reduce((a, b) => a * b, 1)).map(() => rng.next() * 2 - 1),
      shape,
    );
  const N = 32,
    T = 48,
    d = 64,
    heads = 4,
    n = N * T;
  const causal = new Float32Array(T * T).map((_, i) => (i % T > Math.floor(i / T) ? -1e9 : 0));
  const mask = tf.tensor(causal, [1, 1, T, T]);
  const [x, g, b, w, wb, h] = [rnd(n, d), rnd(d), rnd(d), rnd(d, 3 * d), rnd(3 * d), rnd(n, 4 * d)];
  const ops = ['layerNorm', 'gelu', 'linear', 'attention', 'targetLogp', 'decodeStep'] as const;
  for (const op of ops) if (!fusedOp(op)) throw new Error(`no native ${op}`);
  // each op and the gradient of Σ (its output · fixed weights) with respect to its inputs
  const outs = tf.tidy(() => {
    const wsum = (y: tf.Tensor): tf.Scalar => tf.sum(tf.mul(y, tf.sin(tf.reshape(tf.range(0, y.size), y.shape))));
    const ln = tf.grads((a: tf.Tensor, gg: tf.Tensor, bb: tf.Tensor) => wsum(fusedOp('layerNorm')!(a, gg, bb)))([
      x,
      g,
      b,
    ]);
    const ge = tf.grads((a: tf.Tensor) => wsum(fusedOp('gelu')!(a)))([h]);
    const li = tf.grads((a: tf.Tensor, ww: tf.Tensor, bb: tf.Tensor) =>
      wsum(fusedOp('linear')!(a as tf.Tensor2D, ww, bb)),
    )([x, w, wb]);
    const qkv = fusedOp('linear')!(x as tf.Tensor2D, w, wb);
    const at = tf.grads((q: tf.Tensor) => wsum(fusedOp('attention')!(q as tf.Tensor2D, mask, heads)))([qkv]);
    const targets = tf.tensor1d(
      Int32Array.from({ length: n }, (_, i) => i % (3 * d)),
      'int32',
    );
    const [lp, en] = fusedOp('targetLogp')!(qkv, targets);
    const tl = tf.grads((q: tf.Tensor) => wsum(tf.stack(fusedOp('targetLogp')!(q as tf.Tensor2D, targets))))([qkv]);
    // a decoding step (tf-decode.cc) of 8 prompts × 8 answers: four row blocks
    const B = 8,
      G = 8,
      Tp = 12,
      layers = 2;
    const weights = paramShapes({ vocabSize: 64, dModel: d, layers, heads, mlpRatio: 4, maxPositions: 48 }).map(
      ([, shape]) => rnd(...shape),
    );
    const step = fusedOp('decodeStep')!({
      ids: tf.tensor1d(
        Int32Array.from({ length: B * G }, (_, r) => (r * 7) % 64),
        'int32',
      ),
      pos: tf.scalar(20, 'int32'),
      pad: tf.tensor1d(
        Int32Array.from({ length: B }, (_, i) => i % 5),
        'int32',
      ),
      prompt: [rnd(B * Tp, 3 * d), rnd(B * Tp, 3 * d)],
      past: [rnd(layers, 2, B * G, d), rnd(layers, 2, B * G, d)],
      weights,
      heads,
    });
    return [
      fusedOp('layerNorm')!(x, g, b),
      fusedOp('gelu')!(h),
      qkv,
      fusedOp('attention')!(qkv, mask, heads),
      lp!,
      en!,
      ...ln,
      ...ge,
      ...li,
      ...at,
      ...tl,
      ...step,
    ];
  });
  const hash = createHash('sha256');
  for (const t of outs) hash.update(new Uint8Array(((await t.data()) as Float32Array).buffer));
  tf.dispose([...outs, mask, x, g, b, w, wb, h]);
  return hash.digest('hex');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(await tfOpsDigest(Number(process.argv[2] ?? 1)));
