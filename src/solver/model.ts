// A decoder-only transformer in the spirit of nanoGPT, in TensorFlow.js: pre-LayerNorm blocks,
// causal multi-head self-attention, GELU MLP, learned positions, output head tied to the token
// embedding. Weights are named and laid out as Hugging Face GPT-2 does (Conv1D: [in, out]).
//
// Positions (docs/solver-view.md): a prompt's tokens count from <bos> at 0, so the arguments that
// open a prompt sit at the same places in every prompt; answer inputs sit at fixed positions after
// the longest prompt (answer input k at maxPromptLen + 1 + k), so decoding steps every row at one
// position. <sep> is not a position of its own: its embedding is added to the prompt's last token,
// so that the position the first answer token is read from holds that token too (the end of the
// program, which a deduction's answer depends on most). Rows are left-padded to the longest prompt
// of the batch; pad keys are masked out of attention.
//
// Here, the forward pass over whole rows (training's batches, decoding's prefill). Its parameters
// are in params.ts, its layers (LayerNorm and GELU with their gradients) in layers.ts, and the
// grouped form, where a group's answers share their prompt's keys and values, in grouped.ts.
import * as tf from '@tensorflow/tfjs-core';
import { fusedOp } from './fused.js';
import { embed, gelu, layerNorm, linear } from './layers.js';
import { matMulFast } from './gradients.js';
import { param, type ModelConfig, type Params } from './params.js';
import { SEP as SEP_ID } from './tokenizer.js';

/**
 * q, k, v [n, d] from c_attn ([d, 3d]): three products with column slices of the weight (tfjs-wasm
 * splits a [n, 3d] activation along its last axis slowly; slicing the small weight is cheap).
 */
export function qkvProj(p: Params, h: string, a: tf.Tensor2D, d: number): [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D] {
  const w = param(p, h + 'attn.c_attn.weight');
  const b = param(p, h + 'attn.c_attn.bias');
  const one = (j: number): tf.Tensor2D => linear(a, tf.slice(w, [0, j * d], [d, d]), tf.slice(b, [j * d], [d]));
  return [one(0), one(1), one(2)];
}

/** [n, d] → [N, heads, T, dh] */
function splitHeads(x: tf.Tensor2D, N: number, T: number, c: ModelConfig): tf.Tensor4D {
  return tf.transpose(tf.reshape(x, [N, T, c.heads, c.dModel / c.heads]), [0, 2, 1, 3]);
}

/**
 * One block. `mask` is added to attention scores ([N|1, 1, T, T]). Returns the new residual stream,
 * and with keepKV this step's keys and values [N, heads, T, dh] (the prompt's cache); where fused
 * attention ran, the c_attn product [N·T, 3d] it read them from (kv-decode.ts's prompt cache).
 */
function block(
  p: Params,
  i: number,
  c: ModelConfig,
  x: tf.Tensor2D,
  N: number,
  T: number,
  mask: tf.Tensor,
  keepKV: boolean,
): { x: tf.Tensor2D; k?: tf.Tensor4D; v?: tf.Tensor4D; qkv?: tf.Tensor2D } {
  const h = `h.${i}.`;
  const d = c.dModel;
  const a = layerNorm(x, param(p, h + 'ln_1.weight'), param(p, h + 'ln_1.bias')) as tf.Tensor2D;
  // fused (fused.ts) when nothing needs the keys and values split into heads: one product with the
  // whole c_attn, its [n, 3d] result read in place
  const fused = keepKV ? null : fusedOp('attention');
  let merged: tf.Tensor2D, k: tf.Tensor4D | undefined, v: tf.Tensor4D | undefined, qkv: tf.Tensor2D | undefined;
  if (fused)
    merged = fused(
      (qkv = linear(a, param(p, h + 'attn.c_attn.weight'), param(p, h + 'attn.c_attn.bias'))),
      mask,
      c.heads,
    );
  else {
    const [q2, k2, v2] = qkvProj(p, h, a, c.dModel);
    const q = splitHeads(q2!, N, T, c);
    k = splitHeads(k2!, N, T, c);
    v = splitHeads(v2!, N, T, c);
    // Causal attention over all T keys: splitting the queries in two halves (the first skipping the
    // keys it cannot see) paid off with tfjs-wasm's scalar batched matMul, not with the SIMD one.
    const att = tf.matMul(
      tf.softmax(tf.add(tf.mul(tf.matMul(q, k, false, true), 1 / Math.sqrt(d / c.heads)), mask)),
      v,
    ); // [N, heads, T, dh]
    merged = tf.reshape(tf.transpose(att, [0, 2, 1, 3]), [N * T, d]) as tf.Tensor2D;
  }
  x = tf.add(x, linear(merged, param(p, h + 'attn.c_proj.weight'), param(p, h + 'attn.c_proj.bias')));
  const m = layerNorm(x, param(p, h + 'ln_2.weight'), param(p, h + 'ln_2.bias')) as tf.Tensor2D;
  const f = gelu(linear(m, param(p, h + 'mlp.c_fc.weight'), param(p, h + 'mlp.c_fc.bias'))) as tf.Tensor2D;
  x = tf.add(x, linear(f, param(p, h + 'mlp.c_proj.weight'), param(p, h + 'mlp.c_proj.bias')));
  return { x, k, v, qkv };
}

