// The fused ops of fused.ts: each is one tfjs kernel of our own where the composite ops in layers.ts
// and optim.ts make 7–16 kernels, and the tfjs-level op around it (with its gradient) that layers.ts
// and optim.ts get through fused.ts. On wasm the kernels run one pass of the SIMD module (simd.ts,
// registered here); on tensorflow, TensorFlow kernels of our own (tf-ops.cc, registered by tf-ops.ts).
import * as tf from '@tensorflow/tfjs-core';
import { adamwScalars, plugFusedOps, type AdamWStep, type FusedOpName, type FusedOps } from '../fused.js';
import { fastKernelsOn, prod, ptr, simdFor, type WasmBackend } from './heap.js';
import type { SimdKernels } from './simd.js';

/** Kernel names of the fused ops (the same on both backends that have them). */
export const FUSED = {
  gelu: 'CogenGelu', // {x} → y
  geluGrad: 'CogenGeluGrad', // {x, dy} → dx
  layerNorm: 'CogenLayerNorm', // {x [R, C], g, b} → [y, mean [R], rstd [R]]
  layerNormGrad: 'CogenLayerNormGrad', // {x, g, mean, rstd, dy} → [dx, dg, db]
  adamw: 'CogenAdamW', // {p, g, m, v, scale []}, {lr, beta1, beta2, eps, decay, bc1, bc2} → [p', m', v']
  softmaxGrad: 'CogenSoftmaxGrad', // {y, dy} → dx over the last axis
  targetLogp: 'CogenTargetLogp', // {z [n, V], targets [n] int32} → [stats [2, n] (logp, ent), lsm [n, V]]
  targetLogpGrad: 'CogenTargetLogpGrad', // {lsm, targets, stats, dstats} → dz
  linear: 'CogenLinear', // {x [n, k], w [k, m], b [m]} → x·w + b
  linearGrad: 'CogenLinearGrad', // {x, w, dy} → [dx, dw, db]
  attention: 'CogenAttention', // {qkv [N·T, 3d], mask [N|1, 1, T, T]}, {heads} → [o [N·T, d], p [N, heads, T, T]]
  attentionGrad: 'CogenAttentionGrad', // {qkv, p, do}, {heads} → dqkv
  // {ids, pos, pad, prompt0.., past0.., weight0..}, {heads, layers, steps, count} → [logits, kv]
  decodeStep: 'CogenDecodeStep',
} as const;

/** The kernel each op runs first. */
const KERNEL_OF: Record<FusedOpName, string> = {
  layerNorm: FUSED.layerNorm,
  gelu: FUSED.gelu,
  softmaxGrad: FUSED.softmaxGrad,
  adamw: FUSED.adamw,
  attention: FUSED.attention,
  linear: FUSED.linear,
  targetLogp: FUSED.targetLogp,
  decodeStep: FUSED.decodeStep,
};

/** Whether the current backend has op's kernel; on wasm, also that the fast kernels are on and `size` floats fit its 4-wide loops. */
function applies(op: FusedOpName, size: number): boolean {
  const backend = tf.getBackend();
  if (tf.getKernel(KERNEL_OF[op], backend) === undefined) return false;
  return backend !== 'wasm' || (fastKernelsOn() && size % 4 === 0);
}

const run = (name: string, inputs: tf.NamedTensorMap, attrs?: object): tf.Tensor | tf.Tensor[] =>
  tf.engine().runKernel(name, inputs, attrs as tf.NamedAttrMap) as tf.Tensor | tf.Tensor[];

