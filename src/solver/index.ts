// The solver: a small transformer policy trained with the GRPO family (DESIGN.md, "Solver and the
// GRPO family"). createPolicy() is what the loop uses; TransformerPolicy adds hooks for tests.
import { promises as fs } from 'node:fs';
import { availableParallelism } from 'node:os';
import * as path from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import './gradients.js';
import type { AnswerShape } from '../../core/task.js';
import { createRng, type Rng } from '../../core/rng.js';
import { initBackend } from './backend.js';
import { clipRange, solverConfigSchema, type SolverConfig } from './config.js';
import { decodeRows, type DecodedRow, type DecodePrompt } from './decode.js';
import { grammarFor } from './grammar.js';
import { advantages, overlongPenalty } from './loss.js';
import { initWeights, makeParams, setVariable, type ModelConfig, type Params } from './model.js';
import { AdamW, learningRate } from './optim.js';
import { ShardWorkers, readArrays } from './accel/index.js';
import { AnswerReplay, type KeptJson } from './replay.js';
import { decodeSafetensors, encodeSafetensors, writeAtomic, type NamedTensor } from './safetensors.js';
import { VOCAB_SIZE, encode } from './tokenizer.js';
import {
  buildBatch, logProbs, refLogProbs, shardDecode, shardGrads, shardObjective,
  type ShardInput, type ShardSetup, type ShardStats, type TrainRow,
} from './train-step.js';
import type { Policy, PolicyPrompt, Sample, TrainStats } from './types.js';

export { solverConfigSchema, type SolverConfig, type SolverConfigInput } from './config.js';
export { initBackend } from './backend.js';
export type { Policy, PolicyPrompt, Sample, TrainStats } from './types.js';

const CHECKPOINT_FORMAT = 'cogen-solver/1';
/**
 * Fewest answers per call worth decoding on the shard workers. A decode step is mostly per-op
 * overhead, the same for a chunk as for the whole batch, and each call sends the weights: on 2 cores,
 * 2 threads took 117 ms for 64 answers against 111 ms on one, 171 against 183 ms for 128, 257
 * against 359 ms for 256 (scratch measurement, B prompts × 8).
 */
const PARALLEL_DECODE_ROWS = 128;
/** The ShardModule the shard workers run (parallel.ts). */
const TRAIN_STEP_MODULE = new URL('./train-step.ts', import.meta.url);

export type Prompt = PolicyPrompt;

/** One sampled answer, with what the update needs. */
export type RolloutRow = DecodedRow;

export interface Rollout {
  rows: RolloutRow[];
  groups: number;
  groupSize: number;
  temperature: number;
}

type Weights = Map<string, NamedTensor>;

function modelConfig(cfg: SolverConfig): ModelConfig {
  const m = cfg.model;
  return {
    vocabSize: VOCAB_SIZE, dModel: m.dModel, layers: m.layers, heads: m.heads, mlpRatio: m.mlpRatio,
    // <sep> at maxPromptLen + 1, answer inputs up to maxPromptLen + 1 + maxAnswerLen
    maxPositions: m.maxPromptLen + m.maxAnswerLen + 2,
  };
}

async function readWeights(p: Params): Promise<Weights> {
  const out: Weights = new Map();
  for (const [name, v] of p) out.set(name, { shape: v.shape.slice(), data: (await v.data()) as Float32Array });
  return out;
}

export class TransformerPolicy implements Policy {
  readonly backend: string;
  readonly mc: ModelConfig;
  private params: Params;
  private ref: Params | null = null;
  private opt: AdamW;
  private rng: Rng;
  private rollout: Rollout | null = null;
  /** Threads an update uses (this one and workersWanted − 1 shard workers, started on first use). */
  private workersWanted: number;
  private workers: ShardWorkers | null = null;
  /** kept answers for self-imitation; null when it is off */
  private replay: AnswerReplay | null;

  constructor(readonly cfg: SolverConfig, backend: string, seed: number, private readonly log: (l: string) => void) {
    this.backend = backend;
    this.mc = modelConfig(cfg);
    this.workersWanted = updateThreads(cfg.workers, backend);
    this.replay = cfg.selfImitation ? new AnswerReplay() : null;
    const base = createRng(seed);
    const init = initWeights(this.mc, base.fork('init'));
    this.params = makeParams(init);
    if (cfg.loss.beta > 0) this.ref = makeParams(init, false);
    this.opt = new AdamW(this.params, cfg.optim);
    this.rng = base.fork('sample');
  }

  get step(): number {
    return this.opt.step;
  }

