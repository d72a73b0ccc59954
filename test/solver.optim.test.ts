// AdamW (optim.ts) against a float64 reference written from torch.optim.AdamW's update rule, with
// global-norm clipping engaged and weight decay on matrices only; on cpu (composite ops) and wasm
// (the fused SIMD kernel), and on tensorflow (the native AdamW op of accel/tf-ops.cc; test/solver-backends.ts
// says when).
import * as tf from '@tensorflow/tfjs-core';
import { describe, expect } from 'vitest';
import { itOn, named, useBackend } from './solver-backends.js';
import { createRng } from '../core/rng.js';
import { AdamW, learningRate, optimSchema } from '../src/solver/testing.js';

describe('AdamW', () => {
  for (const backend of ['cpu', 'wasm', 'tensorflow'] as const) {
    itOn(backend)(named(backend, '5 steps equal a float64 reference (clipping, decay on rank ≥ 2 only)'), async () => {
      await useBackend(backend);
      const o = { ...optimSchema.parse({ lr: 0.01, weightDecay: 0.1, warmupSteps: 2, gradClip: 0.5 }), totalSteps: 10 };
      const rng = createRng(41);
      const shapes: Record<string, number[]> = { w: [3, 8], b: [8], odd: [5] }; // odd: not a multiple of 4 (composite path)
      const ref = new Map(
        Object.entries(shapes).map(([n, s]) => {
          const size = s.reduce((a, b) => a * b, 1);
          return [
            n,
            {
              shape: s,
              p: Float64Array.from({ length: size }, () => Math.fround(rng.next() * 2 - 1)),
              m: new Float64Array(size),
              v: new Float64Array(size),
            },
          ];
        }),
      );
      const params = new Map([...ref].map(([n, r]) => [n, tf.variable(tf.tensor(Float32Array.from(r.p), r.shape))]));
      const opt = new AdamW(params, o);
      for (let t = 1; t <= 5; t++) {
        const grads = new Map(
          [...ref].map(([n, r]) => [n, Float64Array.from(r.p, () => Math.fround((rng.next() * 2 - 1) * 3))]),
        );
        const { lr, gradNorm } = opt.apply(
          new Map([...grads].map(([n, g]) => [n, tf.tensor(Float32Array.from(g), ref.get(n)!.shape)])),
        );
        const norm = Math.sqrt([...grads.values()].reduce((a, g) => a + g.reduce((s, x) => s + x * x, 0), 0));
        expect(Math.abs((await gradNorm.data())[0]! - norm)).toBeLessThan(1e-4 * norm);
        gradNorm.dispose();
        expect(lr).toBe(learningRate(t - 1, o));
        const scale = Math.min(1, o.gradClip / (norm + 1e-6));
        for (const [n, r] of ref) {
          const g = grads.get(n)!;
          const decay = r.shape.length >= 2 ? 1 - lr * o.weightDecay : 1;
          for (let i = 0; i < r.p.length; i++) {
            const gs = g[i]! * scale;
            r.m[i] = o.beta1 * r.m[i]! + (1 - o.beta1) * gs;
            r.v[i] = o.beta2 * r.v[i]! + (1 - o.beta2) * gs * gs;
            r.p[i] =
              r.p[i]! * decay -
              (lr * (r.m[i]! / (1 - o.beta1 ** t))) / (Math.sqrt(r.v[i]! / (1 - o.beta2 ** t)) + o.eps);
          }
          const got = await params.get(n)!.data();
          const gm = await opt.m.get(n)!.data();
          const gv = await opt.v.get(n)!.data();
          for (let i = 0; i < r.p.length; i++) {
            expect(Math.abs(got[i]! - r.p[i]!), `${n}[${i}] step ${t}`).toBeLessThan(2e-6);
            expect(Math.abs(gm[i]! - r.m[i]!)).toBeLessThan(1e-6);
            expect(Math.abs(gv[i]! - r.v[i]!)).toBeLessThan(1e-6 * Math.max(1, r.v[i]!));
          }
        }
      }
      opt.dispose();
      for (const p of params.values()) p.dispose();
    });
  }
});
