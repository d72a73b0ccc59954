// A decoder-only transformer in the spirit of nanoGPT, in TensorFlow.js: pre-LayerNorm blocks,
// causal multi-head self-attention, GELU MLP, learned positions, output head tied to the token
// embedding. Weights are named and laid out as Hugging Face GPT-2 does (Conv1D: [in, out]).
//
// Positions are right-aligned on <sep>: whatever the prompt's length, <sep> sits at position
// maxPromptLen + 1 and answer token k at maxPromptLen + 2 + k. Rows are left-padded to the longest
// prompt of the batch; pad keys are masked out of attention.
import * as tf from '@tensorflow/tfjs-core';
import type { Rng } from '../rng.js';
import { matMulFast } from './gradients.js';

export interface ModelConfig {
  vocabSize: number;
  dModel: number;
  layers: number;
  heads: number;
  mlpRatio: number;
  /** Rows of the position table. */
  maxPositions: number;
}

export type Params = Map<string, tf.Variable>;

/** Parameter names and shapes, in a fixed order. */
export function paramShapes(c: ModelConfig): [string, number[]][] {
  const d = c.dModel;
  const f = d * c.mlpRatio;
  const out: [string, number[]][] = [['wte.weight', [c.vocabSize, d]], ['wpe.weight', [c.maxPositions, d]]];
  for (let i = 0; i < c.layers; i++) {
    const h = `h.${i}.`;
    out.push(
      [h + 'ln_1.weight', [d]], [h + 'ln_1.bias', [d]],
      [h + 'attn.c_attn.weight', [d, 3 * d]], [h + 'attn.c_attn.bias', [3 * d]],
      [h + 'attn.c_proj.weight', [d, d]], [h + 'attn.c_proj.bias', [d]],
      [h + 'ln_2.weight', [d]], [h + 'ln_2.bias', [d]],
      [h + 'mlp.c_fc.weight', [d, f]], [h + 'mlp.c_fc.bias', [f]],
      [h + 'mlp.c_proj.weight', [f, d]], [h + 'mlp.c_proj.bias', [d]],
    );
  }
  out.push(['ln_f.weight', [d]], ['ln_f.bias', [d]]);
  return out;
}

/** nanoGPT init: N(0, 0.02) weights and embeddings, N(0, 0.02/√(2L)) residual projections, zero biases, unit LayerNorm gains. */
export function initWeights(c: ModelConfig, rng: Rng): Map<string, { shape: number[]; data: Float32Array }> {
  const gauss = (): number => {
    const u = 1 - rng.next();
    const v = rng.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  };
  const out = new Map<string, { shape: number[]; data: Float32Array }>();
  for (const [name, shape] of paramShapes(c)) {
    const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
    if (name.endsWith('.bias')) {
      // zeros
    } else if (name.includes('ln_')) {
      data.fill(1);
    } else {
      const std = name.endsWith('c_proj.weight') ? 0.02 / Math.sqrt(2 * c.layers) : 0.02;
      for (let i = 0; i < data.length; i++) data[i] = std * gauss();
    }
    out.set(name, { shape, data });
  }
  return out;
}

export function makeParams(weights: Map<string, { shape: number[]; data: Float32Array }>, trainable = true): Params {
  const p: Params = new Map();
  for (const [name, w] of weights) p.set(name, tf.variable(tf.tensor(w.data, w.shape, 'float32'), trainable, undefined, 'float32'));
  return p;
}

const P = (p: Params, name: string): tf.Variable => {
  const v = p.get(name);
  if (!v) throw new Error(`missing parameter ${name}`);
  return v;
};

function layerNorm(x: tf.Tensor, g: tf.Tensor, b: tf.Tensor): tf.Tensor {
  const mean = tf.mean(x, -1, true);
  const xc = tf.sub(x, mean);
  const variance = tf.mean(tf.square(xc), -1, true);
  return tf.add(tf.mul(tf.mul(xc, tf.rsqrt(tf.add(variance, 1e-5))), g), b);
}

/** GELU, tanh approximation (as GPT-2). */
function gelu(x: tf.Tensor): tf.Tensor {
  const inner = tf.mul(tf.add(x, tf.mul(tf.mul(tf.square(x), x), 0.044715)), Math.sqrt(2 / Math.PI));
  return tf.mul(tf.mul(x, 0.5), tf.add(tf.tanh(inner), 1));
}

const linear = (x: tf.Tensor2D, w: tf.Tensor, b: tf.Tensor): tf.Tensor2D => tf.add(tf.matMul(x, w as tf.Tensor2D), b);

