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
import * as tf from '@tensorflow/tfjs-core';
import type { Rng } from '../../core/rng.js';
import { fusedOp } from './fused.js';
import { matMulFast } from './gradients.js';
import { SEP as SEP_ID } from './tokenizer.js';

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
  const out: [string, number[]][] = [
    ['wte.weight', [c.vocabSize, d]],
    ['wpe.weight', [c.maxPositions, d]],
  ];
  for (let i = 0; i < c.layers; i++) {
    const h = `h.${i}.`;
    out.push(
      [h + 'ln_1.weight', [d]],
      [h + 'ln_1.bias', [d]],
      [h + 'attn.c_attn.weight', [d, 3 * d]],
      [h + 'attn.c_attn.bias', [3 * d]],
      [h + 'attn.c_proj.weight', [d, d]],
      [h + 'attn.c_proj.bias', [d]],
      [h + 'ln_2.weight', [d]],
      [h + 'ln_2.bias', [d]],
      [h + 'mlp.c_fc.weight', [d, f]],
      [h + 'mlp.c_fc.bias', [f]],
      [h + 'mlp.c_proj.weight', [f, d]],
      [h + 'mlp.c_proj.bias', [d]],
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
  for (const [name, w] of weights)
    p.set(name, tf.variable(tf.tensor(w.data, w.shape, 'float32'), trainable, undefined, 'float32'));
  return p;
}

/** Overwrites a variable with data of its shape. (assign keeps the new tensor's data alive, so the tensor made for it is disposed here: each call would leak one otherwise.) */
export function setVariable(v: tf.Variable, data: Float32Array): void {
  const t = tf.tensor(data, v.shape, 'float32');
  v.assign(t);
  t.dispose();
}

const P = (p: Params, name: string): tf.Variable => {
  const v = p.get(name);
  if (!v) throw new Error(`missing parameter ${name}`);
  return v;
};

/**
 * LayerNorm over the last axis of x [n, d], with its gradient written out (autodiff through the
 * mean/variance ops costs ~25 kernels and saved copies):
 *   x̂ = (x − μ)·r, r = 1/√(σ² + ε);  dx = r·(g·dy − mean(g·dy) − x̂·mean(g·dy·x̂)),  dg = Σ dy·x̂,  db = Σ dy.
 */
export function layerNorm(x: tf.Tensor, g: tf.Tensor, b: tf.Tensor): tf.Tensor {
  // the same formulas in one pass each way where the backend has them (fused.ts)
  const fused = fusedOp('layerNorm', x.shape.at(-1)!);
  if (fused) return fused(x, g, b);
  const f = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const [x, g, b] = args as tf.Tensor[];
    const save = args[3] as tf.GradSaveFunc;
    const xc = tf.sub(x!, tf.mean(x!, -1, true));
    const r = tf.rsqrt(tf.add(tf.mean(tf.square(xc), -1, true), 1e-5));
    const xh = tf.mul(xc, r);
    save([xh, r, g!]);
    return {
      value: tf.add(tf.mul(xh, g!), b!),
      gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
        const d = dy as tf.Tensor;
        const [xh, r, g] = saved as [tf.Tensor, tf.Tensor, tf.Tensor];
        const gdy = tf.mul(d, g);
        const dx = tf.mul(
          tf.sub(tf.sub(gdy, tf.mean(gdy, -1, true)), tf.mul(xh, tf.mean(tf.mul(gdy, xh), -1, true))),
          r,
        );
        return [dx, tf.sum(tf.mul(d, xh), 0), tf.sum(d, 0)];
      },
    };
  });
  return f(x, g, b);
}

/**
 * GELU, tanh approximation (as GPT-2): 0.5·x·(1 + tanh(u)), u = √(2/π)·(x + 0.044715·x³), computed
 * as the identical x·σ(2u) (1 + tanh(u) = 2σ(2u)): tfjs-wasm's Sigmoid is vectorised (XNNPACK),
 * its Tanh is ~20x slower.
 */
