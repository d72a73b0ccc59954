// A policy's GRPO-family update (docs/DESIGN.md, "Solver and the GRPO family"; src/solver/README.md):
// the rewards as advantages, the groups that carry a gradient, their gradients on this thread or
// over the shard workers (train-step.ts, accel/parallel.ts), and the μ inner iterations of AdamW.
// Beside a rollout's groups, one step may train on environment episodes (episodes.ts turnRows) and
// on self-play's proposer rows (choices.ts): each a batch of its own, whose losses add.
import * as tf from '@tensorflow/tfjs-core';
import './gradients.js';
import { isZeroVariance } from '../../core/rules.js';
import { readArrays } from './accel/index.js';
import { choiceTrainRows, type ChoiceRow } from './choices.js';
import { turnRows, type EpisodeRows } from './episodes.js';
import { advantages, overlongPenalty } from './loss.js';
import { learningRate } from './optim.js';
import type { PolicyState } from './state.js';
import {
  addShard,
  batchNorm,
  buildBatch,
  logProbs,
  memoryChunks,
  shardGrads,
  type ShardGrads,
  type ShardInput,
  type ShardStats,
  type TrainRow,
} from './train-step.js';
import type { RolloutRow, SolverRollout, TrainStats, UpdateAlso } from './types.js';

/** One update on the rollout's groups, and on `also`'s rows in the same optimiser step. */
export async function update(
  s: PolicyState,
  rollout: SolverRollout,
  rewards: number[][],
  also: UpdateAlso = {},
): Promise<TrainStats> {
  const kept = await withKeptAnswers(s, rollout, rewards);
  const prep = prepare(s, kept.rows, kept.rewards);
  // episodes' turn rows are groups of one, the rollout's are groups of G: two batches, whose losses add
  const parts = also.episodes?.length
    ? [prep.groups, turnRows(also.episodes, s.cfg.loss.scale, s.cfg.loss.dynamicSampling)]
    : [prep.groups];
  if (also.proposals?.length)
    return jointUpdate(s, parts, prep.meanReward, rollout.temperature, also.proposals, also.proposalWeight ?? 1);
  return applyGroups(s, parts, rollout.temperature, prep.meanReward);
}

/**
 * One multi-turn GRPO update: groups[g] are the episodes of one environment, each with its turns'
 * rows and its final reward (episodes.ts turnRows); the loss covers the agent's tokens only.
 */
export async function updateEpisodes(
  s: PolicyState,
  groups: EpisodeRows[][],
  temperature: number,
): Promise<TrainStats> {
  const lc = s.cfg.loss;
  const rewards = groups.flat().map((e) => e.reward);
  const meanReward = rewards.reduce((a, b) => a + b, 0) / Math.max(1, rewards.length);
  return applyGroups(s, [turnRows(groups, lc.scale, lc.dynamicSampling)], temperature, meanReward);
}

/**
 * The groups that carry a gradient, each row with its advantage (none when dynamic sampling drops
 * every group), and the batch's mean raw reward.
 */
