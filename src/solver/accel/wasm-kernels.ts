// Faster tfjs-wasm kernels for what the solver does most (the same math to float precision),
// registered over tfjs-wasm's own when the wasm backend starts, and fused kernels of our own:
// - BatchMatMul and _FusedMatMul (float32; a bias, no activation) run simd.ts's
//   register-blocked SIMD matMul in place on the heap. tfjs-wasm runs batched or transposed
//   products through a scalar loop (10× slower on attention's shapes) and only plain 2-D ones
//   through XNNPACK, which the kernel also beats here. A transposed A is read through strides; a
//   transposed B is packed first.
// - Exp is simd.ts's polynomial exp (tfjs-wasm's took ~2 ms for 200K floats); Softmax over the
//   last axis uses it too. Sum over leading axes (bias gradients) is one SIMD column sum
//   (tfjs-wasm transposes first).
// - Identity copies its input; the engine runs it for every tensor a gradient saves (tf.clone),
//   ~230 copies per training step. Tensors are immutable (a variable's assign swaps its data), so
//   the output can share the input's data, as Reshape and the cpu backend's Identity do.
// - Slice and SplitV read the whole input out of the wasm heap (a copy) for every slice; these copy
//   only the slice, from a view of the heap. Concat and GatherV2 (decoding's KV cache and token
//   embedding: ~150 µs each in tfjs-wasm for a few KB) copy runs with the SIMD module's copy2d.
// - fused ops of our own (fused-kernels.ts): GELU and LayerNorm with their gradients, Softmax's
//   gradient and the AdamW step, one pass each where the composite ops make 7–14; layers.ts,
//   gradients.ts and optim.ts get them through ../fused.ts.
import * as tf from '@tensorflow/tfjs-core';
import { registerFusedKernels } from './fused-kernels.js';
import { fastKernelsOn, prod, ptr, setSimdModule, simdFor, simdReady, type WasmBackend } from './heap.js';
import { compileSimdModule } from './simd.js';

/** C = op(A)·op(B) (+ bias [N]) with broadcast batch dims; null where the SIMD kernel does not apply. */
function simdMatMul(
  be: WasmBackend,
  a: tf.TensorInfo,
  b: tf.TensorInfo,
  tA: boolean,
  tB: boolean,
  bias?: tf.TensorInfo,
): tf.TensorInfo | null {
  if (!simdReady() || a.dtype !== 'float32' || b.dtype !== 'float32' || a.shape.length < 2 || b.shape.length < 2)
    return null;
  const ra = a.shape.length,
    rb = b.shape.length;
  const M = a.shape[tA ? ra - 1 : ra - 2]!,
    K = a.shape[tA ? ra - 2 : ra - 1]!;
  const N = b.shape[tB ? rb - 2 : rb - 1]!;
  if (b.shape[tB ? rb - 1 : rb - 2] !== K) return null;
  if (bias && (bias.dtype !== 'float32' || prod(bias.shape) !== N || bias.shape.at(-1) !== N)) return null;
  const outerA = a.shape.slice(0, -2),
    outerB = b.shape.slice(0, -2);
  const outer = tf.backend_util.assertAndGetBroadcastShape(outerA, outerB);
  const batch = prod(outer),
    batchA = prod(outerA),
    batchB = prod(outerB);
  if ((batchA !== batch && batchA !== 1) || (batchB !== batch && batchB !== 1)) return null;
  const out = be.makeOutput([...outer, M, N], 'float32');
  if (batch * M * N === 0) return out;
  if (K === 0) {
    const o = be.typedArrayFromHeap(out);
    if (!bias) o.fill(0);
    else for (let i = 0, bv = be.typedArrayFromHeap(bias); i < o.length; i += N) o.set(bv, i);
    return out;
  }
  const k = simdFor(be);
  let packed: tf.TensorInfo | null = null;
  if (tB) {
    packed = be.makeOutput([batchB, K, N], 'float32');
    k.transpose(ptr(be, b), ptr(be, packed), batchB, N, K);
  }
  k.matmul(
    ptr(be, a),
    ptr(be, packed ?? b),
    ptr(be, out),
    batch,
    M,
    N,
    K,
    tA ? 1 : K,
    tA ? M : 1,
    batchA === 1 ? 0 : M * K,
    batchB === 1 ? 0 : K * N,
    bias ? ptr(be, bias) : 0,
  );
  if (packed) be.disposeData(packed.dataId, true);
  return out;
}

/** e^x (float32) with the SIMD exp (relative error ≤ 2.5e-7; tfjs-wasm's took ~2 ms for 200K floats); the last n mod 4 by Math.exp. */
function simdExp(be: WasmBackend, x: tf.TensorInfo): tf.TensorInfo | null {
  if (!simdReady() || x.dtype !== 'float32') return null;
  const out = be.makeOutput(x.shape, 'float32');
  const n = prod(x.shape),
    n4 = n - (n % 4);
  if (n4 > 0) simdFor(be).exp(ptr(be, x), ptr(be, out), n4);
  if (n4 < n) {
    const xv = be.typedArrayFromHeap(x),
      ov = be.typedArrayFromHeap(out);
    for (let i = n4; i < n; i++) ov[i] = Math.exp(xv[i]!);
  }
  return out;
}

