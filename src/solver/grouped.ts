// Grouped answers: a group's G answers share their prompt. Training and decoding run the prompt
// once ([B, Tp] columns: pads, <bos>, prompt, <sep>), then the answer columns of all B·G rows attend
// to their group's cached prompt keys/values plus their own causal part. Keys are in the same order
// as in one full [N, Tp + A'] pass (model.ts's hidden: prompt, then answer), so the result is that
// pass's, computed with G× less prompt work.
import * as tf from '@tensorflow/tfjs-core';
import { embed, gelu, layerNorm, linear } from './layers.js';
import { NEG, head, hidden, qkvProj, type Batch } from './model.js';
import { param, type ModelConfig, type Params } from './params.js';

/** Prompt keys/values of one layer, [B, heads, Tp, dh]. */
export interface PromptKV {
  k: tf.Tensor4D;
  v: tf.Tensor4D;
}

/** [B·G·A', d] → [B, heads, G·A', dh] (4-D: tfjs-wasm slices/splits rank-5 tensors very slowly) */
function groupHeads(x: tf.Tensor2D, B: number, GA: number, c: ModelConfig): tf.Tensor4D {
  return tf.transpose(tf.reshape(x, [B, GA, c.heads, c.dModel / c.heads]), [0, 2, 1, 3]);
}

/**
 * One block over answer columns x [B·G·A', d]. `pk` holds the prompt's keys/values; `past` the
 * answer keys/values of earlier columns ([B·heads·G, Lpast, dh], decode). mask: [B, 1, A', Tp + L]
 * additive, L = Lpast + A'. Returns the new stream and the answer keys/values (past included).
 */
function groupedBlock(
  p: Params,
  i: number,
  c: ModelConfig,
  x: tf.Tensor2D,
  B: number,
  G: number,
  A: number,
  pk: PromptKV,
  mask: tf.Tensor,
  past?: { k: tf.Tensor; v: tf.Tensor },
): { x: tf.Tensor2D; k: tf.Tensor; v: tf.Tensor } {
  const h = `h.${i}.`;
  const d = c.dModel;
  const H = c.heads;
  const dh = d / H;
  const Tp = pk.k.shape[2];
  const a = layerNorm(x, param(p, h + 'ln_1.weight'), param(p, h + 'ln_1.bias')) as tf.Tensor2D;
  const [q2, k2, v2] = qkvProj(p, h, a, c.dModel);
  const q = groupHeads(q2!, B, G * A, c); // [B, H, G·A', dh]
  let k: tf.Tensor = tf.reshape(groupHeads(k2!, B, G * A, c), [B * H * G, A, dh]);
  let v: tf.Tensor = tf.reshape(groupHeads(v2!, B, G * A, c), [B * H * G, A, dh]);
  if (past) {
    k = tf.concat([past.k, k], 1);
    v = tf.concat([past.v, v], 1);
  }
  const L = k.shape[1]!;
  const R = B * H * G * A; // score rows, ordered (b, h, g, a)
  // scores against the prompt: one [G·A', dh] × [dh, Tp] product per (prompt, head)
  const sp = tf.reshape(tf.matMul(tf.reshape(q, [B * H, G * A, dh]), tf.reshape(pk.k, [B * H, Tp, dh]), false, true), [
    R,
    Tp,
  ]);
  const ss = tf.reshape(tf.matMul(tf.reshape(q, [B * H * G, A, dh]), k, false, true), [R, L]);
  const scores = tf.add(tf.reshape(tf.mul(tf.concat([sp, ss], 1), 1 / Math.sqrt(dh)), [B, H * G, A, Tp + L]), mask);
  const [pp, ps] = tf.split(tf.reshape(tf.softmax(scores), [R, Tp + L]), [Tp, L], 1) as [tf.Tensor, tf.Tensor];
  const att = tf.add(
    tf.reshape(tf.matMul(tf.reshape(pp, [B * H, G * A, Tp]), tf.reshape(pk.v, [B * H, Tp, dh])), [B, H, G * A, dh]),
    tf.reshape(tf.matMul(tf.reshape(ps, [B * H * G, A, L]), v), [B, H, G * A, dh]),
  );
  const merged = tf.reshape(tf.transpose(att, [0, 2, 1, 3]), [B * G * A, d]) as tf.Tensor2D;
  x = tf.add(x, linear(merged, param(p, h + 'attn.c_proj.weight'), param(p, h + 'attn.c_proj.bias')));
  const m = layerNorm(x, param(p, h + 'ln_2.weight'), param(p, h + 'ln_2.bias')) as tf.Tensor2D;
  const f = gelu(linear(m, param(p, h + 'mlp.c_fc.weight'), param(p, h + 'mlp.c_fc.bias'))) as tf.Tensor2D;
  x = tf.add(x, linear(f, param(p, h + 'mlp.c_proj.weight'), param(p, h + 'mlp.c_proj.bias')));
  return { x, k, v };
}

