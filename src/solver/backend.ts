// Backend selection: `auto` tries tensorflow → webgpu → wasm → cpu and says why each skipped one
// was skipped. tensorflow needs @tensorflow/tfjs-node-gpu or @tensorflow/tfjs-node, built by
// `cogen setup tensorflow [--gpu]` (src/setup/tensorflow.ts; optional peers, which a plain `npm ci` leaves
// out); webgpu needs the optional `webgpu` package (Dawn) and a hardware adapter (software adapters
// are skipped under auto). On tensorflow every kernel's gradient is tfjs's own (loading tfjs-node
// registers them over gradients.ts's), and LayerNorm, GELU, attention, x·w + b and AdamW run as TensorFlow kernels of our
// own where setup built them (accel/tf-ops.cc), on solver.threads threads (default 1); TensorFlow's
// own ops follow TF_NUM_INTRAOP_THREADS / TF_NUM_INTEROP_THREADS (default here: 1), read once when
// the package loads.
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import type { BackendName } from './config.js';
import { setExplicitTranspose } from './gradients.js';
import { patchWasmKernels, registerTensorflowOps, setTensorflowOpsThreads } from './accel/index.js';

type Concrete = Exclude<BackendName, 'auto'>;
// Specifiers in variables: these packages may be absent, and TypeScript must not resolve them.
const TFJS_NODE = ['@tensorflow/tfjs-node-gpu', '@tensorflow/tfjs-node'];
const WEBGPU_PKG = 'webgpu';

async function tryTensorflow(threads: number, notes: string[]): Promise<string | null> {
  const reasons: string[] = [];
  // TensorFlow's INFO lines (oneDNN, CPU features) would come before ours; warnings stay
  process.env.TF_CPP_MIN_LOG_LEVEL ??= '1';
  // TensorFlow's thread pools, read once when the package loads: one thread for TensorFlow's own
  // ops unless the environment says otherwise. The model's ops are small: on 2 cores one intra-op
  // thread decoded 1.7x faster than two, and a second pool thread slowed the native ops' spinning
  // team (accel/tf-ops.cc), which is where solver.threads goes.
  process.env.TF_NUM_INTRAOP_THREADS ??= '1';
  process.env.TF_NUM_INTEROP_THREADS ??= '1';
  for (const pkg of TFJS_NODE) {
    try {
      await import(pkg);
      if (await tf.setBackend('tensorflow')) {
        const b = tf.backend() as unknown as { isUsingGpuDevice?: boolean; binding?: { TF_Version?: string } };
        const gpu = pkg.endsWith('-gpu')
          ? b.isUsingGpuDevice
            ? ', on the GPU'
            : ', GPU build but TensorFlow found no GPU: on the CPU'
          : '';
        // the fused ops as one TensorFlow kernel each (accel/tf-ops.cc); CPU kernels only
        const ops = b.isUsingGpuDevice ? 'composites on the GPU' : (registerTensorflowOps(pkg) ?? nativeOpsOn(threads));
        notes.push(`${pkg}, TensorFlow ${b.binding?.TF_Version ?? '?'}${gpu}, fused ops ${ops}`, ...reasons);
        // TensorFlow's MatMul takes transpose flags natively
        setExplicitTranspose(false);
        return null;
      }
      reasons.push(`${pkg} loaded but the tensorflow backend did not start`);
    } catch (e) {
      const msg = String((e as Error).message).split('\n')[0]!;
      reasons.push(
        /Cannot find (package|module)|Could not resolve/.test(msg)
          ? `${pkg} not set up (cogen setup tensorflow${pkg.endsWith('-gpu') ? ' --gpu' : ''})`
          : `${pkg} failed to load (${msg})`,
      );
    }
  }
  return reasons.join('; ');
}

/** Sets the native ops' threads (solver.threads; 0: one) and says so. */
function nativeOpsOn(threads: number): string {
  const n = threads > 0 ? threads : 1;
  setTensorflowOpsThreads(n);
  return `native on ${n} thread${n === 1 ? '' : 's'}`;
}