/** Σ over the leading axes of a float32 tensor as one column sum; null for other reductions. */
function simdLeadingSum(
  be: WasmBackend,
  x: tf.TensorInfo,
  axis: number | number[],
  keepDims: boolean,
): tf.TensorInfo | null {
  if (!simdReady() || x.dtype !== 'float32') return null;
  const axes = [...tf.util.parseAxisParam(axis, x.shape)].sort((p, q) => p - q);
  const j = axes.length;
  if (j === 0 || j >= x.shape.length || axes.some((a, i) => a !== i)) return null;
  const rest = x.shape.slice(j);
  const out = be.makeOutput(keepDims ? [...axes.map(() => 1), ...rest] : rest, 'float32');
  const R = prod(x.shape.slice(0, j)),
    C = prod(rest);
  if (C === 0) return out;
  if (R === 0) {
    be.typedArrayFromHeap(out).fill(0);
    return out;
  }
  simdFor(be).colsum(ptr(be, x), ptr(be, out), R, C);
  return out;
}

/** Copies x[begin : begin + size] into a new tensor (views taken after the allocation: it may grow the heap). */
function sliceHeap(be: WasmBackend, x: tf.TensorInfo, begin: number[], size: number[]): tf.TensorInfo {
  const out = be.makeOutput(size, x.dtype);
  const n = size.reduce((p, q) => p * q, 1);
  if (n === 0) return out;
  const xv = be.typedArrayFromHeap(x);
  const ov = be.typedArrayFromHeap(out);
  const rank = x.shape.length;
  const strides = new Array<number>(rank);
  for (let i = rank - 1, st = 1; i >= 0; i--) {
    strides[i] = st;
    st *= x.shape[i]!;
  }
  // Axes after j are whole, so each x[i0, …, i(j-1), begin_j : begin_j + size_j, …] is one contiguous run.
  let j = rank - 1;
  while (j > 0 && size[j] === x.shape[j]) j--;
  const run = size[j]! * strides[j]!;
  const idx = new Array<number>(j).fill(0);
  for (let o = 0; o < n; o += run) {
    let src = begin[j]! * strides[j]!;
    for (let i = 0; i < j; i++) src += (begin[i]! + idx[i]!) * strides[i]!;
    if (run >= 32) ov.set(xv.subarray(src, src + run), o);
    else for (let k = 0; k < run; k++) ov[o + k] = xv[src + k]!;
    for (let i = j - 1; i >= 0; i--) {
      if (++idx[i]! < size[i]!) break;
      idx[i] = 0;
    }
  }
  return out;
}

/** Concatenation along `axis` (4-byte dtypes): each input's runs copied into place by the SIMD copy. */
function concatHeap(be: WasmBackend, xs: tf.TensorInfo[], axis: number): tf.TensorInfo | null {
  if (!simdReady() || xs.some((x) => x.dtype !== 'float32' && x.dtype !== 'int32')) return null;
  const shape = xs[0]!.shape.slice();
  shape[axis] = xs.reduce((a, x) => a + x.shape[axis]!, 0);
  const out = be.makeOutput(shape, xs[0]!.dtype);
  const outer = prod(shape.slice(0, axis));
  const row = prod(shape.slice(axis));
  const k = simdFor(be);
  let at = ptr(be, out);
  for (const x of xs) {
    const run = prod(x.shape.slice(axis));
    if (outer * run > 0) k.copy2d(ptr(be, x), run, at, row, outer, run);
    at += 4 * run;
  }
  return out;
}

/** tf.gather along `axis` (batchDims 0, 4-byte dtypes) by copying rows; null when an index is out of range. */
function gatherHeap(be: WasmBackend, x: tf.TensorInfo, indices: tf.TensorInfo, axis: number): tf.TensorInfo | null {
  if (!simdReady() || (x.dtype !== 'float32' && x.dtype !== 'int32')) return null;
  const idx = Array.from(be.typedArrayFromHeap(indices));
  const n = x.shape[axis]!;
  if (idx.some((i) => !(i >= 0 && i < n))) return null;
  const out = be.makeOutput([...x.shape.slice(0, axis), ...indices.shape, ...x.shape.slice(axis + 1)], x.dtype);
  const outer = prod(x.shape.slice(0, axis)),
    inner = prod(x.shape.slice(axis + 1));
  if (outer * idx.length * inner === 0) return out;
  const k = simdFor(be);
  const xp = ptr(be, x),
    op = ptr(be, out);
  // index j: for every outer o, out[o, j, :] ← x[o, idx[j], :]
  idx.forEach((i, j) => k.copy2d(xp + 4 * i * inner, n * inner, op + 4 * j * inner, idx.length * inner, outer, inner));
  return out;
}

let wasmKernelsPatched = false;

/**
 * Registers the kernels above over tfjs-wasm's (once). Returns why the SIMD ones are off, or null:
 * without them the others still apply (and the caller keeps gradients.ts's explicit transposes).
 */
