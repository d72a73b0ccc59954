// The fused ops on the tensorflow backend: TensorFlow CPU kernels of our own (tf-ops.cc, compiled by
// `cogen setup tensorflow` into an addon beside tfjs-node's libraries), run through tfjs-node as
// tfjs kernels of the same names as the wasm ones (fused-kernels.ts), so fused.ts hands out the same
// ops on both backends: LayerNorm, GELU, AdamW, and here also attention, the product with a bias,
// the targets' log-probs and a whole decoding step (tf-decode.cc; Softmax's gradient is tfjs-node's
// own here).
// Without the addon (or on the GPU build) the composites run.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import { adamwScalars, type AdamWStep } from '../fused.js';
import { FUSED, plugFusedKernels } from './fused-kernels.js';

/** The addon's file name; src/setup/ops.ts builds it into `<tfjs-node>/deps/lib`, beside libtensorflow_framework.so.2. */
export const TF_OPS_ADDON = 'cogen_tf_ops.node';

export const tfOpsPath = (pkgDir: string): string => join(pkgDir, 'deps', 'lib', TF_OPS_ADDON);

/** What tfjs-node's backend offers to run any TensorFlow op by name. */
interface NodeBackend {
  binding: { TF_ATTR_INT: number };
  executeMultipleOutputs(
    name: string,
    attrs: { name: string; type: number; value: number }[],
    inputs: tf.TensorInfo[],
    numOutputs: number,
  ): tf.Tensor[];
}

/** Each kernel: the TensorFlow op's inputs in its order, how many outputs it has, and its int attributes. */
const KERNELS: [name: string, inputs: string[], outputs: number, intAttrs: string[]][] = [
  [FUSED.gelu, ['x'], 1, []],
  [FUSED.geluGrad, ['x', 'dy'], 1, []],
  [FUSED.layerNorm, ['x', 'g', 'b'], 3, []],
  [FUSED.layerNormGrad, ['x', 'g', 'mean', 'rstd', 'dy'], 3, []],
  [FUSED.adamw, ['p', 'g', 'm', 'v', 'scale'], 3, []],
  [FUSED.targetLogp, ['z', 'targets'], 2, []],
  [FUSED.targetLogpGrad, ['lsm', 'targets', 'stats', 'dstats'], 1, []],
  [FUSED.linear, ['x', 'w', 'b'], 1, []],
  [FUSED.linearGrad, ['x', 'w', 'dy'], 3, []],
  [FUSED.attention, ['qkv', 'mask'], 2, ['heads']],
  [FUSED.attentionGrad, ['qkv', 'p', 'do'], 1, ['heads']],
  // (its inputs are three lists after these, numbered: decodeArgs)
  [FUSED.decodeStep, ['ids', 'pos', 'pad'], 2, ['heads', 'layers', 'steps', 'count']],
];

/** The decoding step's inputs in the op's order (tf-decode.cc): the lists numbered by fused-kernels.ts, put back by their counts. */
function decodeArgs(inputs: tf.NamedTensorInfoMap, a: Record<string, number>): tf.TensorInfo[] {
  const list = (name: string, n: number): tf.TensorInfo[] =>
    Array.from({ length: n }, (_, i) => inputs[`${name}${i}`]!);
  return [
    inputs.ids!,
    inputs.pos!,
    inputs.pad!,
    ...list('prompt', a.layers!),
    ...list('past', a.steps!),
    ...list('weight', a.count!),
  ];
}

/** The loaded addon: setThreads(n) sets the threads its ops split their work over (an OpenMP team). */
let addon: { setThreads(n: number): void; abi: number } | null = null;

/** The ops' set and signatures (tf-ops.cc kOpsAbi): an addon of another version is not used. */
const OPS_ABI = 2;

/**
 * The threads the native ops split their work over from now on (≥ 1; their results do not depend
 * on it); false when the ops are not loaded.
 */
export function setTensorflowOpsThreads(n: number): boolean {
  if (!addon) return false;
  addon.setThreads(n);
  return true;
}

/**
 * Loads the addon of the tfjs-node package `pkg` and registers its kernels for tensorflow; returns
 * why it could not (one phrase), or null.
 */
export function registerTensorflowOps(pkg: string): string | null {
  const req = createRequire(import.meta.url);
  let file: string;
  try {
    file = tfOpsPath(dirname(req.resolve(`${pkg}/package.json`)));
  } catch {
    return `${pkg} not found`;
  }
  if (!existsSync(file)) return 'not built (`cogen setup tensorflow` builds them for the CPU package)';
  try {
    const loaded = req(file) as Partial<NonNullable<typeof addon>>;
    // a build from before this set of ops (the decode step, threads of their own): kernels may be
    // missing or take other inputs
    if (typeof loaded.setThreads !== 'function' || loaded.abi !== OPS_ABI)
      return 'built by an older cogen (re-run `cogen setup tensorflow`)';
    addon = loaded as NonNullable<typeof addon>;
  } catch (e) {
    return `failed to load (${String((e as Error).message).split('\n')[0]})`;
  }
  for (const [kernelName, names, outputs, intAttrs] of KERNELS) {
    if (tf.getKernel(kernelName, 'tensorflow')) continue;
    const kernelFunc = ({
      inputs,
      backend,
      attrs,
    }: {
      inputs: tf.NamedTensorInfoMap;
      backend: unknown;
      attrs?: Record<string, number>;
    }) => {
      const be = backend as NodeBackend;
      const args = kernelName === FUSED.decodeStep ? decodeArgs(inputs, attrs!) : names.map((n) => inputs[n]!);
      // AdamW's scalars, as the float32 values the composite would upload (optim.ts)
      const hyper =
        kernelName === FUSED.adamw ? tf.tensor1d(adamwScalars(attrs as unknown as AdamWStep), 'float32') : null;
      try {
        const opAttrs = intAttrs.map((name) => ({ name, type: be.binding.TF_ATTR_INT, value: attrs![name]! }));
        const out = be.executeMultipleOutputs(kernelName, opAttrs, hyper ? [...args, hyper] : args, outputs);
        return outputs === 1 ? out[0]! : out;
      } finally {
        hyper?.dispose();
      }
    };
    tf.registerKernel({ kernelName, backendName: 'tensorflow', kernelFunc: kernelFunc as unknown as tf.KernelFunc });
  }
  plugFusedKernels();
  return null;
}
