// LayerNorm and GELU (hand-written gradients) against float64 references and finite differences;
// backend.ts's tfjs-wasm Identity/Slice/SplitV against the cpu backend; the model's logits on wasm
// against cpu.
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';
import { createRng } from '../src/rng.js';
import { initBackend } from '../src/solver/backend.js';
import '../src/solver/gradients.js';
import { gelu, initWeights, layerNorm, makeParams, windowLogits, type ModelConfig } from '../src/solver/model.js';

/** Checks f's value and gradient (tf.grads) against ref (float64) and its central differences, for loss = Σ w·f. */
async function checkGrad(
  f: (xs: tf.Tensor[]) => tf.Tensor, ref: (xs: Float64Array[]) => Float64Array, inputs: { data: Float32Array; shape: number[] }[], seed: number,
): Promise<void> {
  const rng = createRng(seed);
  const outShape = tf.tidy(() => f(inputs.map((x) => tf.tensor(x.data, x.shape))).shape);
  const w = new Float32Array(outShape.reduce((a, b) => a * b, 1)).map(() => rng.next() * 2 - 1);
  const y = tf.tidy(() => f(inputs.map((x) => tf.tensor(x.data, x.shape))));
  const yd = await y.data();
  const r = ref(inputs.map((x) => Float64Array.from(x.data)));
  for (let i = 0; i < r.length; i++) expect(Math.abs(yd[i]! - r[i]!)).toBeLessThan(1e-5);
  y.dispose();
  const g = tf.grads((...xs: tf.Tensor[]) => tf.sum(tf.mul(f(xs), tf.tensor(w, outShape))))(inputs.map((x) => tf.tensor(x.data, x.shape)));
  const gd = await Promise.all(g.map((t) => t.data()));
  tf.dispose(g);
  const loss = (xs: Float64Array[]): number => ref(xs).reduce((a, v, i) => a + v * w[i]!, 0);
  const eps = 1e-4;
  inputs.forEach((inp, which) => {
    for (let idx = 0; idx < inp.data.length; idx++) {
      const plus = inputs.map((x) => Float64Array.from(x.data));
      const minus = inputs.map((x) => Float64Array.from(x.data));
      plus[which]![idx]! += eps;
      minus[which]![idx]! -= eps;
      const fd = (loss(plus) - loss(minus)) / (2 * eps);
      expect(Math.abs(gd[which]![idx]! - fd), `input ${which} index ${idx}`).toBeLessThan(2e-4 * Math.max(1, Math.abs(fd)));
    }
  });
}

describe('custom gradients', () => {
  for (const backend of ['cpu', 'wasm'] as const) {
    it(`${backend}: LayerNorm and GELU match float64 references and finite differences`, async () => {
      await initBackend(backend, { log: () => {} });
      const rng = createRng(21);
      const rnd = (n: number, scale: number): Float32Array => new Float32Array(n).map(() => (rng.next() * 2 - 1) * scale);
      const n = 6, d = 8;
      await checkGrad(([x, g, b]) => layerNorm(x!, g!, b!), ([x, g, b]) => {
        const out = new Float64Array(n * d);
        for (let i = 0; i < n; i++) {
          const row = x!.subarray(i * d, (i + 1) * d);
          const mu = row.reduce((a, v) => a + v, 0) / d;
          const vr = row.reduce((a, v) => a + (v - mu) ** 2, 0) / d;
          for (let j = 0; j < d; j++) out[i * d + j] = ((row[j]! - mu) / Math.sqrt(vr + 1e-5)) * g![j]! + b![j]!;
        }
        return out;
      }, [{ data: rnd(n * d, 2), shape: [n, d] }, { data: rnd(d, 1.5), shape: [d] }, { data: rnd(d, 1), shape: [d] }], 22);
      const c = Math.sqrt(2 / Math.PI);
      await checkGrad(([x]) => gelu(x!), ([x]) => x!.map((v) => 0.5 * v * (1 + Math.tanh(c * (v + 0.044715 * v ** 3)))),
        [{ data: rnd(40, 5), shape: [5, 8] }], 23);
    });
  }
});

describe('wasm kernels (backend.ts)', () => {
  it('Slice, SplitV and Identity equal the cpu backend', async () => {
    const rng = createRng(3);
    const shape = [3, 4, 5, 6];
    const data = new Float32Array(360).map(() => rng.next());
    const cases = (): tf.Tensor[] => {
      const x = tf.tensor(data, shape);
      const x2 = tf.reshape(x, [12, 30]);
      return [
        tf.slice(x, [1, 0, 0, 0], [2, 4, 5, 6]), tf.slice(x, [0, 1, 2, 3], [3, 2, 3, 2]), tf.slice(x, [2, 3, 4, 5], [1, 1, 1, 1]),
        tf.slice(x2, [3, 0], [5, 30]), tf.slice(x2, [0, 7], [12, 20]), tf.slice(tf.reshape(x, [360]), [17], [100]),
        ...tf.split(x2, 4, 0), ...tf.split(x2, [10, 15, 5], 1), ...tf.split(x, [1, 2], 0),
        tf.clone(x), tf.slice(tf.tensor1d([1, 2, 3, 4], 'int32'), [1], [2]),
      ];
    };
    await initBackend('cpu', { log: () => {} });
    const want = await Promise.all(tf.tidy(cases).map(async (t) => ({ shape: t.shape, data: Array.from(await t.data()) })));
    await initBackend('wasm', { log: () => {} });
    const got = await Promise.all(tf.tidy(cases).map(async (t) => ({ shape: t.shape, data: Array.from(await t.data()) })));
    expect(got).toEqual(want);
  });

  it('model logits on wasm equal those on cpu', async () => {
    const mc: ModelConfig = { vocabSize: 20, dModel: 16, layers: 2, heads: 4, mlpRatio: 4, maxPositions: 12 };
    const rng = createRng(5);
    const N = 3, T = 9;
    const tokens = new Int32Array(N * T).map(() => rng.int(0, 19));
    const pad = new Int32Array([0, 3, 1]);
    const run = async (b: 'cpu' | 'wasm'): Promise<Float32Array> => {
      await initBackend(b, { log: () => {} });
      const params = makeParams(initWeights(mc, createRng(6)));
      const l = tf.tidy(() => windowLogits(params, mc, { tokens, N, T, pad, posOffset: 1 }, 2, 6, true));
      const d = (await l.data()) as Float32Array;
      l.dispose();
      for (const p of params.values()) p.dispose();
      return d;
    };
    const a = await run('cpu');
    const b = await run('wasm');
    for (let i = 0; i < a.length; i++) expect(Math.abs(a[i]! - b[i]!)).toBeLessThan(1e-4);
  });
});
