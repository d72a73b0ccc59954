// LayerNorm and GELU (hand-written gradients, and the fused wasm kernels) against float64 references
// and finite differences; the accel/simd.ts module (with and without FMA) against float64 references;
// every kernel accel/wasm-kernels.ts registers against the cpu backend; the model's logits on wasm (and on
// tensorflow: test/solver-backends.ts says when) against cpu; on tensorflow, that the native fused ops run.
import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { itOn, named, useBackend } from './solver-backends.js';
import { createRng } from '../core/rng.js';
import {
  assembleSimdModule,
  fusedOp,
  gelu,
  initBackend,
  initWeights,
  instantiateSimd,
  layerNorm,
  makeParams,
  type ModelConfig,
  targetLogp,
  windowLogits,
} from '../src/solver/testing.js';

/** Checks f's value and gradient (tf.grads) against ref (float64) and its central differences, for loss = Σ w·f. */
async function checkGrad(
  f: (xs: tf.Tensor[]) => tf.Tensor,
  ref: (xs: Float64Array[]) => Float64Array,
  inputs: { data: Float32Array; shape: number[] }[],
  seed: number,
): Promise<void> {
  const rng = createRng(seed);
  const outShape = tf.tidy(() => f(inputs.map((x) => tf.tensor(x.data, x.shape))).shape);
  const w = new Float32Array(outShape.reduce((a, b) => a * b, 1)).map(() => rng.next() * 2 - 1);
  const y = tf.tidy(() => f(inputs.map((x) => tf.tensor(x.data, x.shape))));
  const yd = await y.data();
  const r = ref(inputs.map((x) => Float64Array.from(x.data)));
  for (let i = 0; i < r.length; i++) expect(Math.abs(yd[i]! - r[i]!)).toBeLessThan(1e-5);
  y.dispose();
  const g = tf.grads((...xs: tf.Tensor[]) => tf.sum(tf.mul(f(xs), tf.tensor(w, outShape))))(
    inputs.map((x) => tf.tensor(x.data, x.shape)),
  );
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
      expect(Math.abs(gd[which]![idx]! - fd), `input ${which} index ${idx}`).toBeLessThan(
        2e-4 * Math.max(1, Math.abs(fd)),
      );
    }
  });
}

/** LayerNorm and GELU (their gradients: ours, the fused kernels', or tfjs's on tensorflow) against float64. */
async function layerNormAndGelu(): Promise<void> {
  const rng = createRng(21);
  const rnd = (n: number, scale: number): Float32Array => new Float32Array(n).map(() => (rng.next() * 2 - 1) * scale);
  const n = 6,
    d = 8;
  await checkGrad(
    ([x, g, b]) => layerNorm(x!, g!, b!),
    ([x, g, b]) => {
      const out = new Float64Array(n * d);
      for (let i = 0; i < n; i++) {
        const row = x!.subarray(i * d, (i + 1) * d);
        const mu = row.reduce((a, v) => a + v, 0) / d;
        const vr = row.reduce((a, v) => a + (v - mu) ** 2, 0) / d;
        for (let j = 0; j < d; j++) out[i * d + j] = ((row[j]! - mu) / Math.sqrt(vr + 1e-5)) * g![j]! + b![j]!;
      }
      return out;
    },
    [
      { data: rnd(n * d, 2), shape: [n, d] },
      { data: rnd(d, 1.5), shape: [d] },
      { data: rnd(d, 1), shape: [d] },
    ],
    22,
  );
  const c = Math.sqrt(2 / Math.PI);
  await checkGrad(
    ([x]) => gelu(x!),
    ([x]) => x!.map((v) => 0.5 * v * (1 + Math.tanh(c * (v + 0.044715 * v ** 3)))),
    [{ data: rnd(40, 5), shape: [5, 8] }],
    23,
  );
}

describe('custom gradients', () => {
  for (const backend of ['cpu', 'wasm'] as const) {
    it(`${backend}: LayerNorm and GELU match float64 references and finite differences`, async () => {
      await useBackend(backend);
      await layerNormAndGelu();
    });
  }
});

