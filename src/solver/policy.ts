// The built-in solver's policy: a small transformer that samples answers in its answer grammar and
// learns from their rewards with the GRPO family (docs/DESIGN.md, "Solver and the GRPO family";
// src/solver/README.md). index.ts is the room's door and builds it (createPolicy).
import * as tf from '@tensorflow/tfjs-core';
import './gradients.js';
import type { AnswerShape } from '../../core/task.js';
import { createRng, type Rng } from '../../core/rng.js';
import { isZeroVariance } from '../../core/rules.js';
import { updateThreads } from './backend.js';
import type { SolverConfig } from './config.js';
import { decodeRows, type DecodedRow, type DecodePrompt } from './decode.js';
import { decodeActions, turnRows, type ActionTool, type EpisodeRows } from './episodes.js';
import { allowedTokens, answerIds, grammarFor, stepToken } from './grammar.js';
import { advantages, overlongPenalty } from './loss.js';
import { initWeights, makeParams, setVariable, type ModelConfig, type Params } from './model.js';
import { AdamW, learningRate, type OptimConfig } from './optim.js';
import { ShardPool, readArrays } from './accel/index.js';
import { AnswerReplay } from './replay.js';
import { ChoiceDecoder, choiceTrainRows, type ChoiceRow } from './choices.js';
import {
  loadCheckpoint,
  loadModelWeights,
  readWeights,
  writeCheckpoint,
  type PolicyParts,
  type Weights,
} from './checkpoint.js';
import { EOS, encode, tokenText } from './tokenizer.js';
import {
  BATCH_FLOATS,
  addShard,
  batchNorm,
  buildBatch,
  logProbs,
  memoryChunks,
  refLogProbs,
  shardDecode,
  shardGrads,
  shardObjective,
  shardSetupOf,
  type ShardGrads,
  type ShardInput,
  type ShardSetup,
  type ShardStats,
  type ShardStatTensors,
  type TrainRow,
} from './train-step.js';
import type { Policy, PolicyPrompt, Rollout, TrainStats, UpdateAlso } from './types.js';

/**
 * Fewest answers per call worth decoding on the shard workers. A decode step is mostly per-op
 * overhead, the same for a chunk as for the whole batch, and each call sends the weights: on 2 cores,
 * 2 threads took 117 ms for 64 answers against 111 ms on one, 171 against 183 ms for 128, 257
 * against 359 ms for 256 (scratch measurement, B prompts × 8).
 */
const PARALLEL_DECODE_ROWS = 128;
/** The ShardModule the shard workers run (accel/parallel.ts). */
const TRAIN_STEP_MODULE = new URL('./train-step.ts', import.meta.url);

export type Prompt = PolicyPrompt;

/** One sampled answer, with what the update needs: its tokens, sampling log-probs and grammar masks. */
export type RolloutRow = DecodedRow;

/** The transformer's rollout: each answer's row, grouped as the answers, and the temperature it was sampled at. */
export interface SolverRollout extends Rollout {
  /** rows[g][i] holds answers[g][i] */
  readonly rows: RolloutRow[][];
  readonly temperature: number;
}

export class TransformerPolicy implements Policy<SolverRollout> {
  readonly backend: string;
  readonly mc: ModelConfig;
  private params: Params;
  private ref: Params | null = null;
  private opt: AdamW;
  /** The optimiser settings with the schedule's length (the run's steps). */
  private readonly schedule: OptimConfig;
  private rng: Rng;
  /** What every shard of an update or a decode shares (this thread's and the shard workers'). */
  private readonly setup: ShardSetup;
  /** Shard workers for data-parallel updates and decoding (started on first use). */
  private readonly pool: ShardPool;
  /** kept answers for self-imitation; null when it is off */
  private replay: AnswerReplay | null;

  /** Attention and logit floats one training batch may hold (memoryChunks). */
  batchFloats = BATCH_FLOATS;

  /** proposalLen: choice tokens a self-play proposer writes (proposers/self-play.ts); 0 without one. */
  constructor(
    readonly cfg: SolverConfig,
    backend: string,
    seed: number,
    totalSteps: number,
    log: (l: string) => void,
    proposalLen = 0,
  ) {
    this.backend = backend;
    this.setup = shardSetupOf(cfg, proposalLen);
    this.mc = this.setup.mc;
    this.pool = new ShardPool(updateThreads(cfg.workers, backend), backend, TRAIN_STEP_MODULE, this.setup, log);
    this.replay = cfg.selfImitation ? new AnswerReplay() : null;
    const base = createRng(seed);
    const init = initWeights(this.mc, base.fork('init'));
    this.params = makeParams(init);
    if (cfg.loss.beta > 0) this.ref = makeParams(init, false);
    this.schedule = { ...cfg.optim, totalSteps };
    this.opt = new AdamW(this.params, this.schedule);
    this.rng = base.fork('sample');
  }