/** Token embeddings of int ids [n]: one-hot matMul where tf.gather has no gradient (wasm), gather elsewhere. */
// (wasm's OneHot ignores a float dtype, hence int32 + cast)
function embed(wte: tf.Tensor, ids: tf.Tensor1D, vocab: number, oneHot: boolean): tf.Tensor2D {
  if (oneHot) return tf.matMul(tf.cast(tf.oneHot(ids, vocab), 'float32') as tf.Tensor2D, wte as tf.Tensor2D);
  return tf.gather(wte, ids) as tf.Tensor2D;
}

/** [n, d] → [N, heads, T, dh] */
function splitHeads(x: tf.Tensor2D, N: number, T: number, c: ModelConfig): tf.Tensor4D {
  return tf.transpose(tf.reshape(x, [N, T, c.heads, c.dModel / c.heads]), [0, 2, 1, 3]);
}

/**
 * One block. `mask` is added to attention scores ([N|1, 1, T, L]); `past` holds cached keys and
 * values [N, heads, Lpast, dh] (decode). Returns the new residual stream and this step's k, v.
 */
function block(
  p: Params, i: number, c: ModelConfig, x: tf.Tensor2D, N: number, T: number, mask: tf.Tensor,
  past?: { k: tf.Tensor4D; v: tf.Tensor4D },
): { x: tf.Tensor2D; k: tf.Tensor4D; v: tf.Tensor4D } {
  const h = `h.${i}.`;
  const d = c.dModel;
  const a = layerNorm(x, P(p, h + 'ln_1.weight'), P(p, h + 'ln_1.bias')) as tf.Tensor2D;
  const qkv = linear(a, P(p, h + 'attn.c_attn.weight'), P(p, h + 'attn.c_attn.bias'));
  const [q2, k2, v2] = tf.split(qkv, 3, 1) as [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D];
  const q = splitHeads(q2!, N, T, c);
  let k = splitHeads(k2!, N, T, c);
  let v = splitHeads(v2!, N, T, c);
  if (past) {
    k = tf.concat([past.k, k], 2);
    v = tf.concat([past.v, v], 2);
  }
  const scores = tf.add(tf.mul(tf.matMul(q, k, false, true), 1 / Math.sqrt(d / c.heads)), mask);
  const att = tf.matMul(tf.softmax(scores), v); // [N, heads, T, dh]
  const merged = tf.reshape(tf.transpose(att, [0, 2, 1, 3]), [N * T, d]) as tf.Tensor2D;
  x = tf.add(x, linear(merged, P(p, h + 'attn.c_proj.weight'), P(p, h + 'attn.c_proj.bias')));
  const m = layerNorm(x, P(p, h + 'ln_2.weight'), P(p, h + 'ln_2.bias')) as tf.Tensor2D;
  const f = gelu(linear(m, P(p, h + 'mlp.c_fc.weight'), P(p, h + 'mlp.c_fc.bias'))) as tf.Tensor2D;
  x = tf.add(x, linear(f, P(p, h + 'mlp.c_proj.weight'), P(p, h + 'mlp.c_proj.bias')));
  return { x, k, v };
}

const NEG = -1e9;
const causalCache = new Map<number, tf.Tensor>();
/** [1, 1, T, T] additive causal mask, cached per T (kept outside every tidy). */
function causalMask(T: number): tf.Tensor {
  let m = causalCache.get(T);
  if (!m || m.isDisposed) {
    const data = new Float32Array(T * T);
    for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) data[i * T + j] = NEG;
    m = tf.keep(tf.tensor(data, [1, 1, T, T]));
    causalCache.set(T, m);
  }
  return m;
}

/** [N, 1, 1, L] additive mask hiding the first pad[r] keys of row r. */
function padMask(pad: ArrayLike<number>, N: number, L: number): tf.Tensor {
  const data = new Float32Array(N * L);
  for (let r = 0; r < N; r++) for (let j = 0; j < pad[r]!; j++) data[r * L + j] = NEG;
  return tf.tensor(data, [N, 1, 1, L]);
}

export interface Batch {
  /** [N, T] token ids, row-major: left pads, <bos>, prompt, <sep>, answer tokens. */
  tokens: Int32Array;
  N: number;
  T: number;
  /** left pads per row */
  pad: Int32Array;
  /** position id of column 0 */
  posOffset: number;
}