  lastRollout(): Rollout | null {
    return this.rollout;
  }

  // ------------------------------------------------------------------ sampling
  /** Prompt ids, truncated from the left to maxPromptLen (the end, nearest the answer, is kept). */
  private promptIds(text: string): number[] {
    const ids = encode(text);
    const max = this.cfg.model.maxPromptLen;
    return ids.length > max ? ids.slice(ids.length - max) : ids;
  }

  /**
   * G answers per prompt (or the greedy one): on this thread, or (from PARALLEL_DECODE_ROWS answers)
   * split into contiguous chunks of prompts over the shard workers (parallel.ts). Each prompt has its
   * own random stream, seeded from this policy's stream once per call, so the answers do not depend
   * on the split.
   */
  private async decodeBatch(prompts: Prompt[], G: number, greedy: boolean): Promise<RolloutRow[]> {
    const seed = greedy ? 0 : this.rng.int(0, 2 ** 31 - 1);
    const dps: DecodePrompt[] = prompts.map((p, b) => ({ ids: this.promptIds(p.text), grammar: this.grammarOf(p), seed: `${seed}/${b}` }));
    const setup = this.shardSetup();
    const workers = dps.length >= 2 && dps.length * G >= PARALLEL_DECODE_ROWS ? await this.shardWorkers() : null;
    if (workers) {
      const n = Math.min(workers.size + 1, dps.length);
      const starts = Array.from({ length: n + 1 }, (_, i) => Math.floor((i * dps.length) / n));
      const chunks = starts.slice(0, n).map((from, i) => ({ prompts: dps.slice(from, starts[i + 1]), G, greedy }));
      try {
        const parts = await workers.decode<DecodedRow[]>(chunks.slice(1), await readArrays(this.params), () => shardDecode(this.params, setup, chunks[0]!));
        // chunk-local group indices → batch indices
        return parts.flatMap((rows, i) => rows.map((r) => ({ ...r, group: r.group + starts[i]! })));
      } catch (e) {
        this.dropWorkers(e as Error);
      }
    }
    return decodeRows(this.params, this.mc, setup.decode, dps, G, greedy);
  }

  /** The grammar a prompt's answers are decoded in: its shape when typed answers are on, else its kind. */
  private grammarOf(p: Prompt): AnswerShape {
    if (!this.cfg.typedAnswers || p.shape === undefined) return p.kind;
    // A shape with a single possible answer (null, an empty or all-null argument list) would give
    // the answer away: decode the plain literal. (The built-in families never produce one.)
    if (/^(null|\[(null(,null)*)?\])$/.test(p.shape)) return p.kind;
    // A shape whose shortest answer exceeds the budget (a long argument list) cannot be written at
    // all: decode the plain literal then (no answer of that shape could be right within the budget).
    const g = grammarFor(p.shape);
    return g.minRemaining(g.start()) <= this.cfg.model.maxAnswerLen ? p.shape : p.kind;
  }

  async sample(prompts: Prompt[], groupSize: number): Promise<Sample[][]> {
    const rows = prompts.length ? await this.decodeBatch(prompts, groupSize, false) : [];
    this.rollout = { rows, groups: prompts.length, groupSize, temperature: this.cfg.sampling.temperature };
    const out: Sample[][] = prompts.map(() => []);
    for (const r of rows) out[r.group]!.push({ group: r.group, text: r.text });
    return out;
  }

  async greedy(prompts: Prompt[]): Promise<string[]> {
    if (!prompts.length) return [];
    return (await this.decodeBatch(prompts, 1, true)).map((r) => r.text);
  }

  // ------------------------------------------------------------------ training
  /** The last rollout's kept rows with their advantages (G per kept group); none when no group is left. */
  private prepare(rewards: number[][]): { meanReward: number; rows: TrainRow[]; groups: number } {
    const ro = this.rollout;
    if (!ro) throw new Error('update() before sample()');
    if (rewards.length !== ro.groups || rewards.some((g) => g.length !== ro.groupSize)) {
      throw new Error(`update(): rewards must be [${ro.groups}][${ro.groupSize}]`);
    }
    const lc = this.cfg.loss;
    const maxA = this.cfg.model.maxAnswerLen;
    const overlong = lc.overlong.enabled ?? lc.type === 'dapo';
    const shaped = rewards.map((g, b) => g.map((r, i) => {
      const row = ro.rows[b * ro.groupSize + i]!;
      return overlong ? r + overlongPenalty(row.text.length, maxA, lc.overlong.cache, lc.overlong.penalty) : r;
    }));
    const adv = advantages(shaped, lc.scale);
    const keep: number[] = [];
    shaped.forEach((g, b) => {
      if (!lc.dynamicSampling || g.some((r) => r !== g[0])) keep.push(b);
    });
    const meanReward = rewards.flat().reduce((a, b) => a + b, 0) / Math.max(1, rewards.flat().length);
    const rows = keep.flatMap((b) => ro.rows.slice(b * ro.groupSize, (b + 1) * ro.groupSize).map((row, i) => ({ ...row, adv: adv[b]![i]! })));
    return { meanReward, rows, groups: keep.length };
  }

