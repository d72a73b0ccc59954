// One shard of a GRPO-family update: the training batch built from rollout rows, the masked
// log-probs, and the loss and gradients of that batch; and one chunk of decoding (decode.ts). The
// policy (index.ts) runs them on this thread; the shard workers (accel/parallel.ts) import this
// module and run the same code on their shards, so both compute the same math.
//
// A shard's loss is normalised by the whole update's rows and tokens (`norm`): the sum of the shard
// losses, and so of their gradients, is then the loss of the whole batch (loss.ts).
import * as tf from '@tensorflow/tfjs-core';
import './gradients.js';
import { clipRange, type SolverConfig } from './config.js';
import { decodeRows, type DecodedRow, type DecodeOptions, type DecodePrompt } from './decode.js';
import { fusedOp } from './fused.js';
import { policyLoss, supervisedLoss, type LossNorm, type LossOptions } from './loss.js';
import { groupedWindowLogits, type GroupedBatch } from './grouped.js';
import { paramShapes, type ModelConfig, type Params } from './params.js';
import { BOS, VOCAB_SIZE } from './tokenizer.js';

const NEG = -1e9;

/** What one rollout row contributes to an update. */
export interface TrainRow {
  prompt: number[];
  /** answer token ids, ending with <eos> */
  answer: number[];
  /** sampling log-prob of each answer token */
  oldLogp: Float32Array;
  /** allowed tokens at each answer position */
  allowed: Uint8Array[];
  adv: number;
}

/** A training batch: plain typed arrays, so that it can be posted to a worker as it is. */
export interface TrainBatch {
  batch: GroupedBatch;
  A: number;
  N: number;
  targets: Int32Array;
  mask: Float32Array;
  old: Float32Array;
  /** [N·A, V]: 0 where the grammar allowed the token, −1e9 elsewhere */
  gmask: Float32Array;
  advs: Float32Array;
  tokens: number;
}

/** What is the same for every shard of a policy (sent to a worker once). */
export interface ShardSetup {
  mc: ModelConfig;
  loss: LossOptions;
  /** entropy bonus coefficient */
  entropy: number;
  decode: DecodeOptions;
}

/** One chunk of decoding: its prompts, G answers each (1 when greedy). */
export interface DecodeInput {
  prompts: DecodePrompt[];
  G: number;
  greedy: boolean;
}

/** One shard's work: its batch, the sampling temperature and the whole update's normalisers. */
export interface ShardInput {
  batch: TrainBatch;
  temperature: number;
  norm: LossNorm;
  /** The rows are given answers to learn by cross-entropy (supervisedLoss), not sampled ones. */
  supervised?: boolean;
}

/** Attention and logit floats one training batch may hold at once, summed over layers and heads (~256 MB). */
export const BATCH_FLOATS = 2 ** 26;

/**
 * A batch split into runs of whole groups whose attention fits BATCH_FLOATS: long multi-turn contexts
 * (hundreds of one-row groups of 256 + 80 positions) would pass wasm's 4 GiB heap in one batch. A
 * batch that fits (every single-turn preset's) is one chunk, run as before.
 */
export function memoryChunks(
  groups: TrainRow[][],
  m: { layers: number; heads: number },
  budget = BATCH_FLOATS,
): TrainRow[][][] {
  // a batch pads every group to its longest prompt and answer: each group is priced at those
  const tp = Math.max(...groups.map((g) => g[0]!.prompt.length)) + 2;
  const a = Math.max(...groups.flat().map((r) => r.answer.length));
  const priced = (g: TrainRow[]) =>
    m.layers * m.heads * (tp * tp + g.length * a * (tp + a)) + g.length * a * VOCAB_SIZE;
  const total = groups.reduce((sum, g) => sum + priced(g), 0);
  if (total <= budget) return [groups];
  const out: TrainRow[][][] = [[]];
  let used = 0;
  for (const g of groups) {
    const c = priced(g);
    if (used + c > budget && out.at(-1)!.length > 0) {
      out.push([]);
      used = 0;
    }
    out.at(-1)!.push(g);
    used += c;
  }
  return out;
}

