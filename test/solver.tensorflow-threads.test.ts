// The tensorflow backend on two threads (the backend's default is one): the native ops
// (accel/tf-ops.cc) on two (solver.threads), and TensorFlow's own on two intra-op threads (the
// environment's override), which split matMuls and reductions at the default model's size. Two
// runs from one seed must still agree to the bit, and resume must stay exact, as on one thread
// (solver.policy.test.ts); the native ops must give the same bits as on one thread. TensorFlow
// reads its thread settings once, when tfjs-node loads: this file sets them first, and vitest runs
// each test file in a process of its own.
process.env.TF_NUM_INTRAOP_THREADS = '2';
process.env.TF_NUM_INTEROP_THREADS = '2';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect } from 'vitest';
import { createPolicy, solverConfigSchema } from '../src/solver/index.js';
import { policyWeights } from '../src/solver/testing.js';
import { itOn, named, useBackend } from './solver-backends.js';
import { tfOpsDigest } from './tf-ops-digest.js';

const loadedBefore = Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('tfjs-node'));
const prompts = [
  { text: 'f(x)=x+1 x=2 '.repeat(4), kind: 'literal' as const, shape: 'int' },
  { text: 'a much longer prompt than twelve chars '.repeat(3), kind: 'program' as const },
  { text: 'ok '.repeat(10), kind: 'literal' as const },
];
const rewardOf = (t: string): number => (t.length % 2 === 0 ? 1 : 0) * 0.7 + (t.includes('1') ? 0.3 : 0);
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('tensorflow on two threads', () => {
  itOn('tensorflow')(
    named('tensorflow', 'default-size updates are bit-identical run to run, and resume is exact'),
    async () => {
      expect(loadedBefore, 'tfjs-node was loaded before this file set its threads').toBe(false);
      await useBackend('tensorflow');
      const cfg = solverConfigSchema.parse({ backend: 'tensorflow', threads: 2, loss: { type: 'grpo', beta: 0.05 } });
      const steps = async (p: Awaited<ReturnType<typeof createPolicy>>, n: number) => {
        for (let s = 0; s < n; s++) {
          const ro = await p.sample(prompts, 8);
          await p.update(
            ro,
            ro.answers.map((g) => g.map(rewardOf)),
          );
        }
      };
      const a = await createPolicy(cfg, { seed: 7, totalSteps: 5000, log: () => {} });
      await steps(a, 2);
      const b = await createPolicy(cfg, { seed: 7, totalSteps: 5000, log: () => {} });
      await steps(b, 1);
      const dir = mkdtempSync(path.join(tmpdir(), 'cogen-tf-threads-'));
      dirs.push(dir);
      await b.save(dir);
      b.dispose();
      const c = await createPolicy(cfg, { seed: 999, totalSteps: 5000, log: () => {} });
      await c.load(dir);
      await steps(c, 1);
      const d = await createPolicy(cfg, { seed: 7, totalSteps: 5000, log: () => {} });
      await steps(d, 2);
      const wa = await policyWeights(a);
      for (const other of [c, d]) {
        const w = await policyWeights(other);
        for (const [name, x] of wa) expect(Array.from(w.get(name)!.data), name).toEqual(Array.from(x.data));
      }
      for (const p of [a, c, d]) p.dispose();
    },
    120_000,
  );

  itOn('tensorflow')(
    named('tensorflow', 'the native ops give the same bits on two threads as on one (forward and gradients)'),
    async () => {
      const two = await tfOpsDigest(2);
      const child = spawnSync(
        process.execPath,
        ['--import', 'tsx', path.join(import.meta.dirname, 'tf-ops-digest.ts'), '1'],
        {
          encoding: 'utf8',
          env: { ...process.env, TF_NUM_INTRAOP_THREADS: '1', TF_NUM_INTEROP_THREADS: '1', TF_CPP_MIN_LOG_LEVEL: '2' },
          timeout: 120_000,
        },
      );
      expect(child.status, child.stderr).toBe(0);
      expect(two).toMatch(/^[0-9a-f]{64}$/);
      expect(child.stdout.trim()).toBe(two);
    },
    120_000,
  );
});