export function gelu(x: tf.Tensor): tf.Tensor {
  const c = 2 * Math.sqrt(2 / Math.PI);
  // the same formulas in one pass each way where the backend has them (fused.ts)
  const fused = fusedOp('gelu', x.size);
  if (fused) return fused(x);
  const f = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const x = args[0] as tf.Tensor;
    const save = args[1] as tf.GradSaveFunc;
    const x2 = tf.square(x);
    const s = tf.sigmoid(tf.mul(tf.mul(tf.add(tf.mul(x2, 0.044715), 1), x), c));
    save([x, x2, s]);
    return {
      value: tf.mul(x, s),
      // d/dx x·σ(z) = σ + x·σ·(1 − σ)·z',  z' = c·(1 + 3·0.044715·x²)
      gradFunc: (dy: tf.Tensor | tf.Tensor[], saved: tf.Tensor[]) => {
        const [x, x2, s] = saved as [tf.Tensor, tf.Tensor, tf.Tensor];
        const zp = tf.add(tf.mul(x2, 3 * 0.044715 * c), c);
        return [tf.mul(dy as tf.Tensor, tf.add(s, tf.mul(tf.mul(tf.mul(x, s), tf.sub(1, s)), zp)))];
      },
    };
  });
  return f(x);
}

// x·w + b as one op: fused (fused.ts) where the backend has it; else tfjs's fused matMul (on wasm,
// accel/'s SIMD matMul starts its sums from the bias; the gradient is tfjs-core's: two matMuls and a
// sum over rows for the bias).
function linear(x: tf.Tensor2D, w: tf.Tensor, b: tf.Tensor): tf.Tensor2D {
  const fused = fusedOp('linear');
  return fused ? fused(x, w, b) : (tf.fused.matMul({ a: x, b: w as tf.Tensor2D, bias: b }) as tf.Tensor2D);
}

/** Embeddings of int ids [n] (tokens or positions): one-hot matMul where tf.gather has no gradient (wasm), gather elsewhere. */
// (wasm's OneHot ignores a float dtype, hence int32 + cast)
function embed(wte: tf.Tensor, ids: tf.Tensor1D, vocab: number, oneHot: boolean): tf.Tensor2D {
  if (oneHot) return tf.matMul(tf.cast(tf.oneHot(ids, vocab), 'float32') as tf.Tensor2D, wte as tf.Tensor2D);
  return tf.gather(wte, ids) as tf.Tensor2D;
}

/**
 * q, k, v [n, d] from c_attn ([d, 3d]): three products with column slices of the weight (tfjs-wasm
 * splits a [n, 3d] activation along its last axis slowly; slicing the small weight is cheap).
 */