/** The batch of groups[b][i], answer i to prompt b (the G rows of a group share their prompt). */
export function buildBatch(groups: TrainRow[][], maxPromptLen: number): TrainBatch {
  const rows = groups.flat();
  const N = rows.length;
  const B = groups.length;
  const G = groups[0]!.length;
  const A = Math.max(...rows.map((r) => r.answer.length));
  const Tp = Math.max(...rows.map((r) => r.prompt.length)) + 1; // pads, <bos>, prompt
  const prompt = new Int32Array(B * Tp);
  const pad = new Int32Array(B);
  const answer = new Int32Array(N * (A - 1));
  const targets = new Int32Array(N * A);
  const mask = new Float32Array(N * A);
  const old = new Float32Array(N * A);
  const gmask = new Float32Array(N * A * VOCAB_SIZE);
  const advs = new Float32Array(N);
  for (let g = 0; g < B; g++) {
    const ids = groups[g]![0]!.prompt;
    pad[g] = Tp - 1 - ids.length;
    prompt[g * Tp + pad[g]!] = BOS;
    prompt.set(ids, g * Tp + pad[g]! + 1);
  }
  let tokens = 0;
  rows.forEach((row, r) => {
    // the last answer token is only a target: inputs stop one column earlier
    answer.set(row.answer.slice(0, A - 1), r * (A - 1));
    advs[r] = row.adv;
    tokens += row.answer.length;
    row.answer.forEach((tok, k) => {
      targets[r * A + k] = tok;
      mask[r * A + k] = 1;
      old[r * A + k] = row.oldLogp[k]!;
      const al = row.allowed[k]!;
      const base = (r * A + k) * VOCAB_SIZE;
      for (let v = 0; v < VOCAB_SIZE; v++) if (!al[v]) gmask[base + v] = NEG;
    });
  });
  const batch: GroupedBatch = { prompt, B, G, Tp, pad, answerPos: maxPromptLen + 1, answer, A };
  return { batch, A, N, targets, mask, old, gmask, advs, tokens };
}

/** Log-probs [N, A] of the targets and per-token entropy under params (inside a tidy/gradient). */
export function logProbs(params: Params, mc: ModelConfig, b: TrainBatch, temperature: number) {
  const T = temperature > 0 ? temperature : 1;
  // one-hot matMul for the embedding: tf.gather has no gradient on wasm (gradients.ts)
  const logits = groupedWindowLogits(params, mc, b.batch, true);
  const z = tf.add(tf.div(logits, T), tf.tensor2d(b.gmask, [b.N * b.A, VOCAB_SIZE])) as tf.Tensor2D;
  const { logp, ent } = targetLogp(z, b.targets);
  return { logp: tf.reshape(logp, [b.N, b.A]) as tf.Tensor2D, ent: tf.reshape(ent!, [b.N, b.A]) as tf.Tensor2D };
}

/**
 * The targets' log-probs and (unless `entropy` is false) the rows' entropies [n] of logits z [n, V]:
 * lsm = logSoftmax(z), logp = lsm[target], ent = −Σ exp(lsm)·lsm. Fused (fused.ts) where the backend
 * has it, which computes both.
 */
export function targetLogp(
  z: tf.Tensor2D,
  targets: Int32Array,
  entropy = true,
): { logp: tf.Tensor1D; ent?: tf.Tensor1D } {
  const t = tf.tensor1d(targets, 'int32');
  const fused = fusedOp('targetLogp');
  if (fused) {
    const [logp, ent] = fused(z, t);
    return { logp, ent };
  }
  const lsm = tf.logSoftmax(z);
  const logp = tf.sum(tf.mul(lsm, tf.cast(tf.oneHot(t, z.shape[1]), 'float32')), 1) as tf.Tensor1D;
  return { logp, ...(entropy ? { ent: tf.neg(tf.sum(tf.mul(tf.exp(lsm), lsm), 1)) as tf.Tensor1D } : {}) };
}

/** Stats of a shard, each already divided by the whole update's normaliser. */
export type ShardStats = {
  loss: number;
  /** fraction of tokens (sequences for gspo) whose term was clipped */
  clipFraction: number;
  /** masked mean of k3 against the reference (0 without one) */
  kl: number;
  /** masked mean entropy of the sampling distribution */
  entropy: number;
};

/** ShardStats as kept scalar tensors, while the objective runs. */
export type ShardStatTensors = { [K in keyof ShardStats]: tf.Scalar };

/**
 * The objective of one shard: a closure for tf.variableGrads that hands its stats (kept tensors) to
 * `onStats`. `ref` holds the frozen reference's log-probs when β > 0. Without `norm` the shard is
 * the whole batch (the published reductions, as loss.ts writes them).
 */
export function shardObjective(
  params: Params,
  setup: ShardSetup,
  input: ShardInput | Omit<ShardInput, 'norm'>,
  ref: tf.Tensor2D | undefined,
  onStats: (s: ShardStatTensors) => void,
) {
  const b = input.batch;
  const norm = 'norm' in input ? input.norm : undefined;
  return (): tf.Scalar => {
    const { logp, ent } = logProbs(params, setup.mc, b, input.temperature);
    const mask = tf.tensor2d(b.mask, [b.N, b.A]);
    const out = input.supervised
      ? supervisedLoss({ logp, mask }, norm)
      : policyLoss(
          { logp, old: tf.tensor2d(b.old, [b.N, b.A]), ref, mask, adv: tf.tensor1d(b.advs) },
          { ...setup.loss, norm },
        );
    const entropy = tf.div(tf.sum(tf.mul(ent, mask)), norm ? norm.tokens : tf.maximum(tf.sum(mask), 1));
    onStats({
      loss: tf.keep(out.loss.clone()),
      clipFraction: tf.keep(out.clipFraction),
      kl: tf.keep(out.kl),
      entropy: tf.keep(entropy as tf.Scalar),
    });
    return setup.entropy > 0 ? (tf.sub(out.loss, tf.mul(entropy, setup.entropy)) as tf.Scalar) : out.loss;
  };
}

