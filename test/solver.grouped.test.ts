// Grouped training forward (each prompt run once for its G answers) equals one full pass over the
// concatenated rows; GELU through sigmoid equals the tanh form. cpu backend.
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect, it } from 'vitest';
import { createRng } from '../core/rng.js';
import {
  groupedWindowLogits,
  initBackend,
  initWeights,
  makeParams,
  type ModelConfig,
  windowLogits,
} from '../src/solver/testing.js';

describe('grouped forward', () => {
  it("logits at the prompt's last token and answer inputs equal the full pass, for every answer length", async () => {
    await initBackend('cpu', { log: () => {} });
    const mc: ModelConfig = { vocabSize: 20, dModel: 16, layers: 2, heads: 2, mlpRatio: 4, maxPositions: 24 };
    const params = makeParams(initWeights(mc, createRng(7)));
    const rng = createRng(8);
    const B = 3,
      G = 2,
      maxPrompt = 12;
    const prompts = [5, 9, 2].map((n) => Array.from({ length: n }, () => rng.int(4, 19)));
    const Tp = Math.max(...prompts.map((x) => x.length)) + 1;
    const answerPos = maxPrompt + 1;
    for (const A of [1, 2, 5]) {
      const prompt = new Int32Array(B * Tp);
      const pad = new Int32Array(B);
      prompts.forEach((x, b) => {
        pad[b] = Tp - 1 - x.length;
        prompt[b * Tp + pad[b]!] = 1;
        prompt.set(x, b * Tp + pad[b]! + 1);
      });
      const answer = new Int32Array(B * G * (A - 1)).map(() => rng.int(4, 19));
      const T = Tp + A - 1;
      const tokens = new Int32Array(B * G * T);
      const fullPad = new Int32Array(B * G);
      for (let r = 0; r < B * G; r++) {
        const b = Math.floor(r / G);
        tokens.set(prompt.subarray(b * Tp, (b + 1) * Tp), r * T);
        tokens.set(answer.subarray(r * (A - 1), (r + 1) * (A - 1)), r * T + Tp);
        fullPad[r] = pad[b]!;
      }
      const [g, f] = tf.tidy(() => [
        groupedWindowLogits(params, mc, { prompt, B, G, Tp, pad, answerPos, answer, A }, true),
        windowLogits(params, mc, { tokens, N: B * G, T, pad: fullPad, answerFrom: Tp, answerPos }, Tp - 1, A, true),
      ]);
      expect(g!.shape).toEqual([B * G * A, mc.vocabSize]);
      const gd = await g!.data(),
        fd = await f!.data();
      let max = 0;
      for (let i = 0; i < gd.length; i++) max = Math.max(max, Math.abs(gd[i]! - fd[i]!));
      expect(max, `A=${A}`).toBeLessThan(1e-5);
      tf.dispose([g!, f!]);
    }
  });

  it('x·σ(2u) equals 0.5·x·(1 + tanh(u)); the Sigmoid gradient matches finite differences', async () => {
    await initBackend('cpu', { log: () => {} });
    const x = tf.linspace(-6, 6, 49);
    const u = tf.mul(tf.add(x, tf.mul(tf.pow(x, 3), 0.044715)), Math.sqrt(2 / Math.PI));
    const a = await tf.mul(x, tf.sigmoid(tf.mul(u, 2))).data();
    const b = await tf.mul(tf.mul(x, 0.5), tf.add(tf.tanh(u), 1)).data();
    for (let i = 0; i < a.length; i++) expect(Math.abs(a[i]! - b[i]!)).toBeLessThan(1e-6);
    const g = await tf
      .grad((t: tf.Tensor) => tf.sum(tf.sigmoid(t)))(x)
      .data();
    const xs = await x.data();
    const s = (v: number): number => 1 / (1 + Math.exp(-v));
    for (let i = 0; i < xs.length; i++)
      expect(Math.abs(g[i]! - (s(xs[i]! + 1e-3) - s(xs[i]! - 1e-3)) / 2e-3)).toBeLessThan(1e-4);
  });
});