/** What an additive mask adds to a score to hide its key. */
export const NEG = -1e9;
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
  /** [N, T] token ids, row-major: left pads, <bos>, prompt (its last token carries <sep>), answer inputs. */
  tokens: Int32Array;
  N: number;
  T: number;
  /** left pads per row */
  pad: Int32Array;
  /** The first answer column (default T: prompts alone); its inputs sit at answerPos + k. */
  answerFrom?: number;
  answerPos?: number;
}

/** Position ids [N·T]: <bos> at 0 in every row (pads at 0, masked), answer input k at answerPos + k. */
function positions(b: Batch): Int32Array {
  const { N, T, pad } = b;
  const from = b.answerFrom ?? T;
  const out = new Int32Array(N * T);
  for (let r = 0; r < N; r++) {
    for (let t = pad[r]!; t < from; t++) out[r * T + t] = t - pad[r]!;
    for (let t = from; t < T; t++) out[r * T + t] = b.answerPos! + t - from;
  }
  return out;
}

/** Token and position embeddings, <sep>'s added to the prompt's last column: [N·T, d]. */
function promptEmbeddings(p: Params, c: ModelConfig, b: Batch, oneHot: boolean): tf.Tensor2D {
  const { N, T } = b;
  const d = c.dModel;
  const tok = embed(param(p, 'wte.weight'), tf.tensor1d(b.tokens, 'int32'), c.vocabSize, oneHot);
  const pos = embed(param(p, 'wpe.weight'), tf.tensor1d(positions(b), 'int32'), c.maxPositions, oneHot);
  const last = new Float32Array(T);
  last[(b.answerFrom ?? T) - 1] = 1;
  const sep = tf.mul(
    tf.tensor3d(last, [1, T, 1]),
    tf.reshape(tf.slice(param(p, 'wte.weight'), [SEP_ID, 0], [1, d]), [1, 1, d]),
  );
  return tf.reshape(tf.add(tf.reshape(tf.add(tok, pos), [N, T, d]), sep), [N * T, d]) as tf.Tensor2D;
}

/**
 * Final hidden states [N*T, d] for a whole batch (training, prefill); with keepKV each layer's keys
 * and values, and where fused attention ran (never with keepKV) each layer's c_attn product.
 * Call inside tf.tidy.
 */
export function hidden(
  p: Params,
  c: ModelConfig,
  b: Batch,
  oneHot: boolean,
  keepKV = false,
): { h: tf.Tensor2D; kv: { k: tf.Tensor4D; v: tf.Tensor4D }[]; qkv: tf.Tensor2D[] } {
  const { N, T } = b;
  let x = promptEmbeddings(p, c, b, oneHot);
  const mask = tf.add(causalMask(T), padMask(b.pad, N, T));
  const kv: { k: tf.Tensor4D; v: tf.Tensor4D }[] = [];
  const qkv: tf.Tensor2D[] = [];
  for (let i = 0; i < c.layers; i++) {
    const o = block(p, i, c, x, N, T, mask, keepKV);
    x = o.x;
    if (keepKV) kv.push({ k: o.k!, v: o.v! });
    if (o.qkv) qkv.push(o.qkv);
  }
  return { h: layerNorm(x, param(p, 'ln_f.weight'), param(p, 'ln_f.bias')) as tf.Tensor2D, kv, qkv };
}

/** Logits [n, V] from final hidden states [n, d] (tied head). */
export function head(p: Params, h: tf.Tensor2D): tf.Tensor2D {
  return matMulFast(h, param(p, 'wte.weight'), false, true) as tf.Tensor2D;
}