  private shardSetup(): ShardSetup {
    const { epsLow, epsHigh } = clipRange(this.cfg.loss);
    const loss = { type: this.cfg.loss.type, epsLow, epsHigh, beta: this.cfg.loss.beta, maxLen: this.cfg.model.maxAnswerLen + 1 };
    const m = this.cfg.model;
    return { mc: this.mc, loss, entropy: this.cfg.loss.entropy, decode: { maxPromptLen: m.maxPromptLen, maxAnswerLen: m.maxAnswerLen, sampling: this.cfg.sampling } };
  }

  /** The whole batch of kept rows as one shard input (no normalisers: the published reductions). */
  private wholeBatch(rows: TrainRow[]): Omit<ShardInput, 'norm'> {
    return { batch: buildBatch(rows, this.rollout!.groupSize, this.cfg.model.maxPromptLen), temperature: this.rollout!.temperature };
  }

  /** Each row's answer log-probs under the current weights, at the rollout's temperature (rows in groups of G). */
  private async currentLogProbs(rows: RolloutRow[], G: number): Promise<Float32Array[]> {
    const b = buildBatch(rows.map((r) => ({ ...r, adv: 0 })), G, this.cfg.model.maxPromptLen);
    const lp = tf.tidy(() => logProbs(this.params, this.mc, b, this.rollout!.temperature).logp);
    const d = (await lp.data()) as Float32Array;
    lp.dispose();
    return rows.map((r, i) => d.slice(i * b.A, i * b.A + r.answer.length));
  }

  /** Recomputes the last rollout's log-probs with the current weights (for tests: equals the sampling log-probs). */
  async recomputeLogProbs(): Promise<{ sampled: number[][]; recomputed: number[][] }> {
    const ro = this.rollout;
    if (!ro) throw new Error('no rollout');
    const recomputed = await this.currentLogProbs(ro.rows, ro.groupSize);
    return { sampled: ro.rows.map((r) => Array.from(r.oldLogp)), recomputed: recomputed.map((x) => Array.from(x)) };
  }

  /**
   * Gradients and stats of one inner iteration: on this thread alone, or split by group over the
   * shard workers (parallel.ts) when there are any and at least two groups to split.
   */
  private async iterationGrads(rows: TrainRow[], groups: number): Promise<{ grads: Map<string, tf.Tensor>; stats: ShardStats }> {
    const ro = this.rollout!;
    const setup = this.shardSetup();
    const workers = groups >= 2 ? await this.shardWorkers() : null;
    if (workers) {
      // contiguous runs of whole groups, as even as the group count allows
      const shards = Math.min(workers.size + 1, groups);
      const norm = { rows: rows.length, tokens: rows.reduce((a, r) => a + r.answer.length, 0) };
      const inputs: ShardInput[] = [];
      for (let i = 0; i < shards; i++) {
        const from = Math.floor((i * groups) / shards) * ro.groupSize;
        const to = Math.floor(((i + 1) * groups) / shards) * ro.groupSize;
        inputs.push({ ...this.wholeBatch(rows.slice(from, to)), norm });
      }
      const ref = this.ref;
      try {
        const out = await workers.grads(inputs.slice(1), await readArrays(this.params), async () => (ref ? readArrays(ref) : undefined), () => shardGrads(this.params, ref, setup, inputs[0]!));
        return { grads: out.grads, stats: out.stats as ShardStats };
      } catch (e) {
        this.dropWorkers(e as Error);
      }
    }
    return shardGrads(this.params, this.ref, setup, this.wholeBatch(rows));
  }

  /** Self-imitation (replay.ts): the rewards with kept answers in; replaced rows get the current log-probs as old ones. */
  private async replayAnswers(rewards: number[][]): Promise<number[][]> {
    const ro = this.rollout!;
    // a malformed rewards array is prepare()'s to report
    if (rewards.length !== ro.groups || rewards.some((g) => g.length !== ro.groupSize)) return rewards;
    const out = this.replay!.apply(ro.rows, rewards, ro.groupSize);
    if (out.replaced.length > 0) {
      // one row from each of several groups: a batch of groups of one
      const lps = await this.currentLogProbs(out.replaced.map((i) => ro.rows[i]!), 1);
      out.replaced.forEach((i, r) => { ro.rows[i]!.oldLogp = lps[r]!; });
    }
    return out.rewards;
  }