/** Final hidden states [N*T, d] for a whole batch (training, prefill). Call inside tf.tidy. */
export function hidden(
  p: Params, c: ModelConfig, b: Batch, oneHot: boolean, keepKV = false,
): { h: tf.Tensor2D; kv: { k: tf.Tensor4D; v: tf.Tensor4D }[] } {
  const { N, T } = b;
  const ids = tf.tensor1d(b.tokens, 'int32');
  const pos = tf.slice(P(p, 'wpe.weight'), [b.posOffset, 0], [T, c.dModel]); // [T, d]
  let x = tf.reshape(tf.add(tf.reshape(embed(P(p, 'wte.weight'), ids, c.vocabSize, oneHot), [N, T, c.dModel]), pos), [N * T, c.dModel]) as tf.Tensor2D;
  const mask = tf.add(causalMask(T), padMask(b.pad, N, T));
  const kv: { k: tf.Tensor4D; v: tf.Tensor4D }[] = [];
  for (let i = 0; i < c.layers; i++) {
    const o = block(p, i, c, x, N, T, mask);
    x = o.x;
    if (keepKV) kv.push({ k: o.k, v: o.v });
  }
  return { h: layerNorm(x, P(p, 'ln_f.weight'), P(p, 'ln_f.bias')) as tf.Tensor2D, kv };
}

/** Logits [n, V] from final hidden states [n, d] (tied head). */
export function head(p: Params, h: tf.Tensor2D): tf.Tensor2D {
  return matMulFast(h, P(p, 'wte.weight'), false, true) as tf.Tensor2D;
}

/**
 * Logits [N*A, V] for the A positions starting at column `from` (the answer window: <sep> and the
 * answer tokens before the last). Call inside tf.tidy / under a gradient.
 */
export function windowLogits(p: Params, c: ModelConfig, b: Batch, from: number, A: number, oneHot: boolean): tf.Tensor2D {
  const { h } = hidden(p, c, b, oneHot);
  const w = tf.slice(tf.reshape(h, [b.N, b.T, c.dModel]), [0, from, 0], [b.N, A, c.dModel]);
  return head(p, tf.reshape(w, [b.N * A, c.dModel]) as tf.Tensor2D);
}

export interface KVCache {
  layers: { k: tf.Tensor4D; v: tf.Tensor4D }[];
  /** left pads per row (keys to hide) */
  pad: Int32Array;
  N: number;
  length: number;
}

/**
 * Prefill: runs B prompts once, then repeats each row `repeat` times (a group shares its prompt).
 * Returns logits [B*repeat, V] of the last column and the cache. Tensors returned are kept; the
 * caller disposes them.
 */
export function prefill(p: Params, c: ModelConfig, b: Batch, repeat: number): { logits: tf.Tensor2D; cache: KVCache } {
  const out = tf.tidy(() => {
    const { h, kv } = hidden(p, c, b, false, true);
    const last = tf.reshape(tf.slice(tf.reshape(h, [b.N, b.T, c.dModel]), [0, b.T - 1, 0], [b.N, 1, c.dModel]), [b.N, c.dModel]) as tf.Tensor2D;
    const rep = <T extends tf.Tensor>(t: T): T => {
      if (repeat === 1) return t;
      const s = t.shape;
      const e = tf.tile(tf.expandDims(t, 1), [1, repeat, ...s.slice(1).map(() => 1)]);
      return tf.reshape(e, [s[0]! * repeat, ...s.slice(1)]) as T;
    };
    const logits = rep(head(p, last));
    const layers = kv.map(({ k, v }) => ({ k: rep(k), v: rep(v) }));
    return { logits, layers };
  });
  const pad = new Int32Array(b.N * repeat);
  for (let r = 0; r < b.N; r++) pad.fill(b.pad[r]!, r * repeat, (r + 1) * repeat);
  return { logits: out.logits, cache: { layers: out.layers, pad, N: b.N * repeat, length: b.T } };
}

/** One incremental step: token ids [N] at position `pos`. Disposes the old cache; returns logits [N, V]. */
export function decodeStep(p: Params, c: ModelConfig, cache: KVCache, ids: Int32Array, pos: number): { logits: tf.Tensor2D; cache: KVCache } {
  const N = cache.N;
  const L = cache.length + 1;
  const out = tf.tidy(() => {
    const x0 = tf.add(
      tf.gather(P(p, 'wte.weight'), tf.tensor1d(ids, 'int32')),
      tf.slice(P(p, 'wpe.weight'), [pos, 0], [1, c.dModel]),
    ) as tf.Tensor2D;
    const mask = padMask(cache.pad, N, L);
    let x = x0;
    const layers: { k: tf.Tensor4D; v: tf.Tensor4D }[] = [];
    for (let i = 0; i < c.layers; i++) {
      const o = block(p, i, c, x, N, 1, mask, cache.layers[i]);
      x = o.x;
      layers.push({ k: o.k, v: o.v });
    }
    const h = layerNorm(x, P(p, 'ln_f.weight'), P(p, 'ln_f.bias')) as tf.Tensor2D;
    return { logits: head(p, h), layers };
  });
  for (const l of cache.layers) { l.k.dispose(); l.v.dispose(); }
  return { logits: out.logits, cache: { layers: out.layers, pad: cache.pad, N, length: L } };
}