export async function patchWasmKernels(): Promise<string | null> {
  if (wasmKernelsPatched) return simdReady() ? null : 'SIMD kernels unavailable';
  wasmKernelsPatched = true;
  let simdOff: string | null = null;
  try {
    setSimdModule(await compileSimdModule());
    registerFusedKernels();
  } catch (e) {
    simdOff = `SIMD kernels unavailable (${String((e as Error).message).split('\n')[0]})`;
  }
  type Args = { inputs: tf.NamedTensorInfoMap; backend: unknown; attrs?: Record<string, unknown> };
  // f returns null to defer to tfjs-wasm's own kernel.
  const replace = (kernelName: string, f: (a: Args) => tf.TensorInfo | tf.TensorInfo[] | null): void => {
    const orig = tf.getKernel(kernelName, 'wasm');
    if (!orig) return;
    const kernelFunc = (a: Args): tf.TensorInfo | tf.TensorInfo[] =>
      (fastKernelsOn() && Object.values(a.inputs).every((t) => t?.dtype !== 'string') ? f(a) : null) ??
      (orig.kernelFunc as unknown as (a: Args) => tf.TensorInfo)(a);
    tf.unregisterKernel(kernelName, 'wasm');
    tf.registerKernel({ ...orig, kernelFunc: kernelFunc as unknown as tf.KernelFunc });
  };
  replace('Identity', ({ inputs, backend }) => {
    const x = inputs.x!;
    (backend as WasmBackend).incRef(x.dataId);
    return { dataId: x.dataId, shape: x.shape, dtype: x.dtype };
  });
  replace('Slice', ({ inputs, backend, attrs }) => {
    const x = inputs.x! as tf.TensorInfo;
    const [begin, size] = tf.slice_util.parseSliceParams(
      x,
      attrs!.begin as number[],
      attrs!.size as number[] | undefined,
    );
    return sliceHeap(backend as WasmBackend, x, begin!, size!);
  });
  replace('SplitV', ({ inputs, backend, attrs }) => {
    const x = inputs.x! as tf.TensorInfo;
    const axis = tf.util.parseAxisParam(attrs!.axis as number, x.shape)[0]!;
    const sizes = tf.backend_util.prepareSplitSize(x, attrs!.numOrSizeSplits as number[] | number, axis);
    const begin = new Array<number>(x.shape.length).fill(0);
    return sizes.map((s) => {
      const size = x.shape.slice();
      size[axis] = s;
      const o = sliceHeap(backend as WasmBackend, x, begin.slice(), size);
      begin[axis]! += s;
      return o;
    });
  });
  replace('Concat', ({ inputs, backend, attrs }) => {
    const xs = Object.values(inputs) as tf.TensorInfo[];
    const axis = tf.util.parseAxisParam(attrs!.axis as number, xs[0]!.shape)[0]!;
    const same = xs.every(
      (x) =>
        x.dtype === xs[0]!.dtype &&
        x.shape.length === xs[0]!.shape.length &&
        x.shape.every((d, i) => i === axis || d === xs[0]!.shape[i]),
    );
    return same ? concatHeap(backend as WasmBackend, xs, axis) : null;
  });
  replace('GatherV2', ({ inputs, backend, attrs }) => {
    const x = inputs.x!,
      indices = inputs.indices!;
    if ((attrs!.batchDims as number) !== 0 || indices.dtype !== 'int32') return null;
    return gatherHeap(backend as WasmBackend, x, indices, tf.util.parseAxisParam(attrs!.axis as number, x.shape)[0]!);
  });
  replace('BatchMatMul', ({ inputs, backend, attrs }) =>
    simdMatMul(
      backend as WasmBackend,
      inputs.a!,
      inputs.b!,
      attrs!.transposeA as boolean,
      attrs!.transposeB as boolean,
    ),
  );
  // tf.fused.matMul with a bias and no activation (layers.ts's linear): the bias starts the sum
  replace('_FusedMatMul', ({ inputs, backend, attrs }) =>
    !inputs.bias || inputs.preluActivationWeights || attrs!.activation !== 'linear'
      ? null
      : simdMatMul(
          backend as WasmBackend,
          inputs.a!,
          inputs.b!,
          attrs!.transposeA as boolean,
          attrs!.transposeB as boolean,
          inputs.bias,
        ),
  );
  replace('Exp', ({ inputs, backend }) => simdExp(backend as WasmBackend, inputs.x!));
  replace('Softmax', ({ inputs, backend, attrs }) => {
    const x = inputs.logits!,
      be = backend as WasmBackend,
      C = x.shape.at(-1) ?? 0;
    const dim = attrs!.dim as number;
    if (!simdReady() || x.dtype !== 'float32' || (dim !== -1 && dim !== x.shape.length - 1)) return null;
    const y = be.makeOutput(x.shape, 'float32');
    if (C > 0) simdFor(be).softmax(ptr(be, x), ptr(be, y), prod(x.shape) / C, C);
    return y;
  });
  replace('Sum', ({ inputs, backend, attrs }) =>
    simdLeadingSum(backend as WasmBackend, inputs.x!, attrs!.axis as number | number[], attrs!.keepDims as boolean),
  );
  return simdOff;
}