  /** After a shard worker failed: stops them all and carries on on this thread (no step is lost). */
  private dropWorkers(e: Error): void {
    this.log(`solver: ${e.message}; updates and decoding go on on one thread`);
    void this.workers?.close();
    this.workers = null;
    this.workersWanted = 1;
  }

  /** The shard workers, started on first use; null when this policy runs on one thread. */
  private async shardWorkers(): Promise<ShardWorkers | null> {
    if (this.workersWanted <= 1) return null;
    if (!this.workers) {
      try {
        this.workers = await ShardWorkers.start(this.workersWanted - 1, this.backend, TRAIN_STEP_MODULE, this.shardSetup());
        this.log(`solver: data-parallel updates and decoding on ${this.workersWanted} threads (this one and ${this.workersWanted - 1} shard worker${this.workersWanted > 2 ? 's' : ''})`);
      } catch (e) {
        this.log(`solver: shard workers did not start (${(e as Error).message}); updates and decoding run on one thread`);
        this.workersWanted = 1;
        return null;
      }
    }
    return this.workers;
  }

  async update(rewards: number[][]): Promise<TrainStats> {
    if (this.replay && this.rollout) rewards = await this.replayAnswers(rewards);
    const prep = this.prepare(rewards);
    if (prep.rows.length === 0) {
      return { loss: 0, meanAbsAdvantage: 0, clipFraction: 0, kl: 0, entropy: 0, tokens: 0, groups: 0, lr: learningRate(this.opt.step, this.cfg.optim), reward: prep.meanReward };
    }
    const acc = [0, 0, 0, 0];
    let lr = 0;
    let gradNorm = 0;
    for (let it = 0; it < this.cfg.loss.mu; it++) {
      const { grads, stats } = await this.iterationGrads(prep.rows, prep.groups);
      const r = this.opt.apply(grads);
      lr = r.lr;
      gradNorm = (await r.gradNorm.data())[0]!;
      r.gradNorm.dispose();
      for (let i = 0; i < 4; i++) acc[i]! += stats[i]! / this.cfg.loss.mu;
    }
    const tokens = prep.rows.reduce((a, r) => a + r.answer.length, 0);
    return {
      loss: acc[0]!, clipFraction: acc[1]!, kl: acc[2]!, entropy: acc[3]!,
      meanAbsAdvantage: prep.rows.reduce((a, r) => a + Math.abs(r.adv), 0) / prep.rows.length,
      tokens, groups: prep.groups, lr, reward: prep.meanReward, gradNorm,
    };
  }

  /** Loss and gradients on the last rollout without stepping, on this thread (for gradient checks). */
  async lossAndGrads(rewards: number[][]): Promise<{ loss: number; grads: Map<string, Float32Array> }> {
    const { rows } = this.prepare(rewards);
    if (rows.length === 0) throw new Error('no group with a gradient');
    const { grads: g, stats } = shardGrads(this.params, this.ref, this.shardSetup(), this.wholeBatch(rows));
    const loss = stats[0];
    const out = new Map<string, Float32Array>();
    for (const [n, t] of g) { out.set(n, (await t.data()) as Float32Array); t.dispose(); }
    return { loss, grads: out };
  }

  /** The loss only (for finite differences). */
  async lossOnly(rewards: number[][]): Promise<number> {
    const { rows } = this.prepare(rewards);
    if (rows.length === 0) throw new Error('no group with a gradient');
    const setup = this.shardSetup();
    const input = this.wholeBatch(rows);
    const ref = refLogProbs(this.ref, setup, input);
    const stats: tf.Tensor[] = [];
    const l = tf.tidy(() => shardObjective(this.params, setup, input, ref, stats)());
    const v = (await l.data())[0]!;
    l.dispose();
    for (const s of stats) s.dispose();
    ref?.dispose();
    return v;
  }

  weights(): Promise<Weights> {
    return readWeights(this.params);
  }

  /** Sets one weight entry (for finite differences). */
  setWeight(name: string, index: number, value: number): void {
    const v = this.params.get(name)!;
    const d = v.dataSync().slice() as Float32Array;
    d[index] = value;
    setVariable(v, d);
  }

