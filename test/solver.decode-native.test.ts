// The native decoding step on tensorflow (src/solver/accel/tf-decode.cc, run by kv-decode.ts)
// against grouped.ts's composite prefill and decodeStep on the same backend: the same logits step
// after step, for prompts of different lengths (left pads), several answers per prompt, and more
// rows than one of the op's row blocks; a restarted cache decodes as a fresh one; the op refuses
// tokens and positions outside the model's tables; a step is one TensorFlow kernel.
// (test/solver-backends.ts says when tensorflow runs.)
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect } from 'vitest';
import { createRng } from '../core/rng.js';
import { itOn, named, useBackend } from './solver-backends.js';
import {
  compositeDecode,
  kvDecode as kv,
  makeParams,
  paramShapes,
  type Batch,
  type ModelConfig,
  type Params,
} from '../src/solver/testing.js';

const mc: ModelConfig = { vocabSize: 20, dModel: 16, layers: 2, heads: 4, mlpRatio: 4, maxPositions: 24 };

/** Weights of a larger spread than initWeights' (N(0, 0.02)), so that the logits and their differences are not tiny. */
function params(seed: number): Params {
  const rng = createRng(seed);
  const w = new Map<string, { shape: number[]; data: Float32Array }>();
  for (const [name, shape] of paramShapes(mc)) {
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1)).map(() => (rng.next() * 2 - 1) * 0.5);
    if (name.includes('ln_') && name.endsWith('weight'))
      data.forEach((x, i) => {
        data[i] = 1 + x;
      });
    w.set(name, { shape, data });
  }
  return makeParams(w);
}

/** B prompts of T columns, prompt b left-padded by pad[b], its ids drawn past the specials. */
function batch(B: number, T: number, pad: number[], seed: number): Batch {
  const rng = createRng(seed);
  const tokens = new Int32Array(B * T);
  for (let b = 0; b < B; b++) {
    tokens[b * T + pad[b]!] = 1; // <bos>
    for (let t = pad[b]! + 1; t < T; t++) tokens[b * T + t] = rng.int(4, mc.vocabSize - 1);
  }
  return { tokens, N: B, T, pad: Int32Array.from(pad) };
}

type Step = { logits: tf.Tensor2D; cache: kv.KVCache };

/** Runs `steps` steps from a prefill, feeding ids(k); returns each step's logits (the prefill's first). */
async function run(
  prefill: () => Step,
  step: (c: kv.KVCache, ids: Int32Array, pos: number) => Step,
  N: number,
  steps: number,
  answerPos: number,
): Promise<{ logits: Float32Array[]; cache: kv.KVCache }> {
  let s = prefill();
  const out: Float32Array[] = [];
  for (let k = 0; ; k++) {
    out.push((await s.logits.data()) as Float32Array);
    s.logits.dispose();
    if (k === steps) break;
    s = step(
      s.cache,
      Int32Array.from({ length: N }, (_, r) => 4 + ((r * 5 + k * 3) % (mc.vocabSize - 4))),
      answerPos + k,
    );
  }
  return { logits: out, cache: s.cache };
}

describe('the native decoding step', () => {
  itOn('tensorflow')(
    named(
      'tensorflow',
      "gives grouped.ts's composite logits at every step: pads, G answers a prompt, partial row blocks",
    ),
    async () => {
      await useBackend('tensorflow');
      expect(kv.nativeDecoding()).toBe(true);
      const p = params(3);
      // 5 prompts × 7 answers = 35 rows: two full blocks of 16 and one of 3 (tf-decode.cc)
      for (const [B, G, pad] of [
        [3, 4, [0, 3, 5]],
        [5, 7, [2, 0, 1, 4, 0]],
      ] as const) {
        const T = 9,
          steps = 8,
          answerPos = 12,
          N = B * G;
        const b = batch(B, T, [...pad], B);
        const composite = await run(
          () => compositeDecode.prefill(p, mc, b, G),
          (c, ids, pos) => compositeDecode.decodeStep(p, mc, c as compositeDecode.KVCache, ids, pos),
          N,
          steps,
          answerPos,
        );
        const native = await run(
          () => kv.prefill(p, mc, b, G),
          (c, ids, pos) => kv.decodeStep(p, mc, c, ids, pos),
          N,
          steps,
          answerPos,
        );
        expect('native' in native.cache).toBe(true);
        let scale = 0;
        for (const l of composite.logits) for (const x of l) scale = Math.max(scale, Math.abs(x));
        expect(scale).toBeGreaterThan(1);
        composite.logits.forEach((l, k) => {
          let diff = 0;
          for (let i = 0; i < l.length; i++) diff = Math.max(diff, Math.abs(l[i]! - native.logits[k]![i]!));
          expect(diff, `step ${k}`).toBeLessThan(1e-5 * scale);
        });
        compositeDecode.disposeCache(composite.cache as compositeDecode.KVCache);
        kv.disposeCache(native.cache);
      }
      for (const v of p.values()) v.dispose();
    },
  );

  itOn('tensorflow')(
    named(
      'tensorflow',
      'a restarted cache decodes as a fresh one; tokens and positions outside the tables are refused; a step is one kernel',
    ),
    async () => {
      await useBackend('tensorflow');
      const p = params(4);
      const b = batch(2, 6, [1, 0], 9);
      // (a first prefill makes model.ts's causal mask of this length, which it keeps)
      const warm = kv.prefill(p, mc, b, 3);
      warm.logits.dispose();
      kv.disposeCache(warm.cache);
      const before = tf.memory().numTensors;
      const first = await run(
        () => kv.prefill(p, mc, b, 3),
        (c, ids, pos) => kv.decodeStep(p, mc, c, ids, pos),
        6,
        4,
        10,
      );
      const again = await run(
        () => ({ logits: tf.tensor2d(first.logits[0]!, [6, mc.vocabSize]), cache: kv.restartCache(first.cache) }),
        (c, ids, pos) => kv.decodeStep(p, mc, c, ids, pos),
        6,
        4,
        10,
      );
      again.logits.forEach((l, k) => expect(Array.from(l), `step ${k}`).toEqual(Array.from(first.logits[k]!)));
      const { cache } = again;
      expect(() => kv.decodeStep(p, mc, cache, Int32Array.from([0, 1, 2, 3, 4, mc.vocabSize]), 14)).toThrow(
        /token 20 outside \[0, 20\)/,
      );
      expect(() => kv.decodeStep(p, mc, cache, new Int32Array(6), mc.maxPositions)).toThrow(/position 24 outside/);
      let last: Step | null = null;
      const prof = await tf.profile(() => (last = kv.decodeStep(p, mc, cache, new Int32Array(6).fill(5), 14)).logits);
      expect(prof.kernels.map((k) => k.name)).toEqual(['CogenDecodeStep']);
      last!.logits.dispose();
      kv.disposeCache(last!.cache);
      // the cache's tensors (the prompts' products, the pads, every step's keys and values) are all disposed
      expect(tf.memory().numTensors).toBe(before);
      for (const v of p.values()) v.dispose();
    },
  );
});
