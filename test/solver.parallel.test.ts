// Data parallelism (src/solver/accel/parallel.ts): shard losses normalised by the whole batch sum to its
// loss for every loss type; updates and decoding split over a shard worker give the weights, stats
// and answers of one thread (weights to float tolerance); a worker that cannot start or fails says so.
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as tf from '@tensorflow/tfjs-core';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  initBackend,
  LOSS_TYPES,
  type LossType,
  optimizerStep,
  policyLoss,
  policyWeights,
  setVariable,
  ShardWorkers,
} from '../src/solver/testing.js';
import { createPolicy } from '../src/solver/index.js';

describe('loss normalised by the whole batch', () => {
  beforeAll(async () => {
    await initBackend('cpu', { log: () => {} });
  });
  it('sums over shards to the whole batch loss, for every loss type and split', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...LOSS_TYPES),
        fc.integer({ min: 2, max: 6 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 0, max: 1000 }),
        (type: LossType, N, A, seed) => {
          let s = seed;
          const rnd = (): number => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
          const split = 1 + Math.floor(rnd() * (N - 1));
          const logp = Array.from({ length: N * A }, () => -rnd() * 3);
          const old = logp.map((x) => x + (rnd() - 0.5) * 0.8);
          const ref = logp.map((x) => x + (rnd() - 0.5) * 0.5);
          // every row has at least one token, as every answer ends with <eos>
          const mask = Array.from({ length: N * A }, (_, i): number => (i % A === 0 || rnd() < 0.6 ? 1 : 0));
          const adv = Array.from({ length: N }, () => rnd() * 2 - 1);
          const opts = { type, epsLow: 0.2, epsHigh: 0.28, beta: 0.05, maxLen: A };
          const loss = (from: number, to: number, norm?: { rows: number; tokens: number }): number =>
            tf.tidy(() => {
              const t = (xs: number[]): tf.Tensor2D => tf.tensor2d(xs.slice(from * A, to * A), [to - from, A]);
              const out = policyLoss(
                { logp: t(logp), old: t(old), ref: t(ref), mask: t(mask), adv: tf.tensor1d(adv.slice(from, to)) },
                { ...opts, norm },
              );
              return out.loss.dataSync()[0]! + 0 * out.kl.dataSync()[0]!;
            });
          const norm = { rows: N, tokens: mask.reduce((a, b) => a + b, 0) };
          expect(loss(0, split, norm) + loss(split, N, norm)).toBeCloseTo(loss(0, N), 5);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('data-parallel policy update', () => {
  const prompts = Array.from({ length: 6 }, (_, i) => ({
    text: `D:a=>a*${i}+1@${i}`,
    kind: 'literal' as const,
    shape: 'int',
  }));
  const many = Array.from({ length: 160 }, (_, i) => ({
    text: `D:a=>a-${i % 10}@${i}`,
    kind: 'literal' as const,
    shape: i % 3 ? 'int' : 'bool',
  }));
  async function run(workers: number, loss: Record<string, unknown>) {
    const lines: string[] = [];
    const p = await createPolicy(
      { backend: 'wasm', workers, model: { dModel: 32, layers: 1, heads: 2 }, loss } as never,
      { seed: 5, totalSteps: 5000, log: (l) => lines.push(l) },
    );
    try {
      // decoding first, while both policies hold the same initial weights bit for bit; enough
      // answers (6 × 32, 160 greedy) that the split decodes (PARALLEL_DECODE_ROWS in index.ts)
      const answers = [...(await p.sample(prompts, 32)).answers.flat(), ...(await p.greedy(many))];
      const stats = [];
      for (let s = 0; s < 2; s++) {
        const rollout = await p.sample(prompts, 4);
        stats.push(
          await p.update(
            rollout,
            rollout.answers.map((g, i) => g.map((_, j) => ((i + j + s) % 3 === 0 ? 1 : 0))),
          ),
        );
      }
      const weights = [...(await policyWeights(p)).values()].flatMap((w) => Array.from(w.data));
      // the split really ran (a worker that failed to start would leave one thread)
      expect(lines.some((l) => l.includes(`data-parallel updates and decoding on ${workers} threads`))).toBe(
        workers > 1,
      );
      return { stats, weights, answers };
    } finally {
      p.dispose();
    }
  }
  for (const loss of [
    { type: 'grpo', beta: 0.05, entropy: 0.01 },
    { type: 'dapo' },
    { type: 'gspo', mu: 2 },
    { type: 'dr_grpo' },
  ]) {
    it(`decodes and updates as one thread does: ${JSON.stringify(loss)}`, async () => {
      const one = await run(1, loss);
      const two = await run(2, loss);
      let maxDiff = 0;
      one.weights.forEach((w, i) => {
        maxDiff = Math.max(maxDiff, Math.abs(w - two.weights[i]!));
      });
      expect(maxDiff).toBeLessThan(1e-5);
      // each prompt samples from its own stream: the same answers wherever it was decoded
      expect(two.answers.length).toBe(6 * 32 + 160);
      expect(two.answers).toEqual(one.answers);
      for (const [a, b] of one.stats.map((s, i) => [s, two.stats[i]!] as const)) {
        expect(b.groups).toBe(a.groups);
        expect(b.tokens).toBe(a.tokens);
        for (const k of ['loss', 'clipFraction', 'kl', 'entropy', 'gradNorm'] as const)
          expect(b[k]).toBeCloseTo(a[k]!, 5);
      }
    });
  }
});

describe('weights sent to a worker', () => {
  it('overwrite its variables without leaving a tensor behind (one per request would leak the model)', async () => {
    await initBackend('cpu', { log: () => {} });
    const v = tf.variable(tf.zeros([64]));
    const before = tf.memory().numTensors;
    for (let i = 0; i < 20; i++) setVariable(v, new Float32Array(64).fill(i));
    expect(tf.memory().numTensors).toBe(before);
    expect(Array.from(v.dataSync()).every((x) => x === 19)).toBe(true);
    v.dispose();
  });
});

describe('a shard worker that dies during a run', () => {
  it('is dropped with a log line, and the run goes on on one thread without losing the step', async () => {
    const lines: string[] = [];
    const p = await createPolicy({ backend: 'wasm', workers: 2, model: { dModel: 32, layers: 1, heads: 2 } } as never, {
      seed: 5,
      totalSteps: 5000,
      log: (l) => lines.push(l),
    });
    const prompts = Array.from({ length: 4 }, (_, i) => ({
      text: `D:a=>a+${i}@${i}`,
      kind: 'literal' as const,
      shape: 'int',
    }));
    const step = async () => {
      const rollout = await p.sample(prompts, 4);
      return p.update(
        rollout,
        rollout.answers.map((g, i) => g.map((_, j) => ((i + j) % 2 === 0 ? 1 : 0))),
      );
    };
    try {
      await step();
      expect(lines.some((l) => l.includes('data-parallel updates and decoding on 2 threads'))).toBe(true);
      // what a crash looks like from here: the worker thread is gone
      const workers = (
        p as unknown as { state: { pool: { workers: { slots: { worker: { terminate(): Promise<number> } }[] } } } }
      ).state.pool.workers;
      await workers.slots[0]!.worker.terminate();
      const before = optimizerStep(p);
      const stats = await step();
      expect(optimizerStep(p)).toBe(before + 1);
      expect(stats.groups).toBe(4);
      expect(Number.isFinite(stats.loss)).toBe(true);
      expect(lines.some((l) => /shard worker exited .*go on on one thread/.test(l))).toBe(true);
      // and later steps stay on this thread
      await step();
      expect(optimizerStep(p)).toBe(before + 2);
    } finally {
      p.dispose();
    }
  });
});

describe('shard workers', () => {
  it('refuse to start with a module that is not there, naming the failure', async () => {
    await expect(ShardWorkers.start(1, 'cpu', new URL('file:///nonexistent/shard.ts'), {})).rejects.toThrow(
      /shard worker/,
    );
  });
  it('report a shard that throws as a failed request', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cogen-shard-'));
    const file = join(dir, 'bad-shard.mjs');
    writeFileSync(
      file,
      `export const shardParamShapes = () => [['w', [2]]];\nexport function shardGrads() { throw new Error('shard exploded'); }\n`,
    );
    const workers = await ShardWorkers.start(1, 'cpu', pathToFileURL(file), {});
    try {
      await initBackend('cpu', { log: () => {} });
      const local = () => ({ grads: new Map([['w', tf.zeros([2])]]), stats: {} });
      await expect(workers.grads([{}], { w: new Float32Array(2) }, async () => undefined, local)).rejects.toThrow(
        /shard worker: shard exploded/,
      );
    } finally {
      await workers.close();
    }
  });
});