function qkvProj(p: Params, h: string, a: tf.Tensor2D, d: number): [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D] {
  const w = P(p, h + 'attn.c_attn.weight');
  const b = P(p, h + 'attn.c_attn.bias');
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
  const a = layerNorm(x, P(p, h + 'ln_1.weight'), P(p, h + 'ln_1.bias')) as tf.Tensor2D;
  // fused (fused.ts) when nothing needs the keys and values split into heads: one product with the
  // whole c_attn, its [n, 3d] result read in place
  const fused = keepKV ? null : fusedOp('attention');
  let merged: tf.Tensor2D, k: tf.Tensor4D | undefined, v: tf.Tensor4D | undefined, qkv: tf.Tensor2D | undefined;
  if (fused)
    merged = fused((qkv = linear(a, P(p, h + 'attn.c_attn.weight'), P(p, h + 'attn.c_attn.bias'))), mask, c.heads);
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
  x = tf.add(x, linear(merged, P(p, h + 'attn.c_proj.weight'), P(p, h + 'attn.c_proj.bias')));
  const m = layerNorm(x, P(p, h + 'ln_2.weight'), P(p, h + 'ln_2.bias')) as tf.Tensor2D;
  const f = gelu(linear(m, P(p, h + 'mlp.c_fc.weight'), P(p, h + 'mlp.c_fc.bias'))) as tf.Tensor2D;
  x = tf.add(x, linear(f, P(p, h + 'mlp.c_proj.weight'), P(p, h + 'mlp.c_proj.bias')));
  return { x, k, v, qkv };
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
  const tok = embed(P(p, 'wte.weight'), tf.tensor1d(b.tokens, 'int32'), c.vocabSize, oneHot);
  const pos = embed(P(p, 'wpe.weight'), tf.tensor1d(positions(b), 'int32'), c.maxPositions, oneHot);
  const last = new Float32Array(T);
  last[(b.answerFrom ?? T) - 1] = 1;
  const sep = tf.mul(
    tf.tensor3d(last, [1, T, 1]),
    tf.reshape(tf.slice(P(p, 'wte.weight'), [SEP_ID, 0], [1, d]), [1, 1, d]),
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
  return { h: layerNorm(x, P(p, 'ln_f.weight'), P(p, 'ln_f.bias')) as tf.Tensor2D, kv, qkv };
}

/** Logits [n, V] from final hidden states [n, d] (tied head). */
export function head(p: Params, h: tf.Tensor2D): tf.Tensor2D {
  return matMulFast(h, P(p, 'wte.weight'), false, true) as tf.Tensor2D;
}

/**
 * Logits [N*A, V] for the A positions starting at column `from` (the answer window: the prompt's last
 * token and the answer inputs). Call inside tf.tidy / under a gradient.
 */
export function windowLogits(
  p: Params,
  c: ModelConfig,
  b: Batch,
  from: number,
  A: number,
  oneHot: boolean,
): tf.Tensor2D {
  const { h } = hidden(p, c, b, oneHot);
  const w = tf.slice(tf.reshape(h, [b.N, b.T, c.dModel]), [0, from, 0], [b.N, A, c.dModel]);
  return head(p, tf.reshape(w, [b.N * A, c.dModel]) as tf.Tensor2D);
}

// ---------------------------------------------------------------- grouped answers
// A group's G answers share their prompt. Training and decoding run the prompt once ([B, Tp]
// columns: pads, <bos>, prompt, <sep>), then the answer columns of all B·G rows attend to their
// group's cached prompt keys/values plus their own causal part. Keys are in the same order as in
// one full [N, Tp + A'] pass (prompt, then answer), so the result is that pass's, computed with
// G× less prompt work.

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
  const a = layerNorm(x, P(p, h + 'ln_1.weight'), P(p, h + 'ln_1.bias')) as tf.Tensor2D;
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
  x = tf.add(x, linear(merged, P(p, h + 'attn.c_proj.weight'), P(p, h + 'attn.c_proj.bias')));
  const m = layerNorm(x, P(p, h + 'ln_2.weight'), P(p, h + 'ln_2.bias')) as tf.Tensor2D;
  const f = gelu(linear(m, P(p, h + 'mlp.c_fc.weight'), P(p, h + 'mlp.c_fc.bias'))) as tf.Tensor2D;
  x = tf.add(x, linear(f, P(p, h + 'mlp.c_proj.weight'), P(p, h + 'mlp.c_proj.bias')));
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
    const pos = tf.slice(P(p, 'wpe.weight'), [b.answerPos, 0], [Aa, d]);
    let x = tf.reshape(tf.add(tf.reshape(embed(P(p, 'wte.weight'), ids, c.vocabSize, oneHot), [B * G, Aa, d]), pos), [
      B * G * Aa,
      d,
    ]) as tf.Tensor2D;
    const mask = groupedMask(b.pad, B, Tp, 0, Aa);
    for (let i = 0; i < c.layers; i++) x = groupedBlock(p, i, c, x, B, G, Aa, kv[i]!, mask).x;
    const ha = layerNorm(x, P(p, 'ln_f.weight'), P(p, 'ln_f.bias'));
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
      tf.gather(P(p, 'wte.weight'), tf.tensor1d(ids, 'int32')),
      tf.slice(P(p, 'wpe.weight'), [pos, 0], [1, c.dModel]),
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
    const h = layerNorm(x, P(p, 'ln_f.weight'), P(p, 'ln_f.bias')) as tf.Tensor2D;
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