/** The frozen reference's log-probs of a batch, or undefined without a reference. */
export function refLogProbs(
  ref: Params | null,
  setup: ShardSetup,
  input: Omit<ShardInput, 'norm'>,
): tf.Tensor2D | undefined {
  if (!ref || setup.loss.beta <= 0) return undefined;
  return tf.tidy(() => logProbs(ref, setup.mc, input.batch, input.temperature).logp);
}

/** Gradients of f with respect to params, keyed by parameter name. */
export function gradsByName(params: Params, f: () => tf.Scalar): Map<string, tf.Tensor> {
  const byVar = new Map([...params].map(([name, v]) => [v.name, name]));
  const { value, grads } = tf.variableGrads(f, [...params.values()]);
  value.dispose();
  const out = new Map<string, tf.Tensor>();
  for (const [vn, g] of Object.entries(grads)) out.set(byVar.get(vn) ?? vn, g);
  return out;
}

/** A shard's gradients and stats. */
export interface ShardGrads {
  grads: Map<string, tf.Tensor>;
  stats: ShardStats;
}

/** A batch's normalisers (its rows and answer tokens), which every shard of it is divided by. */
export function batchNorm(groups: readonly TrainRow[][]): LossNorm {
  const rows = groups.flat();
  return { rows: rows.length, tokens: rows.reduce((a, r) => a + r.answer.length, 0) };
}

/** `a` with `b` added in (gradients a + b, stats summed); the tensors replaced are disposed. Shards normalised by one batch add up to it. */
export function addShard(a: ShardGrads, b: ShardGrads | null): ShardGrads {
  if (!b) return a;
  for (const [n, g] of b.grads) {
    const prev = a.grads.get(n);
    a.grads.set(n, prev ? tf.add(prev, g) : g);
    if (prev) tf.dispose([prev, g]);
  }
  for (const k of Object.keys(a.stats) as (keyof ShardStats)[]) a.stats[k] += b.stats[k];
  return a;
}

/** One shard's gradients and stats (normalised by input.norm; without it, the shard is the whole batch). */
export function shardGrads(
  params: Params,
  ref: Params | null,
  setup: ShardSetup,
  input: ShardInput | Omit<ShardInput, 'norm'>,
): ShardGrads {
  const refLp = input.supervised ? undefined : refLogProbs(ref, setup, input);
  const kept: { stats?: ShardStatTensors } = {};
  try {
    const grads = gradsByName(
      params,
      shardObjective(params, setup, input, refLp, (s) => {
        kept.stats = s;
      }),
    );
    const read = (t: tf.Scalar): number => t.dataSync()[0]!;
    const s = kept.stats!;
    return {
      grads,
      stats: { loss: read(s.loss), clipFraction: read(s.clipFraction), kl: read(s.kl), entropy: read(s.entropy) },
    };
  } finally {
    refLp?.dispose();
    if (kept.stats) tf.dispose(Object.values(kept.stats));
  }
}

/**
 * What every shard of a policy's updates and decodes shares (sent to a shard worker once), from its
 * config: the model's shape, the loss's and the decoder's settings (`proposalLen`: self-play's choice tokens).
 */
export function shardSetupOf(cfg: SolverConfig, proposalLen = 0): ShardSetup {
  const m = cfg.model;
  const mc: ModelConfig = {
    vocabSize: VOCAB_SIZE,
    dModel: m.dModel,
    layers: m.layers,
    heads: m.heads,
    mlpRatio: m.mlpRatio,
    // <bos> and the prompt at 0 … maxPromptLen, answer inputs from maxPromptLen + 1 (model.ts): up to
    // maxAnswerLen of them (or the self-play proposer's choice tokens, when it writes more)
    maxPositions: m.maxPromptLen + 1 + Math.max(m.maxAnswerLen, proposalLen),
  };
  const { epsLow, epsHigh } = clipRange(cfg.loss);
  const loss = { type: cfg.loss.type, epsLow, epsHigh, beta: cfg.loss.beta, maxLen: m.maxAnswerLen + 1 };
  return {
    mc,
    loss,
    entropy: cfg.loss.entropy,
    decode: { maxPromptLen: m.maxPromptLen, maxAnswerLen: m.maxAnswerLen, sampling: cfg.sampling },
  };
}

/** Parameter shapes of a shard's model (for a worker's own copy). */
export const shardParamShapes = (setup: ShardSetup): [string, number[]][] => paramShapes(setup.mc);

/** One chunk's decoded rows, rows[b][i] for the chunk's prompt b. */
export function shardDecode(params: Params, setup: ShardSetup, input: DecodeInput): Promise<DecodedRow[][]> {
  return decodeRows(params, setup.mc, setup.decode, input.prompts, input.G, input.greedy);
}
