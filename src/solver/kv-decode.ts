// The KV-cache decode that decode.ts and choices.ts run: a prefill of the prompts, then one step
// per answer token. On the tensorflow backend with the native ops a step is one op over the whole
// model (accel/tf-decode.cc), where grouped.ts's composite decodeStep is ~120 ops, each costing more
// to dispatch through tfjs-node than it computes at the solver's sizes; the prefill runs with fused
// attention, and each layer's c_attn product it made is the prompt's cache the op reads keys and
// values from. Elsewhere (wasm, cpu, webgpu, tensorflow without the native ops) grouped.ts's
// prefill and decodeStep run. Both compute the same formulas (test/solver.kernels.test.ts compares
// them, and the policy's tests compare sampled log-probs with training's on tensorflow).
import * as tf from '@tensorflow/tfjs-core';
import { fusedOp } from './fused.js';
import {
  decodeStep as compositeStep,
  disposeCache as disposeComposite,
  prefill as compositePrefill,
  type KVCache as CompositeCache,
} from './grouped.js';
import { head, hidden, type Batch } from './model.js';
import { paramShapes, type ModelConfig, type Params } from './params.js';

/** The native step's cache: the prompts' c_attn products and the answer's keys and values so far. */
interface NativeCache {
  native: true;
  /** per layer [B·Tp, 3d] */
  prompt: tf.Tensor[];
  /** [B] int32 left pads of each prompt */
  pad: tf.Tensor;
  /** per answer token so far [layers, 2, B·G, d] */
  past: tf.Tensor[];
  /** the parameters in paramShapes order (the variables themselves: a step reads their values now) */
  weights: tf.Variable[];
}

export type KVCache = CompositeCache | NativeCache;

const isNative = (c: KVCache): c is NativeCache => 'native' in c;

/** Whether a step runs natively here: the decoding op and the fused attention its prefill keeps the c_attn products of. */
export const nativeDecoding = (): boolean => fusedOp('decodeStep') !== null && fusedOp('attention') !== null;

/**
 * Prefill: runs B prompts once; each is shared by `repeat` rows. Returns logits [B·repeat, V] of
 * the last column and the cache. Tensors returned are kept; the caller disposes them.
 */
export function prefill(p: Params, c: ModelConfig, b: Batch, repeat: number): { logits: tf.Tensor2D; cache: KVCache } {
  if (!nativeDecoding()) return compositePrefill(p, c, b, repeat);
  const out = tf.tidy(() => {
    const { h, qkv } = hidden(p, c, b, false);
    const last = tf.reshape(tf.slice(tf.reshape(h, [b.N, b.T, c.dModel]), [0, b.T - 1, 0], [b.N, 1, c.dModel]), [
      b.N,
      c.dModel,
    ]) as tf.Tensor2D;
    let logits = head(p, last);
    if (repeat > 1) logits = tf.reshape(tf.tile(tf.expandDims(logits, 1), [1, repeat, 1]), [b.N * repeat, c.vocabSize]);
    return { logits, qkv, pad: tf.tensor1d(b.pad, 'int32') };
  });
  if (out.qkv.length !== c.layers) throw new Error('prefill: fused attention did not run (bug)');
  const weights = paramShapes(c).map(([name]) => p.get(name)!);
  return { logits: out.logits, cache: { native: true, prompt: out.qkv, pad: out.pad, past: [], weights } };
}

/**
 * One incremental step: token ids [B·G] at position `pos`. The old cache is not to be used again
 * (the composite disposes its answer part; the native one extends it). Returns logits [B·G, V].
 */
export function decodeStep(
  p: Params,
  c: ModelConfig,
  cache: KVCache,
  ids: Int32Array,
  pos: number,
): { logits: tf.Tensor2D; cache: KVCache } {
  if (!isNative(cache)) return compositeStep(p, c, cache, ids, pos);
  const op = fusedOp('decodeStep');
  if (!op) throw new Error('decodeStep: the native decoding op went away mid-decode (backend changed?)');
  const idsT = tf.tensor1d(ids, 'int32');
  const posT = tf.scalar(pos, 'int32');
  try {
    const [logits, kv] = op({
      ids: idsT,
      pos: posT,
      pad: cache.pad,
      prompt: cache.prompt,
      past: cache.past,
      weights: cache.weights,
      heads: c.heads,
    });
    return { logits, cache: { ...cache, past: [...cache.past, kv] } };
  } finally {
    idsT.dispose();
    posT.dispose();
  }
}

export function disposeCache(cache: KVCache): void {
  if (!isNative(cache)) return disposeComposite(cache);
  tf.dispose([...cache.prompt, cache.pad, ...cache.past]);
}

/** The prompt's cache with no answer tokens (for another answer to the same prompt); disposes the answer's. */
export function restartCache(cache: KVCache): KVCache {
  if (isNative(cache)) {
    tf.dispose(cache.past);
    return { ...cache, past: [] };
  }
  for (const l of cache.layers) {
    l.k?.dispose();
    l.v?.dispose();
  }
  return { ...cache, layers: cache.layers.map((l) => ({ pk: l.pk, k: null, v: null })), length: 0 };
}