  get step(): number {
    return this.opt.step;
  }

  // ------------------------------------------------------------------ sampling
  /** Prompt ids, truncated from the left to maxPromptLen (the end, nearest the answer, is kept). */
  private promptIds(text: string): number[] {
    const ids = encode(text);
    const max = this.cfg.model.maxPromptLen;
    return ids.length > max ? ids.slice(ids.length - max) : ids;
  }

  /**
   * G answers per prompt (or the greedy one), rows[b][i]: on this thread, or (from
   * PARALLEL_DECODE_ROWS answers) split into contiguous chunks of prompts over the shard workers.
   * Each prompt has its own random stream, seeded from this policy's stream once per call, so the
   * answers do not depend on the split.
   */
  private async decodeBatch(prompts: Prompt[], G: number, greedy: boolean): Promise<RolloutRow[][]> {
    const seed = greedy ? 0 : this.rng.int(0, 2 ** 31 - 1);
    const dps: DecodePrompt[] = prompts.map((p, b) => ({
      ids: this.promptIds(p.text),
      grammar: this.grammarOf(p),
      seed: `${seed}/${b}`,
    }));
    if (dps.length >= 2 && dps.length * G >= PARALLEL_DECODE_ROWS) {
      const parts = await this.pool.run(async (workers) => {
        const n = Math.min(workers.size + 1, dps.length);
        const starts = Array.from({ length: n + 1 }, (_, i) => Math.floor((i * dps.length) / n));
        const chunks = starts.slice(0, n).map((from, i) => ({ prompts: dps.slice(from, starts[i + 1]), G, greedy }));
        return workers.decode(chunks.slice(1), await readArrays(this.params), () =>
          shardDecode(this.params, this.setup, chunks[0]!),
        );
      });
      if (parts) return parts.flat();
    }
    return decodeRows(this.params, this.mc, this.setup.decode, dps, G, greedy);
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

  async sample(prompts: Prompt[], groupSize: number): Promise<SolverRollout> {
    const rows = prompts.length ? await this.decodeBatch(prompts, groupSize, false) : [];
    return { answers: rows.map((group) => group.map((r) => r.text)), rows, temperature: this.cfg.sampling.temperature };
  }

  async greedy(prompts: Prompt[]): Promise<string[]> {
    if (!prompts.length) return [];
    return (await this.decodeBatch(prompts, 1, true)).map((group) => group[0]!.text);
  }

  // ------------------------------------------------------------------ training
  /**
   * The groups that carry a gradient, each row with its advantage (none when dynamic sampling drops
   * every group), and the batch's mean raw reward.
   */
  private prepare(rows: RolloutRow[][], rewards: number[][]): { meanReward: number; groups: TrainRow[][] } {
    if (!oneRewardPerRow(rows, rewards))
      throw new Error(`update(): rewards must be [${rows.length}][${rows[0]?.length ?? 0}]`);
    const lc = this.cfg.loss;
    const maxA = this.cfg.model.maxAnswerLen;
    const overlong = lc.overlong.enabled ?? lc.type === 'dapo';
    const shaped = rewards.map((g, b) =>
      g.map((r, i) =>
        overlong
          ? r + overlongPenalty(rows[b]![i]!.answer.length - 1, maxA, lc.overlong.cache, lc.overlong.penalty)
          : r,
      ),
    );
    const adv = advantages(shaped, lc.scale);
    const meanReward = rewards.flat().reduce((a, b) => a + b, 0) / Math.max(1, rewards.flat().length);
    // dynamic sampling drops the groups that carry no gradient
    const groups = rows.flatMap((group, b) =>
      lc.dynamicSampling && isZeroVariance(shaped[b]!) ? [] : [group.map((row, i) => ({ ...row, adv: adv[b]![i]! }))],
    );
    return { meanReward, groups };
  }

  /** Groups of rows as one shard's input (without normalisers: the whole batch, the published reductions). */
  private trainInput(groups: TrainRow[][], temperature: number, supervised = false): Omit<ShardInput, 'norm'> {
    return {
      batch: buildBatch(groups, this.cfg.model.maxPromptLen),
      temperature,
      ...(supervised ? { supervised } : {}),
    };
  }

  /** Each row's answer log-probs under the current weights, at `temperature`, grouped as the rows. */
  private async currentLogProbs(rows: RolloutRow[][], temperature: number): Promise<Float32Array[][]> {
    const b = buildBatch(
      rows.map((g) => g.map((r) => ({ ...r, adv: 0 }))),
      this.cfg.model.maxPromptLen,
    );
    const lp = tf.tidy(() => logProbs(this.params, this.mc, b, temperature).logp);
    const d = (await lp.data()) as Float32Array;
    lp.dispose();
    let i = 0;
    return rows.map((g) =>
      g.map((r) => {
        const at = i++ * b.A; // row i of the batch
        return d.slice(at, at + r.answer.length);
      }),
    );
  }

  /** A rollout's log-probs, as sampled and as the current weights give them (for tests: equal before an update). */
  async recomputeLogProbs(rollout: SolverRollout): Promise<{ sampled: number[][][]; recomputed: number[][][] }> {
    const recomputed = await this.currentLogProbs(rollout.rows, rollout.temperature);
    return {
      sampled: rollout.rows.map((g) => g.map((r) => Array.from(r.oldLogp))),
      recomputed: recomputed.map((g) => g.map((x) => Array.from(x))),
    };
  }

  /**
   * Gradients and stats of one inner iteration: on this thread alone, or split by group over the
   * shard workers when there are any and at least two groups to split.
   */
  private async iterationGrads(groups: TrainRow[][], temperature: number, supervised = false): Promise<ShardGrads> {
    const chunks = memoryChunks(groups, this.cfg.model, this.batchFloats);
    if (chunks.length > 1) {
      // one after another, each normalised by the whole batch (as the pool's shards are): the sums are the batch's
      const norm = batchNorm(groups);
      return chunks.reduce<ShardGrads | null>(
        (sum, chunk) =>
          addShard(
            shardGrads(this.params, this.ref, this.setup, { ...this.trainInput(chunk, temperature, supervised), norm }),
            sum,
          ),
        null,
      )!;
    }
    if (groups.length >= 2) {
      const out = await this.pool.run(async (workers) => {
        // contiguous runs of whole groups, as even as the group count allows; each normalised by the whole batch
        const shards = Math.min(workers.size + 1, groups.length);
        const norm = batchNorm(groups);
        const inputs: ShardInput[] = Array.from({ length: shards }, (_, i) => ({
          ...this.trainInput(
            groups.slice(Math.floor((i * groups.length) / shards), Math.floor(((i + 1) * groups.length) / shards)),
            temperature,
            supervised,
          ),
          norm,
        }));
        const ref = this.ref;
        return workers.grads(
          inputs.slice(1),
          await readArrays(this.params),
          async () => (ref ? readArrays(ref) : undefined),
          () => shardGrads(this.params, ref, this.setup, inputs[0]!),
        );
      });
      if (out) return out;
    }
    return shardGrads(this.params, this.ref, this.setup, this.trainInput(groups, temperature, supervised));
  }

  /**
   * Self-imitation (replay.ts), update's first step: the rows and rewards with kept answers in;
   * a replaced row's old log-probs are the current policy's. The rollout is left as it is.
   */
  async withKeptAnswers(
    rollout: SolverRollout,
    rewards: number[][],
  ): Promise<{ rows: RolloutRow[][]; rewards: number[][] }> {
    const rows = rollout.rows;
    // a malformed rewards array is prepare()'s to report
    if (!this.replay || !oneRewardPerRow(rows, rewards)) return { rows, rewards };
    const out = this.replay.apply(rows, rewards);
    if (out.replaced.length > 0) {
      // the first row of each of several groups: a batch of groups of one
      const lps = await this.currentLogProbs(
        out.replaced.map((b) => [out.rows[b]![0]!]),
        rollout.temperature,
      );
      out.replaced.forEach((b, r) => {
        out.rows[b]![0]!.oldLogp = lps[r]![0]!;
      });
    }
    return { rows: out.rows, rewards: out.rewards };
  }

  /** The model as a proposer (self-play): a decoder of choice tokens after `prompt`, at the sampling temperature. */
  openChoices(prompt: string): ChoiceDecoder {
    const m = this.cfg.model;
    return new ChoiceDecoder(
      this.params,
      this.mc,
      m.maxPromptLen,
      this.mc.maxPositions - m.maxPromptLen - 1,
      this.cfg.sampling.temperature,
      prompt,
    );
  }

  /** One update on the rollout's groups, and on `also`'s rows in the same optimiser step. */
  async update(rollout: SolverRollout, rewards: number[][], also: UpdateAlso = {}): Promise<TrainStats> {
    const kept = await this.withKeptAnswers(rollout, rewards);
    const prep = this.prepare(kept.rows, kept.rewards);
    // episodes' turn rows are groups of one, the rollout's are groups of G: two batches, whose losses add
    const parts = also.episodes?.length
      ? [prep.groups, turnRows(also.episodes, this.cfg.loss.scale, this.cfg.loss.dynamicSampling)]
      : [prep.groups];
    if (also.proposals?.length)
      return this.jointUpdate(parts, prep.meanReward, rollout.temperature, also.proposals, also.proposalWeight ?? 1);
    return this.applyGroups(parts, rollout.temperature, prep.meanReward);
  }

  /**
   * One iteration's gradients over `parts`, summed: each part is a batch of groups of one size
   * (buildBatch's form), whose loss is reduced over its own rows. Null when every part is empty.
   */
  private async partsGrads(parts: TrainRow[][][], temperature: number): Promise<ShardGrads | null> {
    let out: ShardGrads | null = null;
    for (const groups of parts) {
      if (groups.length === 0) continue;
      const g = await this.iterationGrads(groups, temperature);
      out = out ? addShard(out, g) : g;
    }
    return out;
  }

  /** The μ inner iterations of an update on parts (partsGrads) of groups of rows with their advantages. */
  private async applyGroups(parts: TrainRow[][][], temperature: number, meanReward: number): Promise<TrainStats> {
    const groups = parts.flat();
    const rows = groups.flat();
    if (rows.length === 0) {
      return {
        loss: 0,
        meanAbsAdvantage: 0,
        clipFraction: 0,
        kl: 0,
        entropy: 0,
        tokens: 0,
        groups: 0,
        lr: learningRate(this.opt.step, this.schedule),
        reward: meanReward,
      };
    }
    const mu = this.cfg.loss.mu;
    // the stats' mean over the μ inner iterations
    const mean: ShardStats = { loss: 0, clipFraction: 0, kl: 0, entropy: 0 };
    let lr = 0;
    let gradNorm = 0;
    for (let it = 0; it < mu; it++) {
      const { grads, stats } = (await this.partsGrads(parts, temperature))!;
      const r = this.opt.apply(grads);
      lr = r.lr;
      gradNorm = (await r.gradNorm.data())[0]!;
      r.gradNorm.dispose();
      for (const k of Object.keys(mean) as (keyof ShardStats)[]) mean[k] += stats[k] / mu;
    }
    return {
      ...mean,
      meanAbsAdvantage: rows.reduce((a, r) => a + Math.abs(r.adv), 0) / rows.length,
      tokens: rows.reduce((a, r) => a + r.answer.length, 0),
      groups: groups.length,
      lr,
      reward: meanReward,
      gradNorm,
    };
  }

  // ------------------------------------------------------------------ supervised (bench:ceiling)
  /**
   * One supervised step: the cross-entropy of the given answers, each written in its prompt's answer
   * grammar (answerIds, the tokens decoding would take), through the same model, optimiser and
   * backend as update(). For bench:ceiling's ceiling and for warm starts; runs never call it.
   */
  async supervise(prompts: Prompt[], answers: string[]): Promise<TrainStats> {
    if (prompts.length !== answers.length)
      throw new Error(`supervise(): ${prompts.length} prompts, ${answers.length} answers`);
    const rows = prompts.map((p, i) => this.shownRow(p, answers[i]!));
    const { grads, stats } = await this.iterationGrads(
      rows.map((r) => [r]),
      1,
      true,
    );
    const r = this.opt.apply(grads);
    const gradNorm = (await r.gradNorm.data())[0]!;
    r.gradNorm.dispose();
    return {
      ...stats,
      meanAbsAdvantage: 0,
      tokens: rows.reduce((a, row) => a + row.answer.length, 0),
      groups: rows.length,
      lr: r.lr,
      gradNorm,
    };
  }

  /**
   * The tokens this solver reads a prompt in and writes an answer in (its answer grammar's, <eos>
   * last): what supervise() trains on, and what a peer model is given (bench:ceiling).
   */
  tokens(p: Prompt, answer: string): { prompt: number[]; answer: number[] } {
    const shape = this.grammarOf(p);
    const ids = answerIds(grammarFor(shape), answer);
    const maxA = this.cfg.model.maxAnswerLen;
    if (!ids || ids.length - 1 > maxA)
      throw new Error(`"${answer}" is not a ${shape} answer of at most ${maxA} tokens`);
    return { prompt: this.promptIds(p.text), answer: ids };
  }

  /** A given answer as a training row: its tokens and the masks decoding would have had. */
  private shownRow(p: Prompt, answer: string): TrainRow {
    const { prompt, answer: ids } = this.tokens(p, answer);
    const shape = this.grammarOf(p);
    const g = grammarFor(shape);
    const allowed: Uint8Array[] = [];
    let state = g.start();
    ids.forEach((id, k) => {
      allowed.push(allowedTokens(shape, state, this.cfg.model.maxAnswerLen - k));
      if (id !== EOS) state = stepToken(g, state, tokenText(id))!;
    });
    return { prompt, answer: ids, oldLogp: new Float32Array(ids.length), allowed, adv: 1 };
  }

  // ------------------------------------------------------------------ multi-turn (episodes.ts)
  /** One action per context (its text cut from the left to maxPromptLen), decoded under its tools' action grammar. */
  async decodeActions(
    prompts: { text: string; tools: readonly ActionTool[] }[],
    greedy: boolean,
  ): Promise<RolloutRow[]> {
    if (!prompts.length) return [];
    const seed = greedy ? 0 : this.rng.int(0, 2 ** 31 - 1);
    const aps = prompts.map((p, b) => ({ ids: this.promptIds(p.text), tools: p.tools, seed: `${seed}/${b}` }));
    return decodeActions(this.params, this.mc, this.setup.decode, aps, greedy);
  }

  /**
   * One multi-turn GRPO update: groups[g] are the episodes of one environment, each with its turns'
   * rows and its final reward (episodes.ts turnRows); the loss covers the agent's tokens only.
   */
  async updateEpisodes(groups: EpisodeRows[][], temperature: number): Promise<TrainStats> {
    const lc = this.cfg.loss;
    const rewards = groups.flat().map((e) => e.reward);
    const meanReward = rewards.reduce((a, b) => a + b, 0) / Math.max(1, rewards.length);
    return this.applyGroups([turnRows(groups, lc.scale, lc.dynamicSampling)], temperature, meanReward);
  }

  /** The multi-turn loss only (for tests of its mask). */
  async episodesLoss(groups: EpisodeRows[][], temperature: number): Promise<number> {
    return this.groupsLoss(turnRows(groups, this.cfg.loss.scale, false), temperature);
  }

  /** Each turn row's log-probs under the current weights (equal to the sampling ones before an update). */
  async turnLogProbs(rows: RolloutRow[], temperature: number): Promise<number[][]> {
    return (
      await this.currentLogProbs(
        rows.map((r) => [r]),
        temperature,
      )
    ).map((g) => Array.from(g[0]!));
  }

  /**
   * One step on the solver role's groups (if any) and the proposer role's rows (groups of one: each
   * has its own prompt) together: each role's loss is reduced over its own rows, and they add.
   */
  private async jointUpdate(
    parts: TrainRow[][][],
    meanReward: number,
    temperature: number,
    proposals: readonly ChoiceRow[],
    weight: number,
  ): Promise<TrainStats> {
    const groups = parts.flat();
    const rows = groups.flat();
    const extra = choiceTrainRows(proposals, this.cfg.model.maxPromptLen).map((r) => [{ ...r, adv: r.adv * weight }]);
    const mu = this.cfg.loss.mu;
    const mean: ShardStats = { loss: 0, clipFraction: 0, kl: 0, entropy: 0 };
    let lr = 0;
    let gradNorm = 0;
    for (let it = 0; it < mu; it++) {
      const solve = await this.partsGrads(parts, temperature);
      const { grads, stats } = addShard(
        shardGrads(this.params, this.ref, this.setup, this.trainInput(extra, temperature)),
        solve,
      );
      const r = this.opt.apply(grads);
      tf.dispose([...grads.values()]);
      lr = r.lr;
      gradNorm = (await r.gradNorm.data())[0]!;
      r.gradNorm.dispose();
      for (const k of Object.keys(mean) as (keyof ShardStats)[]) mean[k] += stats[k] / mu;
    }
    const all = [...rows, ...extra.flat()];
    return {
      ...mean,
      meanAbsAdvantage: all.reduce((a, r) => a + Math.abs(r.adv), 0) / all.length,
      tokens: all.reduce((a, r) => a + r.answer.length, 0),
      groups: groups.length,
      lr,
      reward: meanReward,
      gradNorm,
    };
  }

  /** Loss and gradients of the proposer role's rows alone, without stepping (for tests). */
  async choiceGrads(proposals: readonly ChoiceRow[]): Promise<{ loss: number; grads: Map<string, Float32Array> }> {
    const extra = choiceTrainRows(proposals, this.cfg.model.maxPromptLen).map((r) => [r]);
    const { grads: g, stats } = shardGrads(
      this.params,
      this.ref,
      this.setup,
      this.trainInput(extra, this.cfg.sampling.temperature),
    );
    const out = new Map<string, Float32Array>();
    for (const [n, t] of g) {
      out.set(n, (await t.data()) as Float32Array);
      t.dispose();
    }
    return { loss: stats.loss, grads: out };
  }

  /** Loss and gradients on a rollout without stepping, on this thread (for gradient checks). */
  async lossAndGrads(
    rollout: SolverRollout,
    rewards: number[][],
  ): Promise<{ loss: number; grads: Map<string, Float32Array> }> {
    const { groups } = this.prepare(rollout.rows, rewards);
    if (groups.length === 0) throw new Error('no group with a gradient');
    const { grads: g, stats } = shardGrads(
      this.params,
      this.ref,
      this.setup,
      this.trainInput(groups, rollout.temperature),
    );
    const out = new Map<string, Float32Array>();
    for (const [n, t] of g) {
      out.set(n, (await t.data()) as Float32Array);
      t.dispose();
    }
    return { loss: stats.loss, grads: out };
  }

  /** The loss only (for finite differences). */
  async lossOnly(rollout: SolverRollout, rewards: number[][]): Promise<number> {
    return this.groupsLoss(this.prepare(rollout.rows, rewards).groups, rollout.temperature);
  }

  private async groupsLoss(groups: TrainRow[][], temperature: number): Promise<number> {
    if (groups.length === 0) throw new Error('no group with a gradient');
    const input = this.trainInput(groups, temperature);
    const ref = refLogProbs(this.ref, this.setup, input);
    const kept: { stats?: ShardStatTensors } = {};
    const l = tf.tidy(() =>
      shardObjective(this.params, this.setup, input, ref, (s) => {
        kept.stats = s;
      })(),
    );
    const v = (await l.data())[0]!;
    l.dispose();
    if (kept.stats) tf.dispose(Object.values(kept.stats));
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

  // ------------------------------------------------------------------ checkpoints (checkpoint.ts)
  private parts(): PolicyParts {
    return { params: this.params, ref: this.ref, opt: this.opt, replay: this.replay };
  }

  async save(dir: string): Promise<void> {
    await writeCheckpoint(dir, this.parts(), {
      config: this.cfg,
      model: this.mc,
      optimizer: { type: 'adamw', step: this.opt.step, ...this.schedule, moments: 'optimizer.safetensors' },
      rng: this.rng.state(),
      backend: this.backend,
    });
  }

  async load(dir: string): Promise<void> {
    const { rng, replay } = await loadCheckpoint(dir, this.parts(), this.mc);
    this.replay = replay;
    this.rng = createRng(rng);
    this.pool.resetRef();
  }

  /**
   * A checkpoint's model weights as this policy's starting point (solver.init), and as its KL
   * reference where it keeps one; the optimiser and the sampling stream stay as created.
   */
  async loadWeights(dir: string): Promise<void> {
    await loadModelWeights(dir, this.parts(), this.mc);
    this.pool.resetRef();
  }

  dispose(): void {
    this.pool.close();
    for (const v of this.params.values()) v.dispose();
    if (this.ref) for (const v of this.ref.values()) v.dispose();
    this.opt.dispose();
  }
}

/** Whether rewards[g][i] holds one reward for each row rows[g][i]. */
function oneRewardPerRow(rows: RolloutRow[][], rewards: number[][]): boolean {
  return rewards.length === rows.length && rewards.every((g, b) => g.length === rows[b]!.length);
}