/** [B, 1, A', Tp + Lpast + A'] additive mask: group b's first pad[b] prompt keys, and answer keys after each query. */
function groupedMask(pad: ArrayLike<number>, B: number, Tp: number, Lpast: number, A: number): tf.Tensor {
  const W = Tp + Lpast + A;
  const data = new Float32Array(B * A * W);
  for (let b = 0; b < B; b++) {
    for (let r = 0; r < A; r++) {
      const o = (b * A + r) * W;
      for (let j = 0; j < pad[b]!; j++) data[o + j] = NEG;
      for (let j = Tp + Lpast + r + 1; j < W; j++) data[o + j] = NEG;
    }
  }
  return tf.tensor(data, [B, 1, A, W]);
}

/**
 * Training batch in grouped form: B prompts (each shared by G rows) and the rows' answer inputs.
 */
export interface GroupedBatch {
  /** [B, Tp] prompt columns: left pads, <bos>, prompt (its last token carries <sep>) */
  prompt: Int32Array;
  B: number;
  G: number;
  Tp: number;
  /** left pads per prompt */
  pad: Int32Array;
  /** position id of answer input 0 (maxPromptLen + 1) */
  answerPos: number;
  /** [B·G, A - 1] answer input ids (the answer tokens before the last) */
  answer: Int32Array;
  /** logit positions per row: the prompt's last token and the A - 1 answer inputs */
  A: number;
}

/**
 * Logits [B·G·A, V] at each row's last prompt token and answer inputs (the loss's window), computing
 * each prompt once. Call inside tf.tidy / under a gradient.
 */
export function groupedWindowLogits(p: Params, c: ModelConfig, b: GroupedBatch, oneHot: boolean): tf.Tensor2D {
  const { B, G, Tp, A } = b;
  const d = c.dModel;
  const { h: hp, kv } = hidden(p, c, { tokens: b.prompt, N: B, T: Tp, pad: b.pad }, oneHot, true);
  // the last prompt column: the same hidden state for the G rows of a group (broadcast; its gradient sums over them)
  const hLast = tf.mul(
    tf.reshape(tf.slice(tf.reshape(hp, [B, Tp, d]), [0, Tp - 1, 0], [B, 1, d]), [B, 1, 1, d]),
    tf.ones([1, G, 1, 1]),
  );
  let win: tf.Tensor = hLast;
  const Aa = A - 1;
  if (Aa > 0) {
    const ids = tf.tensor1d(b.answer, 'int32');
    const pos = tf.slice(param(p, 'wpe.weight'), [b.answerPos, 0], [Aa, d]);
    let x = tf.reshape(
      tf.add(tf.reshape(embed(param(p, 'wte.weight'), ids, c.vocabSize, oneHot), [B * G, Aa, d]), pos),
      [B * G * Aa, d],
    ) as tf.Tensor2D;
    const mask = groupedMask(b.pad, B, Tp, 0, Aa);
    for (let i = 0; i < c.layers; i++) x = groupedBlock(p, i, c, x, B, G, Aa, kv[i]!, mask).x;
    const ha = layerNorm(x, param(p, 'ln_f.weight'), param(p, 'ln_f.bias'));
    win = tf.concat([hLast, tf.reshape(ha, [B, G, Aa, d])], 2);
  }
  return head(p, tf.reshape(win, [B * G * A, d]) as tf.Tensor2D);
}