  // ------------------------------------------------------------------ checkpoints
  async save(dir: string): Promise<void> {
    await fs.mkdir(dir, { recursive: true });
    await writeAtomic(path.join(dir, 'model.safetensors'), encodeSafetensors(await readWeights(this.params), { format: 'pt', producer: 'cogen' }));
    const moments: Weights = new Map();
    for (const [n, t] of this.opt.m) moments.set(`m.${n}`, { shape: t.shape.slice(), data: (await t.data()) as Float32Array });
    for (const [n, t] of this.opt.v) moments.set(`v.${n}`, { shape: t.shape.slice(), data: (await t.data()) as Float32Array });
    await writeAtomic(path.join(dir, 'optimizer.safetensors'), encodeSafetensors(moments));
    if (this.ref) await writeAtomic(path.join(dir, 'reference.safetensors'), encodeSafetensors(await readWeights(this.ref)));
    if (this.replay) await writeAtomic(path.join(dir, 'replay.json'), JSON.stringify(this.replay));
    const state = {
      format: CHECKPOINT_FORMAT,
      config: this.cfg,
      model: this.mc,
      optimizer: { type: 'adamw', step: this.opt.step, ...this.cfg.optim, moments: 'optimizer.safetensors' },
      rng: this.rng.state(),
      backend: this.backend,
    };
    // written last: a checkpoint without state.json is incomplete
    await writeAtomic(path.join(dir, 'state.json'), JSON.stringify(state, null, 2));
  }

  async load(dir: string): Promise<void> {
    const state = JSON.parse(await fs.readFile(path.join(dir, 'state.json'), 'utf8')) as {
      format: string; model: ModelConfig; optimizer: { step: number }; rng: [number, number, number, number];
    };
    if (state.format !== CHECKPOINT_FORMAT) throw new Error(`checkpoint format ${state.format}, expected ${CHECKPOINT_FORMAT}`);
    for (const k of Object.keys(this.mc) as (keyof ModelConfig)[]) {
      if (state.model[k] !== this.mc[k]) throw new Error(`checkpoint model.${k} = ${state.model[k]}, this policy has ${this.mc[k]}`);
    }
    const assign = (into: Map<string, tf.Variable>, from: Map<string, NamedTensor>, prefix = ''): void => {
      for (const [n, v] of into) {
        const t = from.get(prefix + n);
        if (!t) throw new Error(`checkpoint lacks ${prefix + n}`);
        setVariable(v, t.data);
      }
    };
    assign(this.params, decodeSafetensors(await fs.readFile(path.join(dir, 'model.safetensors'))).tensors);
    const mom = decodeSafetensors(await fs.readFile(path.join(dir, 'optimizer.safetensors'))).tensors;
    assign(this.opt.m, mom, 'm.');
    assign(this.opt.v, mom, 'v.');
    this.opt.step = state.optimizer.step;
    if (this.ref) {
      const refFile = path.join(dir, 'reference.safetensors');
      const src = await fs.readFile(refFile).catch(() => null);
      assign(this.ref, decodeSafetensors(src ?? (await fs.readFile(path.join(dir, 'model.safetensors')))).tensors);
    }
    if (this.replay) {
      // a checkpoint written without self-imitation has no kept answers: start with none
      const kept = await fs.readFile(path.join(dir, 'replay.json'), 'utf8').catch(() => '[]');
      this.replay = AnswerReplay.fromJSON(JSON.parse(kept) as [string, KeptJson][]);
    }
    this.rng = createRng(state.rng);
    this.rollout = null;
    this.workers?.resetRef();
  }

  dispose(): void {
    void this.workers?.close();
    this.workers = null;
    for (const v of this.params.values()) v.dispose();
    if (this.ref) for (const v of this.ref.values()) v.dispose();
    this.opt.dispose();
  }
}

/**
 * Threads for an update: `workers` when set; else (0) one per core, at most 4, on wasm, whose
 * kernels use one core each, and 1 elsewhere (tfjs-node and webgpu parallelise inside their ops).
 */
function updateThreads(workers: number, backend: string): number {
  if (backend !== 'wasm' && backend !== 'cpu') return 1;
  if (workers > 0) return workers;
  return backend === 'wasm' ? Math.min(4, availableParallelism()) : 1;
}

export async function createPolicy(cfg: SolverConfig, opts: { seed: number; log?: (line: string) => void }): Promise<TransformerPolicy> {
  const log = opts.log ?? ((l: string) => console.error(l));
  const parsed = solverConfigSchema.parse(cfg);
  const backend = await initBackend(parsed.backend, { threads: parsed.threads, log });
  return new TransformerPolicy(parsed, backend, opts.seed, log);
}