const fusedOps: FusedOps = {
  layerNorm(x, g, b) {
    const f = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
      const [x, g, b] = args as tf.Tensor[];
      const save = args[3] as tf.GradSaveFunc;
      const [y, mean, rstd] = run(FUSED.layerNorm, { x: x!, g: g!, b: b! }) as tf.Tensor[];
      save([x!, g!, mean!, rstd!]);
      return {
        value: y!,
        gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
          const [x, g, mean, rstd] = saved;
          return run(FUSED.layerNormGrad, {
            x: x!,
            g: g!,
            mean: mean!,
            rstd: rstd!,
            dy: dy as tf.Tensor,
          }) as tf.Tensor[];
        },
      };
    });
    return f(x, g, b);
  },
  gelu(x) {
    const f = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
      const x = args[0] as tf.Tensor;
      const save = args[1] as tf.GradSaveFunc;
      save([x]);
      return {
        value: run(FUSED.gelu, { x }) as tf.Tensor,
        gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => [
          run(FUSED.geluGrad, { x: saved[0]!, dy: dy as tf.Tensor }) as tf.Tensor,
        ],
      };
    });
    return f(x);
  },
  softmaxGrad: (y, dy) => run(FUSED.softmaxGrad, { y, dy }) as tf.Tensor,
  targetLogp(z, targets) {
    // targets are ints without a gradient, so they are closed over, not an input (and saved: the
    // forward pass's scope disposes what it made)
    const f = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
      const z = args[0] as tf.Tensor;
      const save = args[1] as tf.GradSaveFunc;
      const [stats, lsm] = run(FUSED.targetLogp, { z, targets }) as tf.Tensor[];
      save([lsm!, stats!, targets]);
      return {
        value: stats!,
        gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => [
          run(FUSED.targetLogpGrad, {
            lsm: saved[0]!,
            targets: saved[2]!,
            stats: saved[1]!,
            dstats: dy as tf.Tensor,
          }) as tf.Tensor,
        ],
      };
    });
    return tf.unstack(f(z)) as [tf.Tensor1D, tf.Tensor1D];
  },
  linear(x, w, b) {
    const f = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
      const [x, w, b] = args as tf.Tensor[];
      const save = args[3] as tf.GradSaveFunc;
      save([x!, w!]);
      return {
        value: run(FUSED.linear, { x: x!, w: w!, b: b! }) as tf.Tensor,
        gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) =>
          run(FUSED.linearGrad, { x: saved[0]!, w: saved[1]!, dy: dy as tf.Tensor }) as tf.Tensor[],
      };
    });
    return f(x, w, b) as tf.Tensor2D;
  },
  attention(qkv, mask, heads) {
    // mask is a constant of the batch (no gradient), so it is closed over, not an input; the
    // gradient does not read it (the forward pass's scope disposes what it made)
    const f = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
      const qkv = args[0] as tf.Tensor;
      const save = args[1] as tf.GradSaveFunc;
      const [o, p] = run(FUSED.attention, { qkv, mask }, { heads }) as tf.Tensor[];
      save([qkv, p!]);
      return {
        value: o!,
        gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => [
          run(FUSED.attentionGrad, { qkv: saved[0]!, p: saved[1]!, do: dy as tf.Tensor }, { heads }) as tf.Tensor,
        ],
      };
    });
    return f(qkv) as tf.Tensor2D;
  },
  adamw: (p, g, m, v, scale, step) => run(FUSED.adamw, { p, g, m, v, scale }, step) as tf.Tensor[],
  decodeStep({ ids, pos, pad, prompt, past, weights, heads }) {
    // the lists as numbered inputs; the kernel puts them back in order by the counts (tf-ops.ts)
    const inputs: tf.NamedTensorMap = { ids, pos, pad };
    prompt.forEach((t, i) => {
      inputs[`prompt${i}`] = t;
    });
    past.forEach((t, i) => {
      inputs[`past${i}`] = t;
    });
    weights.forEach((t, i) => {
      inputs[`weight${i}`] = t;
    });
    return run(FUSED.decodeStep, inputs, {
      heads,
      layers: prompt.length,
      steps: past.length,
      count: weights.length,
    }) as [tf.Tensor2D, tf.Tensor];
  },
};