/** Runs f on the cpu backend and then on wasm; returns both results' shapes and values. */
async function onBoth(f: () => tf.Tensor[]): Promise<{ shape: number[]; data: Float32Array }[][]> {
  const out: { shape: number[]; data: Float32Array }[][] = [];
  for (const b of ['cpu', 'wasm'] as const) {
    await initBackend(b, { log: () => {} });
    const ts = tf.tidy(f);
    out.push(await Promise.all(ts.map(async (t) => ({ shape: t.shape, data: (await t.data()) as Float32Array }))));
    tf.dispose(ts);
  }
  return out;
}

describe('accel/simd.ts module, with and without fused multiply-adds', () => {
  for (const fma of [false, true]) {
    it(`${fma ? 'FMA' : 'plain'}: matmul, GELU and LayerNorm (and gradients) equal float64 references`, async () => {
      const memory = new (
        globalThis as unknown as { WebAssembly: { Memory: new (o: { initial: number }) => { buffer: ArrayBuffer } } }
      ).WebAssembly.Memory({ initial: 16 });
      const k = instantiateSimd(await assembleSimdModule(fma), memory);
      const f = new Float32Array(memory.buffer);
      const rng = createRng(fma ? 31 : 32);
      const fill = (at: number, n: number, scale: number): Float64Array => {
        const out = new Float64Array(n);
        for (let i = 0; i < n; i++) out[i] = f[at + i] = (rng.next() * 2 - 1) * scale;
        return Float64Array.from(f.subarray(at, at + n)); // as rounded to float32
      };
      const near = (got: number, want: number, tol: number, what: string): void =>
        expect(Math.abs(got - want), what).toBeLessThan(tol * Math.max(1, Math.abs(want)));
      // matmul: A [2, 9, 133] (k over one 128-row block), B [2, 133, 11], without and with a bias [11]
      const [M, K, N] = [9, 133, 11];
      const A = fill(0, 2 * M * K, 1),
        B = fill(4000, 2 * K * N, 1),
        bias0 = fill(7900, N, 1);
      for (const withBias of [false, true]) {
        k.matmul(0, 4000 * 4, 8000 * 4, 2, M, N, K, K, 1, M * K, K * N, withBias ? 7900 * 4 : 0);
        for (let b = 0; b < 2; b++)
          for (let m = 0; m < M; m++)
            for (let n = 0; n < N; n++) {
              let s = withBias ? bias0[n]! : 0;
              for (let j = 0; j < K; j++) s += A[b * M * K + m * K + j]! * B[b * K * N + j * N + n]!;
              near(f[8000 + b * M * N + m * N + n]!, s, 1e-5, `matmul ${b},${m},${n} bias ${withBias}`);
            }
      }
      // GELU (tanh form) and its derivative, over [-12, 12] (the gate's exp meets its clamp)
      const n = 64,
        c = Math.sqrt(2 / Math.PI);
      const X = fill(0, n, 12),
        D = fill(100, n, 1);
      const g = (x: number): number => 0.5 * x * (1 + Math.tanh(c * (x + 0.044715 * x ** 3)));
      k.gelu(0, 200 * 4, n);
      k.gelu_grad(0, 100 * 4, 300 * 4, n);
      for (let i = 0; i < n; i++) {
        near(f[200 + i]!, g(X[i]!), 2e-6, `gelu(${X[i]})`);
        near(f[300 + i]!, (D[i]! * (g(X[i]! + 1e-6) - g(X[i]! - 1e-6))) / 2e-6, 2e-5, `gelu'(${X[i]})`);
      }
      // LayerNorm of 3 rows × 8 and its gradient (dg, db summed over rows)
      const [R, C] = [3, 8];
      const x = fill(0, R * C, 3),
        gain = fill(100, C, 1),
        bias = fill(200, C, 1),
        dy = fill(300, R * C, 1);
      k.layernorm(0, 100 * 4, 200 * 4, 400 * 4, 500 * 4, 600 * 4, R, C);
      f.fill(0, 800, 800 + 2 * C);
      k.layernorm_grad(0, 100 * 4, 500 * 4, 600 * 4, 300 * 4, 700 * 4, 800 * 4, (800 + C) * 4, R, C);
      const dg = new Float64Array(C),
        db = new Float64Array(C);
      for (let r = 0; r < R; r++) {
        const row = x.subarray(r * C, (r + 1) * C);
        const mu = row.reduce((a, v) => a + v, 0) / C;
        const rs = 1 / Math.sqrt(row.reduce((a, v) => a + (v - mu) ** 2, 0) / C + 1e-5);
        const xh = Array.from(row, (v) => (v - mu) * rs);
        const gdy = xh.map((_, j) => gain[j]! * dy[r * C + j]!);
        const m1 = gdy.reduce((a, v) => a + v, 0) / C,
          m2 = gdy.reduce((a, v, j) => a + v * xh[j]!, 0) / C;
        for (let j = 0; j < C; j++) {
          near(f[400 + r * C + j]!, xh[j]! * gain[j]! + bias[j]!, 1e-5, 'layernorm y');
          near(f[700 + r * C + j]!, rs * (gdy[j]! - m1 - xh[j]! * m2), 1e-4, 'layernorm dx');
          dg[j]! += dy[r * C + j]! * xh[j]!;
          db[j]! += dy[r * C + j]!;
        }
      }
      for (let j = 0; j < C; j++) {
        near(f[800 + j]!, dg[j]!, 1e-5, 'dg');
        near(f[800 + C + j]!, db[j]!, 1e-5, 'db');
      }
    });
  }
});

