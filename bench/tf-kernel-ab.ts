// npx tsx bench/tf-kernel-ab.ts [Kernel,…] — what one native op of src/solver/accel/tf-ops.cc is worth
// on the tensorflow backend (not a test; needs `cogen setup tensorflow`). bench:train's reference
// step, with every native kernel and with the named ones (prefixes: CogenAttention also drops its
// gradient) unregistered, so that fused.ts hands out the composites for them: 8 rounds of 4 steps
// each way, interleaved in one process, so that a shared machine's drifting load weighs on both.
// One child per thread count (TensorFlow reads TF_NUM_INTRAOP_THREADS once). Prints a table and
// writes bench/results/tf-kernel-ab.json.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as tf from '@tensorflow/tfjs-core';
import { createRng } from '../core/rng.js';
import { initBackend } from '../src/solver/backend.js';
import { solverConfigSchema } from '../src/solver/index.js';
import { policyLoss } from '../src/solver/loss.js';
import { initWeights, makeParams, type ModelConfig } from '../src/solver/model.js';
import { AdamW } from '../src/solver/optim.js';
import { shapeLogp } from './shape-shard.js';

const off = (process.argv.slice(2).find((a) => !a.startsWith('--') && !/^\d+$/.test(a)) ?? 'CogenAttention').split(',');
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

if (process.argv.includes('--child')) {
  if ((await initBackend('tensorflow', { log: () => {} })) !== 'tensorflow') throw new Error('tensorflow did not start; run `cogen setup tensorflow`');
  const mc: ModelConfig = { vocabSize: 64, dModel: 64, layers: 2, heads: 4, mlpRatio: 4, maxPositions: 48 };
  const params = makeParams(initWeights(mc, createRng(2)));
  const rng = createRng(1);
  const N = 64, T = 48;
  const b = { N, T, tokens: new Int32Array(N * T).map(() => rng.int(0, 63)), targets: new Int32Array(N * T).map(() => rng.int(0, 63)), adv: new Float32Array(N).map(() => rng.next() * 2 - 1) };
  const opt = new AdamW(params, { ...solverConfigSchema.parse({}).optim, totalSteps: 5000 });
  const old = tf.tidy(() => shapeLogp(params, mc, b));
  const mask = tf.ones([N, T]) as tf.Tensor2D;
  const adv = tf.tensor1d(b.adv);
  const step = async (): Promise<number> => {
    const t0 = performance.now();
    const { value, grads } = tf.variableGrads(() => policyLoss({ logp: shapeLogp(params, mc, b), old, mask, adv }, { type: 'grpo', epsLow: 0.2, epsHigh: 0.2, beta: 0, maxLen: T }).loss, [...params.values()]);
    await value.data();
    const byName = new Map<string, tf.Tensor>();
    for (const [n, v] of params) byName.set(n, grads[v.name]!);
    const r = opt.apply(byName);
    await r.gradNorm.data();
    r.gradNorm.dispose();
    value.dispose();
    return performance.now() - t0;
  };
  const kernels = tf.getKernelsForBackend('tensorflow').filter((k) => off.some((o) => k.kernelName.startsWith(o)));
  if (kernels.length === 0) throw new Error(`no registered kernel starts with ${off.join(' or ')}`);
  const on: number[] = [], without: number[] = [];
  for (let i = 0; i < 3; i++) await step();
  for (let round = 0; round < 8; round++) {
    for (let i = 0; i < 4; i++) on.push(await step());
    for (const k of kernels) tf.unregisterKernel(k.kernelName, 'tensorflow');
    for (let i = 0; i < 4; i++) without.push(await step());
    for (const k of kernels) tf.registerKernel(k);
  }
  console.log(JSON.stringify({ kernels: kernels.map((k) => k.kernelName), withMs: median(on), withoutMs: median(without) }));
  process.exit(0);
}

const rows: Record<string, unknown>[] = [];
console.log(`| threads | native | without ${off.join(', ')} | native faster |\n| --- | --- | --- | --- |`);
for (const threads of [1, 2]) {
  const r = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--child', off.join(',')],
    { encoding: 'utf8', env: { ...process.env, TF_NUM_INTRAOP_THREADS: String(threads), TF_NUM_INTEROP_THREADS: String(threads), TF_CPP_MIN_LOG_LEVEL: '2' } });
  const last = r.stdout?.trim().split('\n').pop() ?? '';
  if (r.status !== 0 || !last.startsWith('{')) {
    console.log(`| ${threads} | n/a | n/a | ${(r.stderr || '').trim().split('\n').pop()} |`);
    continue;
  }
  const x = JSON.parse(last) as { kernels: string[]; withMs: number; withoutMs: number };
  rows.push({ threads, ...x });
  console.log(`| ${threads} | ${x.withMs.toFixed(1)} ms | ${x.withoutMs.toFixed(1)} ms | ${(x.withoutMs / x.withMs).toFixed(2)}x |`);
}
mkdirSync('bench/results', { recursive: true });
writeFileSync('bench/results/tf-kernel-ab.json', JSON.stringify({ date: new Date().toISOString(), off, rows }, null, 2) + '\n');