export function prepare(
  s: PolicyState,
  rows: RolloutRow[][],
  rewards: number[][],
): { meanReward: number; groups: TrainRow[][] } {
  if (!oneRewardPerRow(rows, rewards))
    throw new Error(`update(): rewards must be [${rows.length}][${rows[0]?.length ?? 0}]`);
  const lc = s.cfg.loss;
  const maxA = s.cfg.model.maxAnswerLen;
  const overlong = lc.overlong.enabled ?? lc.type === 'dapo';
  const shaped = rewards.map((g, b) =>
    g.map((r, i) =>
      overlong ? r + overlongPenalty(rows[b]![i]!.answer.length - 1, maxA, lc.overlong.cache, lc.overlong.penalty) : r,
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
export function trainInput(
  s: PolicyState,
  groups: TrainRow[][],
  temperature: number,
  supervised = false,
): Omit<ShardInput, 'norm'> {
  return {
    batch: buildBatch(groups, s.cfg.model.maxPromptLen),
    temperature,
    ...(supervised ? { supervised } : {}),
  };
}

/** Each row's answer log-probs under the current weights, at `temperature`, grouped as the rows. */
export async function currentLogProbs(
  s: PolicyState,
  rows: RolloutRow[][],
  temperature: number,
): Promise<Float32Array[][]> {
  const b = buildBatch(
    rows.map((g) => g.map((r) => ({ ...r, adv: 0 }))),
    s.cfg.model.maxPromptLen,
  );
  const lp = tf.tidy(() => logProbs(s.params, s.mc, b, temperature).logp);
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

/**
 * Self-imitation (self-imitation.ts), update's first step: the rows and rewards with kept answers in;
 * a replaced row's old log-probs are the current policy's. The rollout is left as it is.
 */
export async function withKeptAnswers(
  s: PolicyState,
  rollout: SolverRollout,
  rewards: number[][],
): Promise<{ rows: RolloutRow[][]; rewards: number[][] }> {
  const rows = rollout.rows;
  // a malformed rewards array is prepare()'s to report
  if (!s.replay || !oneRewardPerRow(rows, rewards)) return { rows, rewards };
  const out = s.replay.apply(rows, rewards);
  if (out.replaced.length > 0) {
    // the first row of each of several groups: a batch of groups of one
    const lps = await currentLogProbs(
      s,
      out.replaced.map((b) => [out.rows[b]![0]!]),
      rollout.temperature,
    );
    out.replaced.forEach((b, r) => {
      out.rows[b]![0]!.oldLogp = lps[r]![0]!;
    });
  }
  return { rows: out.rows, rewards: out.rewards };
}

/**
 * Gradients and stats of one inner iteration: on this thread alone, or split by group over the
 * shard workers when there are any and at least two groups to split.
 */
export async function iterationGrads(
  s: PolicyState,
  groups: TrainRow[][],
  temperature: number,
  supervised = false,
): Promise<ShardGrads> {
  const chunks = memoryChunks(groups, s.cfg.model, s.batchFloats);
  if (chunks.length > 1) {
    // one after another, each normalised by the whole batch (as the pool's shards are): the sums are the batch's
    const norm = batchNorm(groups);
    return chunks.reduce<ShardGrads | null>(
      (sum, chunk) =>
        addShard(shardGrads(s.params, s.ref, s.setup, { ...trainInput(s, chunk, temperature, supervised), norm }), sum),
      null,
    )!;
  }
  if (groups.length >= 2) {
    const out = await s.pool.run(async (workers) => {
      // contiguous runs of whole groups, as even as the group count allows; each normalised by the whole batch
      const shards = Math.min(workers.size + 1, groups.length);
      const norm = batchNorm(groups);
      const inputs: ShardInput[] = Array.from({ length: shards }, (_, i) => ({
        ...trainInput(
          s,
          groups.slice(Math.floor((i * groups.length) / shards), Math.floor(((i + 1) * groups.length) / shards)),
          temperature,
          supervised,
        ),
        norm,
      }));
      const ref = s.ref;
      return workers.grads(
        inputs.slice(1),
        await readArrays(s.params),
        async () => (ref ? readArrays(ref) : undefined),
        () => shardGrads(s.params, ref, s.setup, inputs[0]!),
      );
    });
    if (out) return out;
  }
  return shardGrads(s.params, s.ref, s.setup, trainInput(s, groups, temperature, supervised));
}

/**
 * One iteration's gradients over `parts`, summed: each part is a batch of groups of one size
 * (buildBatch's form), whose loss is reduced over its own rows. Null when every part is empty.
 */
async function partsGrads(s: PolicyState, parts: TrainRow[][][], temperature: number): Promise<ShardGrads | null> {
  let out: ShardGrads | null = null;
  for (const groups of parts) {
    if (groups.length === 0) continue;
    const g = await iterationGrads(s, groups, temperature);
    out = out ? addShard(out, g) : g;
  }
  return out;
}

/** The μ inner iterations of an update on parts (partsGrads) of groups of rows with their advantages. */
async function applyGroups(
  s: PolicyState,
  parts: TrainRow[][][],
  temperature: number,
  meanReward: number,
): Promise<TrainStats> {
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
      lr: learningRate(s.opt.step, s.schedule),
      reward: meanReward,
    };
  }
  const mu = s.cfg.loss.mu;
  // the stats' mean over the μ inner iterations
  const mean: ShardStats = { loss: 0, clipFraction: 0, kl: 0, entropy: 0 };
  let lr = 0;
  let gradNorm = 0;
  for (let it = 0; it < mu; it++) {
    const { grads, stats } = (await partsGrads(s, parts, temperature))!;
    const r = s.opt.apply(grads);
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

/**
 * One step on the solver role's groups (if any) and the proposer role's rows (groups of one: each
 * has its own prompt) together: each role's loss is reduced over its own rows, and they add.
 */
async function jointUpdate(
  s: PolicyState,
  parts: TrainRow[][][],
  meanReward: number,
  temperature: number,
  proposals: readonly ChoiceRow[],
  weight: number,
): Promise<TrainStats> {
  const groups = parts.flat();
  const rows = groups.flat();
  const extra = choiceTrainRows(proposals, s.cfg.model.maxPromptLen).map((r) => [{ ...r, adv: r.adv * weight }]);
  const mu = s.cfg.loss.mu;
  const mean: ShardStats = { loss: 0, clipFraction: 0, kl: 0, entropy: 0 };
  let lr = 0;
  let gradNorm = 0;
  for (let it = 0; it < mu; it++) {
    const solve = await partsGrads(s, parts, temperature);
    const { grads, stats } = addShard(shardGrads(s.params, s.ref, s.setup, trainInput(s, extra, temperature)), solve);
    const r = s.opt.apply(grads);
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

/** Whether rewards[g][i] holds one reward for each row rows[g][i]. */
function oneRewardPerRow(rows: RolloutRow[][], rewards: number[][]): boolean {
  return rewards.length === rows.length && rewards.every((g, b) => g.length === rows[b]!.length);
}