describe('wasm kernels (accel/wasm-kernels.ts)', () => {
  it('SIMD BatchMatMul equals the cpu backend for any shape, transpose flags and batch broadcast', async () => {
    // sizes cross the 4×8 tile and the 128-row k block edges; batch 1 on one side broadcasts
    const dim = fc.oneof(fc.integer({ min: 1, max: 13 }), fc.constantFrom(16, 24, 48, 129, 260));
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          batch: fc.integer({ min: 1, max: 3 }),
          bcast: fc.constantFrom('none', 'a', 'b'),
          M: dim,
          N: dim,
          K: dim,
          tA: fc.boolean(),
          tB: fc.boolean(),
          seed: fc.integer(),
        }),
        async ({ batch, bcast, M, N, K, tA, tB, seed }) => {
          const rng = createRng(seed);
          const bA = bcast === 'a' ? 1 : batch,
            bB = bcast === 'b' ? 1 : batch;
          const a = new Float32Array(bA * M * K).map(() => rng.next() * 2 - 1);
          const b = new Float32Array(bB * K * N).map(() => rng.next() * 2 - 1);
          const [cpu, wasm] = await onBoth(() => [
            tf.matMul(
              tf.tensor(a, [bA, ...(tA ? [K, M] : [M, K])]),
              tf.tensor(b, [bB, ...(tB ? [N, K] : [K, N])]),
              tA,
              tB,
            ),
          ]);
          expect(wasm![0]!.shape).toEqual(cpu![0]!.shape);
          for (let i = 0; i < cpu![0]!.data.length; i++)
            expect(Math.abs(wasm![0]!.data[i]! - cpu![0]!.data[i]!)).toBeLessThan(1e-4 * Math.sqrt(K));
        },
      ),
      { numRuns: 40 },
    );
    // tf.fused.matMul with a bias (the SIMD kernel) and with an activation (tfjs-wasm's own)
    const fused = await onBoth(() => {
      const r = createRng(8);
      const t = (shape: number[]): tf.Tensor =>
        tf.tensor(
          new Float32Array(shape.reduce((p, q) => p * q, 1)).map(() => r.next() - 0.5),
          shape,
        );
      return [
        tf.fused.matMul({ a: t([13, 7]) as tf.Tensor2D, b: t([7, 10]) as tf.Tensor2D, bias: t([10]) }),
        tf.fused.matMul({
          a: t([7, 13]) as tf.Tensor2D,
          b: t([10, 7]) as tf.Tensor2D,
          transposeA: true,
          transposeB: true,
          bias: t([10]),
        }),
        tf.fused.matMul({ a: t([5, 0]) as tf.Tensor2D, b: t([0, 6]) as tf.Tensor2D, bias: t([6]) }),
        tf.fused.matMul({ a: t([6, 4]) as tf.Tensor2D, b: t([4, 5]) as tf.Tensor2D, bias: t([5]), activation: 'relu' }),
      ];
    });
    expect(fused[1]!.map((x) => x.shape)).toEqual(fused[0]!.map((x) => x.shape));
    fused[1]!.forEach((x, j) =>
      x.data.forEach((v, i) => expect(Math.abs(v - fused[0]![j]!.data[i]!), `fused ${j}`).toBeLessThan(1e-5)),
    );
    // rank 2 and rank 4 (attention's [N, heads, T, dh]), and empty operands
    const [cpu, wasm] = await onBoth(() => {
      const r = createRng(9);
      const t = (shape: number[]): tf.Tensor =>
        tf.tensor(
          new Float32Array(shape.reduce((p, q) => p * q, 1)).map(() => r.next()),
          shape,
        );
      return [
        tf.matMul(t([7, 5]), t([5, 9])),
        tf.matMul(t([2, 3, 6, 4]), t([2, 3, 5, 4]), false, true),
        tf.matMul(t([3, 0]), t([0, 4])),
        tf.matMul(t([0, 2]), t([2, 3])),
      ];
    });
    expect(wasm!.map((x) => x.shape)).toEqual(cpu!.map((x) => x.shape));
    wasm!.forEach((x, j) => x.data.forEach((v, i) => expect(Math.abs(v - cpu![j]!.data[i]!)).toBeLessThan(1e-5)));
  });

  it('SIMD Exp equals the cpu backend to float precision, at the edges too', async () => {
    const edges = [
      -1e9,
      -1000,
      -88,
      -87.5,
      -87.2,
      -1e-3,
      0,
      1e-3,
      1,
      20,
      88.5,
      88.72,
      88.8,
      100,
      Infinity,
      -Infinity,
      NaN,
    ];
    const rng = createRng(12);
    const xs = [...edges, ...Array.from({ length: 40 }, () => rng.next() * 60 - 30)];
    const [cpu, wasm] = await onBoth(() => [
      tf.exp(tf.tensor1d(xs)),
      tf.exp(tf.tensor1d(xs.slice(0, 7))),
      tf.exp(tf.tensor2d(xs.slice(0, 54), [6, 9])),
    ]);
    wasm!.forEach((x, j) =>
      x.data.forEach((v, i) => {
        const want = cpu![j]!.data[i]!;
        if (Number.isNaN(want) || !Number.isFinite(want)) expect(v, `exp(${xs[i]})`).toBe(want);
        else expect(Math.abs(v - want), `exp(${xs[i]})`).toBeLessThanOrEqual(3e-7 * want + 1.2e-38);
      }),
    );
  });

  it('SIMD Softmax and its fused gradient equal the cpu backend (any row length, masked entries)', async () => {
    const [cpu, wasm] = await onBoth(() => {
      const r = createRng(13);
      const out: tf.Tensor[] = [];
      for (const shape of [
        [3, 5, 7],
        [2, 48],
        [4, 1],
        [2, 3, 9],
      ]) {
        const data = new Float32Array(shape.reduce((p, q) => p * q, 1)).map(() => (r.next() * 2 - 1) * 8);
        data[0] = -1e9; // a masked key, as attention's masks write
        const x = tf.tensor(data, shape);
        const w = tf.tensor(
          new Float32Array(data.length).map(() => r.next() * 2 - 1),
          shape,
        );
        out.push(tf.softmax(x), tf.grad((z: tf.Tensor) => tf.sum(tf.mul(tf.softmax(z), w)))(x));
      }
      return out;
    });
    wasm!.forEach((x, j) =>
      x.data.forEach((v, i) => expect(Math.abs(v - cpu![j]!.data[i]!), `case ${j}`).toBeLessThan(2e-6)),
    );
  });

  it('Concat and GatherV2 equal the cpu backend', async () => {
    const [cpu, wasm] = await onBoth(() => {
      const r = createRng(15);
      const t = (shape: number[]): tf.Tensor =>
        tf.tensor(
          new Float32Array(shape.reduce((p, q) => p * q, 1)).map(() => r.next()),
          shape,
        );
      const a = t([3, 4, 5]);
      return [
        tf.concat([a, t([3, 2, 5])], 1),
        tf.concat([a, t([3, 4, 1]), t([3, 4, 40])], 2),
        tf.concat([a, a], 0),
        tf.concat([t([2, 3]), t([2, 0])], 1),
        tf.concat([tf.tensor1d([1, 2], 'int32'), tf.tensor1d([3], 'int32')]),
        tf.gather(a, tf.tensor1d([2, 0, 2], 'int32')),
        tf.gather(
          a,
          tf.tensor2d(
            [
              [1, 3],
              [0, 0],
            ],
            [2, 2],
            'int32',
          ),
          1,
        ),
        tf.gather(t([100, 64]), tf.tensor1d([99, 0, 7], 'int32')),
        tf.gather(a, tf.tensor1d([], 'int32'), 2),
      ];
    });
    expect(wasm!.map((x) => x.shape)).toEqual(cpu!.map((x) => x.shape));
    wasm!.forEach((x, j) => expect(Array.from(x.data), `case ${j}`).toEqual(Array.from(cpu![j]!.data)));
  });

  it('SIMD Sum over leading axes (and every other Sum) equals the cpu backend', async () => {
    const [cpu, wasm] = await onBoth(() => {
      const r = createRng(10);
      const x = tf.tensor(
        new Float32Array(2 * 3 * 5 * 7).map(() => r.next() * 2 - 1),
        [2, 3, 5, 7],
      );
      return [
        tf.sum(x, 0),
        tf.sum(x, [0, 1]),
        tf.sum(x, [1, 0], true),
        tf.sum(x, [0, 1, 2]),
        tf.sum(x, -1),
        tf.sum(x, [1, 2]),
        tf.sum(x),
        tf.sum(tf.reshape(x, [210, 1]), 0),
        tf.sum(tf.zeros([0, 3]), 0),
      ];
    });
    expect(wasm!.map((x) => x.shape)).toEqual(cpu!.map((x) => x.shape));
    wasm!.forEach((x, j) =>
      x.data.forEach((v, i) => expect(Math.abs(v - cpu![j]!.data[i]!), `case ${j}`).toBeLessThan(1e-5)),
    );
  });

  it('Slice, SplitV and Identity equal the cpu backend', async () => {
    const rng = createRng(3);
    const shape = [3, 4, 5, 6];
    const data = new Float32Array(360).map(() => rng.next());
    const cases = (): tf.Tensor[] => {
      const x = tf.tensor(data, shape);
      const x2 = tf.reshape(x, [12, 30]);
      return [
        tf.slice(x, [1, 0, 0, 0], [2, 4, 5, 6]),
        tf.slice(x, [0, 1, 2, 3], [3, 2, 3, 2]),
        tf.slice(x, [2, 3, 4, 5], [1, 1, 1, 1]),
        tf.slice(x2, [3, 0], [5, 30]),
        tf.slice(x2, [0, 7], [12, 20]),
        tf.slice(tf.reshape(x, [360]), [17], [100]),
        ...tf.split(x2, 4, 0),
        ...tf.split(x2, [10, 15, 5], 1),
        ...tf.split(x, [1, 2], 0),
        tf.slice(x, [0, 1, 0, 0], [3, 2, 5, 6]),
        tf.slice(x, [1, 2, 1, 0], [2, 2, 3, 6]),
        ...tf.split(x, [2, 3], 2),
        tf.clone(x),
        tf.slice(tf.tensor1d([1, 2, 3, 4], 'int32'), [1], [2]),
      ];
    };
    await initBackend('cpu', { log: () => {} });
    const want = await Promise.all(
      tf.tidy(cases).map(async (t) => ({ shape: t.shape, data: Array.from(await t.data()) })),
    );
    await initBackend('wasm', { log: () => {} });
    const got = await Promise.all(
      tf.tidy(cases).map(async (t) => ({ shape: t.shape, data: Array.from(await t.data()) })),
    );
    expect(got).toEqual(want);
  });

  for (const other of ['wasm', 'tensorflow'] as const)
    itOn(other)(named(other, 'model logits equal those on cpu'), async () => {
      const mc: ModelConfig = { vocabSize: 20, dModel: 16, layers: 2, heads: 4, mlpRatio: 4, maxPositions: 12 };
      const rng = createRng(5);
      const N = 3,
        T = 9;
      const tokens = new Int32Array(N * T).map(() => rng.int(0, 19));
      const pad = new Int32Array([0, 3, 1]);
      const run = async (b: 'cpu' | typeof other): Promise<Float32Array> => {
        await useBackend(b);
        const params = makeParams(initWeights(mc, createRng(6)));
        const l = tf.tidy(() =>
          windowLogits(params, mc, { tokens, N, T, pad, answerFrom: 5, answerPos: 7 }, 2, 6, true),
        );
        const d = (await l.data()) as Float32Array;
        l.dispose();
        for (const p of params.values()) p.dispose();
        return d;
      };
      const a = await run('cpu');
      const b = await run(other);
      for (let i = 0; i < a.length; i++) expect(Math.abs(a[i]! - b[i]!)).toBeLessThan(1e-4);
    });
});