export interface KVCache {
  /** per layer: prompt keys/values [B, heads, Tp, dh] and the answer columns so far [B·heads·G, L, dh] (null before the first) */
  layers: { pk: PromptKV; k: tf.Tensor | null; v: tf.Tensor | null }[];
  /** left pads per prompt (keys to hide) */
  pad: Int32Array;
  B: number;
  G: number;
  /** answer columns cached */
  length: number;
}

export function disposeCache(cache: KVCache): void {
  for (const l of cache.layers) {
    l.pk.k.dispose();
    l.pk.v.dispose();
    l.k?.dispose();
    l.v?.dispose();
  }
}

/**
 * Prefill: runs B prompts once; each is shared by `repeat` rows. Returns logits [B*repeat, V] of
 * the last column and the cache. Tensors returned are kept; the caller disposes them.
 */
export function prefill(p: Params, c: ModelConfig, b: Batch, repeat: number): { logits: tf.Tensor2D; cache: KVCache } {
  const out = tf.tidy(() => {
    const { h, kv } = hidden(p, c, b, false, true);
    const last = tf.reshape(tf.slice(tf.reshape(h, [b.N, b.T, c.dModel]), [0, b.T - 1, 0], [b.N, 1, c.dModel]), [
      b.N,
      c.dModel,
    ]) as tf.Tensor2D;
    let logits = head(p, last);
    if (repeat > 1) logits = tf.reshape(tf.tile(tf.expandDims(logits, 1), [1, repeat, 1]), [b.N * repeat, c.vocabSize]);
    return { logits, kv };
  });
  return {
    logits: out.logits,
    cache: { layers: out.kv.map((pk) => ({ pk, k: null, v: null })), pad: b.pad, B: b.N, G: repeat, length: 0 },
  };
}

/** One incremental step: token ids [B*G] at position `pos`. Disposes the old cache; returns logits [B*G, V]. */
export function decodeStep(
  p: Params,
  c: ModelConfig,
  cache: KVCache,
  ids: Int32Array,
  pos: number,
): { logits: tf.Tensor2D; cache: KVCache } {
  const { B, G } = cache;
  const out = tf.tidy(() => {
    const x0 = tf.add(
      tf.gather(param(p, 'wte.weight'), tf.tensor1d(ids, 'int32')),
      tf.slice(param(p, 'wpe.weight'), [pos, 0], [1, c.dModel]),
    ) as tf.Tensor2D;
    const Tp = cache.layers[0]!.pk.k.shape[2];
    const mask = groupedMask(cache.pad, B, Tp, cache.length, 1);
    let x = x0;
    const layers: { k: tf.Tensor; v: tf.Tensor }[] = [];
    for (let i = 0; i < c.layers; i++) {
      const l = cache.layers[i]!;
      const o = groupedBlock(p, i, c, x, B, G, 1, l.pk, mask, l.k && l.v ? { k: l.k, v: l.v } : undefined);
      x = o.x;
      layers.push({ k: o.k, v: o.v });
    }
    const h = layerNorm(x, param(p, 'ln_f.weight'), param(p, 'ln_f.bias')) as tf.Tensor2D;
    return { logits: head(p, h), layers };
  });
  for (const l of cache.layers) {
    l.k?.dispose();
    l.v?.dispose();
  }
  return {
    logits: out.logits,
    cache: {
      ...cache,
      layers: cache.layers.map((l, i) => ({ pk: l.pk, k: out.layers[i]!.k, v: out.layers[i]!.v })),
      length: cache.length + 1,
    },
  };
}