/** Registers the fused kernels for wasm (once) and plugs their ops into fused.ts. */
export function registerFusedKernels(): void {
  type Args = { inputs: tf.NamedTensorInfoMap; backend: unknown; attrs?: Record<string, number> };
  type Fn = (
    be: WasmBackend,
    k: SimdKernels,
    x: tf.NamedTensorInfoMap,
    attrs: Record<string, number>,
  ) => tf.TensorInfo | tf.TensorInfo[];
  const add = (kernelName: string, f: Fn): void => {
    if (tf.getKernel(kernelName, 'wasm')) return;
    const kernelFunc = ({ inputs, backend, attrs }: Args): tf.TensorInfo | tf.TensorInfo[] =>
      f(backend as WasmBackend, simdFor(backend as WasmBackend), inputs, attrs ?? {});
    tf.registerKernel({ kernelName, backendName: 'wasm', kernelFunc: kernelFunc as unknown as tf.KernelFunc });
  };
  add(FUSED.gelu, (be, k, { x }) => {
    const y = be.makeOutput(x!.shape, 'float32');
    k.gelu(ptr(be, x!), ptr(be, y), prod(x!.shape));
    return y;
  });
  add(FUSED.geluGrad, (be, k, { x, dy }) => {
    const dx = be.makeOutput(x!.shape, 'float32');
    k.gelu_grad(ptr(be, x!), ptr(be, dy!), ptr(be, dx), prod(x!.shape));
    return dx;
  });
  add(FUSED.layerNorm, (be, k, { x, g, b }) => {
    const C = x!.shape.at(-1)!,
      R = prod(x!.shape) / C;
    const y = be.makeOutput(x!.shape, 'float32'),
      mean = be.makeOutput([R], 'float32'),
      rstd = be.makeOutput([R], 'float32');
    k.layernorm(ptr(be, x!), ptr(be, g!), ptr(be, b!), ptr(be, y), ptr(be, mean), ptr(be, rstd), R, C);
    return [y, mean, rstd];
  });
  add(FUSED.layerNormGrad, (be, k, { x, g, mean, rstd, dy }) => {
    const C = x!.shape.at(-1)!,
      R = prod(x!.shape) / C;
    const dx = be.makeOutput(x!.shape, 'float32'),
      dg = be.makeOutput([C], 'float32'),
      db = be.makeOutput([C], 'float32');
    be.typedArrayFromHeap(dg).fill(0);
    be.typedArrayFromHeap(db).fill(0);
    k.layernorm_grad(
      ptr(be, x!),
      ptr(be, g!),
      ptr(be, mean!),
      ptr(be, rstd!),
      ptr(be, dy!),
      ptr(be, dx),
      ptr(be, dg),
      ptr(be, db),
      R,
      C,
    );
    return [dx, dg, db];
  });
  add(FUSED.softmaxGrad, (be, k, { y, dy }) => {
    const C = y!.shape.at(-1)!,
      dx = be.makeOutput(y!.shape, 'float32');
    if (C > 0) k.softmax_grad(ptr(be, y!), ptr(be, dy!), ptr(be, dx), prod(y!.shape) / C, C);
    return dx;
  });
  add(FUSED.adamw, (be, k, { p, g, m, v, scale }, a) => {
    const [po, mo, vo] = [p!, m!, v!].map((t) => be.makeOutput(t.shape, 'float32'));
    k.adamw(
      ptr(be, p!),
      ptr(be, g!),
      ptr(be, m!),
      ptr(be, v!),
      ptr(be, po!),
      ptr(be, mo!),
      ptr(be, vo!),
      prod(p!.shape),
      ptr(be, scale!),
      ...adamwScalars(a as unknown as AdamWStep),
    );
    return [po!, mo!, vo!];
  });
  plugFusedKernels();
}

/** Hands fused.ts the ops above; each applies where its backend has the kernels registered. */
export function plugFusedKernels(): void {
  plugFusedOps(fusedOps, applies);
}