/** Dawn reaches GPUs through Vulkan on Linux; without the loader it only prints a native warning. */
function vulkanLoaderPresent(): boolean {
  if (process.platform !== 'linux') return true;
  const dirs = [
    ...(process.env.LD_LIBRARY_PATH ?? '').split(':').filter(Boolean),
    '/usr/lib/x86_64-linux-gnu',
    '/usr/lib/aarch64-linux-gnu',
    '/usr/lib64',
    '/usr/lib',
    '/lib/x86_64-linux-gnu',
    '/usr/local/lib',
  ];
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
    const gpu = dawn.create([]) as {
      requestAdapter(): Promise<{
        info?: { vendor?: string; description?: string; architecture?: string };
        isFallbackAdapter?: boolean;
      } | null>;
    };
    if (!g.navigator) g.navigator = {};
    (g.navigator as Record<string, unknown>).gpu = gpu;
    const adapter = await gpu.requestAdapter();
    if (!adapter) return 'Dawn found no GPU adapter';
    const desc =
      `${adapter.info?.vendor ?? ''} ${adapter.info?.architecture ?? ''} ${adapter.info?.description ?? ''}`.toLowerCase();
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

async function tryWasm(threads: number, notes: string[]): Promise<string | null> {
  try {
    const w = await import('@tensorflow/tfjs-backend-wasm');
    if (threads > 0) w.setThreadsCount(threads);
    const simdOff = await patchWasmKernels();
    // the SIMD matMul takes transpose flags at full speed; tfjs-wasm's own wants explicit transposes
    if (simdOff) notes.push(simdOff);
    else setExplicitTranspose(false);
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
export async function initBackend(
  name: BackendName = 'auto',
  opts: { threads?: number; log?: (line: string) => void } = {},
): Promise<string> {
  const log = opts.log ?? ((l: string) => console.error(l));
  const order: Concrete[] =
    name === 'auto'
      ? ['tensorflow', 'webgpu', 'wasm', 'cpu']
      : name === 'tensorflow'
        ? ['tensorflow', 'wasm', 'cpu']
        : name === 'webgpu'
          ? ['webgpu', 'wasm', 'cpu']
          : name === 'wasm'
            ? ['wasm', 'cpu']
            : ['cpu'];
  if (current && current === order[0] && tf.getBackend() === current) {
    // the native ops' threads can change while TensorFlow runs (its own pools cannot)
    if (current === 'tensorflow' && (opts.threads ?? 0) > 0) setTensorflowOpsThreads(opts.threads!);
    return current;
  }
  const skipped: string[] = [];
  const notes: string[] = [];
  for (const b of order) {
    const why =
      b === 'tensorflow'
        ? await tryTensorflow(opts.threads ?? 0, notes)
        : b === 'webgpu'
          ? await tryWebgpu(name === 'webgpu')
          : b === 'wasm'
            ? await tryWasm(opts.threads ?? 0, notes)
            : await tryCpu();
    if (why === null) {
      await tf.ready();
      current = tf.getBackend();
      const said = [...notes, ...(skipped.length ? [`skipped ${skipped.join('; ')}`] : [])];
      log(`solver backend: ${current}${said.length ? ` (${said.join('; ')})` : ''}`);
      return current;
    }
    skipped.push(`${b}: ${why}`);
  }
  throw new Error(`no tfjs backend could start: ${skipped.join('; ')}`);
}

/**
 * Threads for an update: `workers` when set; else (0) one per core, at most 4, on wasm, whose
 * kernels use one core each, and 1 elsewhere (tfjs-node and webgpu parallelise inside their ops).
 */
export function updateThreads(workers: number, backend: string): number {
  if (backend !== 'wasm' && backend !== 'cpu') return 1;
  if (workers > 0) return workers;
  return backend === 'wasm' ? Math.min(4, availableParallelism()) : 1;
}
