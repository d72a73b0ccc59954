// Backend selection: `auto` tries tensorflow → webgpu → wasm → cpu and says why each skipped one
// was skipped. tensorflow needs @tensorflow/tfjs-node-gpu or @tensorflow/tfjs-node installed by the
// user (optional peers; their installer downloads libtensorflow); webgpu needs the optional `webgpu`
// package (Dawn) and a hardware adapter (software adapters are skipped under auto).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import type { BackendName } from './config.js';

type Concrete = Exclude<BackendName, 'auto'>;
// Specifiers in variables: these packages may be absent, and TypeScript must not resolve them.
const TFJS_NODE = ['@tensorflow/tfjs-node-gpu', '@tensorflow/tfjs-node'];
const WEBGPU_PKG = 'webgpu';

async function tryTensorflow(): Promise<string | null> {
  const reasons: string[] = [];
  for (const pkg of TFJS_NODE) {
    try {
      await import(pkg);
      if (await tf.setBackend('tensorflow')) return null;
      reasons.push(`${pkg} loaded but the tensorflow backend did not start`);
    } catch (e) {
      const msg = String((e as Error).message).split('\n')[0]!;
      reasons.push(/Cannot find (package|module)/.test(msg) ? `${pkg} not installed` : `${pkg} failed to load (${msg})`);
    }
  }
  return reasons.join('; ');
}

/** Dawn reaches GPUs through Vulkan on Linux; without the loader it only prints a native warning. */
function vulkanLoaderPresent(): boolean {
  if (process.platform !== 'linux') return true;
  const dirs = [...(process.env.LD_LIBRARY_PATH ?? '').split(':').filter(Boolean), '/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib64', '/usr/lib', '/lib/x86_64-linux-gnu', '/usr/local/lib'];
  return dirs.some((d) => existsSync(join(d, 'libvulkan.so.1')));
}

async function tryWebgpu(allowSoftware: boolean): Promise<string | null> {
  if (!allowSoftware && !vulkanLoaderPresent()) return 'no Vulkan loader (libvulkan.so.1) for Dawn';
  let dawn: { create: (o: string[]) => unknown; globals: Record<string, unknown> };
  try {
    dawn = (await import(WEBGPU_PKG)) as typeof dawn;
  } catch {
    return 'the `webgpu` package (Dawn) is not installed';
  }
  try {
    const g = globalThis as Record<string, unknown>;
    Object.assign(g, dawn.globals);
    const gpu = dawn.create([]) as { requestAdapter(): Promise<{ info?: { vendor?: string; description?: string; architecture?: string }; isFallbackAdapter?: boolean } | null> };
    if (!g.navigator) g.navigator = {};
    (g.navigator as Record<string, unknown>).gpu = gpu;
    const adapter = await gpu.requestAdapter();
    if (!adapter) return 'Dawn found no GPU adapter';
    const desc = `${adapter.info?.vendor ?? ''} ${adapter.info?.architecture ?? ''} ${adapter.info?.description ?? ''}`.toLowerCase();
    if (!allowSoftware && (adapter.isFallbackAdapter || /swiftshader|llvmpipe|software/.test(desc))) {
      return `only a software adapter (${desc.trim() || 'fallback'})`;
    }
    await import('@tensorflow/tfjs-backend-webgpu');
    if (await tf.setBackend('webgpu')) return null;
    return 'the webgpu backend did not start';
  } catch (e) {
    return `webgpu failed: ${String((e as Error).message).split('\n')[0]}`;
  }
}

// Faster tfjs-wasm kernels for what the solver does most (same results, fewer copies):
// - Identity copies its input; the engine runs it for every tensor a gradient saves (tf.clone),
//   ~230 copies per training step. Tensors are immutable (a variable's assign swaps its data), so
//   the output can share the input's data, as Reshape and the cpu backend's Identity do.
// - Slice and SplitV read the whole input out of the wasm heap (a copy) for every slice; these copy
//   only the slice, from a view of the heap.
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

function patchWasmKernels(): void {
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

async function tryWasm(threads: number): Promise<string | null> {
  try {
    const w = await import('@tensorflow/tfjs-backend-wasm');
    if (threads > 0) w.setThreadsCount(threads);
    patchWasmKernels();
    if (await tf.setBackend('wasm')) return null;
    return 'the wasm backend did not start';
  } catch (e) {
    return `wasm failed: ${String((e as Error).message).split('\n')[0]}`;
  }
}

async function tryCpu(): Promise<string | null> {
  await import('@tensorflow/tfjs-backend-cpu');
  return (await tf.setBackend('cpu')) ? null : 'the cpu backend did not start';
}

let current: string | null = null;

/**
 * Selects and starts a backend; returns the name that runs. Logs which one and why the others
 * were skipped. An explicitly requested backend that cannot start falls back down the list.
 */
export async function initBackend(name: BackendName = 'auto', opts: { threads?: number; log?: (line: string) => void } = {}): Promise<string> {
  const log = opts.log ?? ((l: string) => console.error(l));
  const order: Concrete[] = name === 'auto' ? ['tensorflow', 'webgpu', 'wasm', 'cpu']
    : name === 'tensorflow' ? ['tensorflow', 'wasm', 'cpu']
    : name === 'webgpu' ? ['webgpu', 'wasm', 'cpu']
    : name === 'wasm' ? ['wasm', 'cpu'] : ['cpu'];
  if (current && current === order[0] && tf.getBackend() === current) return current;
  const skipped: string[] = [];
  for (const b of order) {
    const why = b === 'tensorflow' ? await tryTensorflow()
      : b === 'webgpu' ? await tryWebgpu(name === 'webgpu')
      : b === 'wasm' ? await tryWasm(opts.threads ?? 0)
      : await tryCpu();
    if (why === null) {
      await tf.ready();
      current = tf.getBackend();
      log(`solver backend: ${current}${skipped.length ? ` (skipped ${skipped.join('; ')})` : ''}`);
      return current;
    }
    skipped.push(`${b}: ${why}`);
  }
  throw new Error(`no tfjs backend could start: ${skipped.join('; ')}`);
}
