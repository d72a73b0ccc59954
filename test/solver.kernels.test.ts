// backend.ts's tfjs-wasm Identity/Slice/SplitV against the cpu backend; the model's logits on wasm
// against cpu.
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';
import { createRng } from '../src/rng.js';
import { initBackend } from '../src/solver/backend.js';
import '../src/solver/gradients.js';
import { initWeights, makeParams, windowLogits, type ModelConfig } from '../src/solver/model.js';

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