// Last in the file: loading tfjs-node registers tfjs's gradients over ours for the rest of the process.
describe('on tensorflow', () => {
  itOn('tensorflow')(
    named(
      'tensorflow',
      'LayerNorm and GELU (the native fused ops, accel/tf-ops.cc) match float64 references and finite differences',
    ),
    async () => {
      await useBackend('tensorflow');
      await layerNormAndGelu();
    },
  );

  itOn('tensorflow')(
    named(
      'tensorflow',
      'the fused product with a bias (accel/tf-ops.cc) matches a float64 reference and finite differences, across row blocks',
    ),
    async () => {
      await useBackend('tensorflow');
      const linear = fusedOp('linear');
      expect(linear).not.toBeNull();
      const rng = createRng(41);
      // 300 rows: one full block of 256 and a partial one, whose dw and db are summed with the first's
      const n = 300,
        k = 3,
        m = 2;
      const rnd = (shape: number[]): { data: Float32Array; shape: number[] } => ({
        data: new Float32Array(shape.reduce((a, b) => a * b, 1)).map(() => rng.next() * 2 - 1),
        shape,
      });
      await checkGrad(
        ([x, w, b]) => linear!(x as tf.Tensor2D, w!, b!),
        ([x, w, b]) =>
          Float64Array.from({ length: n * m }, (_, i) => {
            const r = Math.floor(i / m),
              c = i % m;
            let s = b![c]!;
            for (let j = 0; j < k; j++) s += x![r * k + j]! * w![j * m + c]!;
            return s;
          }),
        [rnd([n, k]), rnd([k, m]), rnd([m])],
        42,
      );
    },
  );

  itOn('tensorflow')(
    named(
      'tensorflow',
      "the targets' log-probs and entropies (accel/tf-ops.cc) match a float64 reference and finite differences, masked logits too",
    ),
    async () => {
      await useBackend('tensorflow');
      expect(fusedOp('targetLogp')).not.toBeNull();
      const rng = createRng(61);
      const n = 7,
        V = 9;
      const targets = Int32Array.from({ length: n }, (_, r) => r % V);
      // one logit per row masked as the grammar masks them (never the target's)
      const z = new Float32Array(n * V).map(() => (rng.next() * 2 - 1) * 3);
      for (let r = 0; r < n; r++) z[r * V + ((targets[r]! + 3) % V)] = -1e9;
      const ref = ([x]: Float64Array[]): Float64Array => {
        const out = new Float64Array(2 * n);
        for (let r = 0; r < n; r++) {
          const row = Array.from(x!.subarray(r * V, (r + 1) * V));
          const m = Math.max(...row);
          const lse = m + Math.log(row.reduce((a, v) => a + Math.exp(v - m), 0));
          out[r] = row[targets[r]!]! - lse;
          out[n + r] = -row.reduce((a, v) => a + Math.exp(v - lse) * (v - lse), 0);
        }
        return out;
      };
      await checkGrad(
        ([x]) => {
          const { logp, ent } = targetLogp(x as tf.Tensor2D, targets);
          return tf.concat([logp, ent!]);
        },
        ref,
        [{ data: z, shape: [n, V] }],
        62,
      );
      expect(() => tf.tidy(() => targetLogp(tf.zeros([2, V]) as tf.Tensor2D, Int32Array.from([0, V])))).toThrow(
        /outside \[0, 9\)/,
      );
    },
  );

  itOn('tensorflow')(
    named(
      'tensorflow',
      'fused attention (accel/tf-ops.cc) matches a float64 reference and finite differences, per-row and shared masks',
    ),
    async () => {
      await useBackend('tensorflow');
      const attention = fusedOp('attention');
      expect(attention).not.toBeNull();
      const rng = createRng(31);
      const N = 2,
        T = 5,
        H = 2,
        d = 6,
        dh = d / H,
        NEG = -1e9;
      // causal; in the per-row mask row 1 also hides key 1 from queries 2.. (no query sees no key: a
      // fully masked row's scores round to the same float32 value and have no float64 reference)
      const masks = [1, N].map((Nm) => {
        const m = new Float32Array(Nm * T * T);
        for (let n = 0; n < Nm; n++)
          for (let t = 0; t < T; t++)
            for (let l = 0; l < T; l++) if (l > t || (n === 1 && l === 1 && t >= 2)) m[(n * T + t) * T + l] = NEG;
        return { data: m, Nm };
      });
      for (const { data: m, Nm } of masks) {
        const ref = ([q, k, v]: Float64Array[]): Float64Array => {
          const o = new Float64Array(N * T * d);
          for (let n = 0; n < N; n++)
            for (let h = 0; h < H; h++)
              for (let t = 0; t < T; t++) {
                const at = (r: number, j: number): number => (n * T + r) * d + h * dh + j;
                const s = Array.from({ length: T }, (_, l) => {
                  let dot = 0;
                  for (let j = 0; j < dh; j++) dot += q![at(t, j)]! * k![at(l, j)]!;
                  return dot / Math.sqrt(dh) + m[((Nm === 1 ? 0 : n) * T + t) * T + l]!;
                });
                const mx = Math.max(...s);
                const e = s.map((x) => Math.exp(x - mx));
                const z = e.reduce((a, x) => a + x, 0);
                for (let j = 0; j < dh; j++) o[at(t, j)] = e.reduce((a, x, l) => a + (x / z) * v![at(l, j)]!, 0);
              }
          return o;
        };
        const mask = tf.tensor(m, [Nm, 1, T, T]);
        const qkv = { data: new Float32Array(N * T * 3 * d).map(() => rng.next() * 2 - 1), shape: [N * T, 3 * d] };
        // the reference takes q, k and v apart from qkv's columns
        const cols = (x: Float64Array, from: number): Float64Array =>
          Float64Array.from({ length: N * T * d }, (_, i) => x[Math.floor(i / d) * 3 * d + from + (i % d)]!);
        await checkGrad(
          ([x]) => attention!(x as tf.Tensor2D, mask, H),
          ([x]) => ref([cols(x!, 0), cols(x!, d), cols(x!, 2 * d)]),
          [qkv],
          32 + Nm,
        );
        mask.dispose();
      }
    },
  );

  itOn('tensorflow')(
    named(
      'tensorflow',
      "LayerNorm, GELU, AdamW, attention and the product with a bias run as one TensorFlow kernel each; Softmax's gradient stays tfjs-node's",
    ),
    async () => {
      await useBackend('tensorflow');
      expect(fusedOp('layerNorm', 6)).not.toBeNull();
      expect(fusedOp('gelu', 24)).not.toBeNull();
      expect(fusedOp('adamw', 24)).not.toBeNull();
      expect(fusedOp('attention')).not.toBeNull();
      expect(fusedOp('linear')).not.toBeNull();
      expect(fusedOp('targetLogp')).not.toBeNull();
      expect(fusedOp('softmaxGrad')).toBeNull();
      const [x, g, b] = [tf.randomNormal([4, 6], 0, 1, 'float32', 1), tf.ones([6]), tf.zeros([6])];
      const prof = await tf.profile(() => tf.grads((a: tf.Tensor) => tf.sum(gelu(layerNorm(a, g, b))))([x]));
      const names = new Set(prof.kernels.map((k) => k.name));
      for (const k of ['CogenLayerNorm', 'CogenLayerNormGrad', 'CogenGelu', 'CogenGeluGrad'])
        expect(names, k).toContain(k);
      tf.dispose([x, g, b]);
      // the model's attention runs the fused op where no cache is kept (training), and its products with a bias run fused
      const mc: ModelConfig = { vocabSize: 12, dModel: 8, layers: 1, heads: 2, mlpRatio: 2, maxPositions: 8 };
      const params = makeParams(initWeights(mc, createRng(7)));
      const batch = { tokens: new Int32Array(2 * 6).fill(3), N: 2, T: 6, pad: new Int32Array([0, 2]) };
      const att = await tf.profile(
        () => tf.variableGrads(() => tf.sum(windowLogits(params, mc, batch, 1, 4, false))).value,
      );
      const attNames = new Set(att.kernels.map((k) => k.name));
      for (const k of ['CogenAttention', 'CogenAttentionGrad', 'CogenLinear', 'CogenLinearGrad'])
        expect(attNames, k).toContain(k);
      for (const p of params.values()) p.dispose();
    },
  );
});
