// Faster tfjs-wasm kernels for what the solver does most (same results, fewer copies), registered
// over tfjs-wasm's own when the wasm backend starts:
// - Identity copies its input; the engine runs it for every tensor a gradient saves (tf.clone),
//   ~230 copies per training step. Tensors are immutable (a variable's assign swaps its data), so
//   the output can share the input's data, as Reshape and the cpu backend's Identity do.
// - Slice and SplitV read the whole input out of the wasm heap (a copy) for every slice; these copy
//   only the slice, from a view of the heap.
import * as tf from '@tensorflow/tfjs-core';

type WasmBackend = {
  incRef(id: object): void;
  makeOutput(shape: number[], dtype: tf.DataType): tf.TensorInfo;
  typedArrayFromHeap(t: tf.TensorInfo): Float32Array | Int32Array | Uint8Array;
};

/** Copies x[begin : begin + size] into a new tensor (views taken after the allocation: it may grow the heap). */
function sliceHeap(be: WasmBackend, x: tf.TensorInfo, begin: number[], size: number[]): tf.TensorInfo {
  const out = be.makeOutput(size, x.dtype);
  const n = size.reduce((p, q) => p * q, 1);
  if (n === 0) return out;
  const xv = be.typedArrayFromHeap(x);
  const ov = be.typedArrayFromHeap(out);
  const rank = x.shape.length;
  const strides = new Array<number>(rank);
  for (let i = rank - 1, st = 1; i >= 0; i--) { strides[i] = st; st *= x.shape[i]!; }
  if (tf.slice_util.isSliceContinous(x.shape, begin, size)) {
    const off = tf.slice_util.computeFlatOffset(begin, strides);
    ov.set(xv.subarray(off, off + n));
    return out;
  }
  const L = size[rank - 1]!;
  const idx = new Array<number>(rank - 1).fill(0);
  for (let o = 0; o < n; o += L) {
    let src = begin[rank - 1]!;
    for (let i = 0; i < rank - 1; i++) src += (begin[i]! + idx[i]!) * strides[i]!;
    if (L >= 32) ov.set(xv.subarray(src, src + L), o);
    else for (let j = 0; j < L; j++) ov[o + j] = xv[src + j]!;
    for (let i = rank - 2; i >= 0; i--) {
      if (++idx[i]! < size[i]!) break;
      idx[i] = 0;
    }
  }
  return out;
}

let wasmKernelsPatched = false;
let fastWasmKernels = true;
/** For benchmarks: false runs tfjs-wasm's own Identity, Slice and SplitV (the naïve baseline). */
export function setFastWasmKernels(on: boolean): void {
  fastWasmKernels = on;
}

export function patchWasmKernels(): void {
  if (wasmKernelsPatched) return;
  wasmKernelsPatched = true;
  type Args = { inputs: tf.NamedTensorInfoMap; backend: unknown; attrs?: Record<string, unknown> };
  const replace = (kernelName: string, f: (a: Args) => tf.TensorInfo | tf.TensorInfo[]): void => {
    const orig = tf.getKernel(kernelName, 'wasm');
    if (!orig) return;
    const kernelFunc = (a: Args): tf.TensorInfo | tf.TensorInfo[] =>
      a.inputs.x!.dtype === 'string' || !fastWasmKernels ? (orig.kernelFunc as unknown as (a: Args) => tf.TensorInfo)(a) : f(a);
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
    const [begin, size] = tf.slice_util.parseSliceParams(x, attrs!.begin as number[], attrs!.size as number[] | undefined);
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
}

