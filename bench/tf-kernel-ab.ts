// npx tsx bench/tf-kernel-ab.ts [Kernel,…] — what one native op of src/solver/accel/tf-ops.cc is worth
// on the tensorflow backend (not a test; needs `cogen setup tensorflow`). bench:train's reference
// step, with every native kernel and with the named ones (prefixes: CogenAttention also drops its
// gradient) unregistered, so that fused.ts hands out the composites for them: 8 rounds of 4 steps
// each way, interleaved in one process, so that a shared machine's drifting load weighs on both.
// One child per thread count of the native ops (solver.threads; the composites that stand in for the
// named ones are TensorFlow's own ops, on one thread, the backend's default). Prints a table and
// writes bench/results/tf-kernel-ab.json.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as tf from '@tensorflow/tfjs-core';
import { AdamW, initBackend } from '../src/solver/testing.js';
import { grpoStep, shapeBatch, shapeModel, shapeOptim } from './shape.js';
import { shapeLogp } from './shape-shard.js';
import { median } from './stats.js';

const off = (process.argv.slice(2).find((a) => !a.startsWith('--') && !/^\d+$/.test(a)) ?? 'CogenAttention').split(',');

if (process.argv.includes('--child')) {
  const threads = Number(process.argv[process.argv.indexOf('--child') + 2]);
  if ((await initBackend('tensorflow', { threads, log: () => {} })) !== 'tensorflow')
    throw new Error('tensorflow did not start; run `cogen setup tensorflow`');
  const { mc, params } = shapeModel();
  const b = shapeBatch();
  const opt = new AdamW(params, shapeOptim);
  const old = tf.tidy(() => shapeLogp(params, mc, b));
  const mask = tf.ones([b.N, b.T]) as tf.Tensor2D;
  const adv = tf.tensor1d(b.adv);
  const step = async (): Promise<number> => {
    const t0 = performance.now();
    await grpoStep(params, opt, () => shapeLogp(params, mc, b), old, mask, adv);
    return performance.now() - t0;
  };
  const kernels = tf.getKernelsForBackend('tensorflow').filter((k) => off.some((o) => k.kernelName.startsWith(o)));
  if (kernels.length === 0) throw new Error(`no registered kernel starts with ${off.join(' or ')}`);
  const on: number[] = [],
    without: number[] = [];
  for (let i = 0; i < 3; i++) await step();
  for (let round = 0; round < 8; round++) {
    for (let i = 0; i < 4; i++) on.push(await step());
    for (const k of kernels) tf.unregisterKernel(k.kernelName, 'tensorflow');
    for (let i = 0; i < 4; i++) without.push(await step());
    for (const k of kernels) tf.registerKernel(k);
  }
  console.log(
    JSON.stringify({ kernels: kernels.map((k) => k.kernelName), withMs: median(on), withoutMs: median(without) }),
  );
  process.exit(0);
}

const rows: Record<string, unknown>[] = [];
console.log(`| threads | native | without ${off.join(', ')} | native faster |\n| --- | --- | --- | --- |`);
for (const threads of [1, 2]) {
  const r = spawnSync(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), '--child', off.join(','), String(threads)],
    { encoding: 'utf8', env: { ...process.env, TF_CPP_MIN_LOG_LEVEL: '2' } },
  );
  const last = r.stdout?.trim().split('\n').pop() ?? '';
  if (r.status !== 0 || !last.startsWith('{')) {
    console.log(`| ${threads} | n/a | n/a | ${(r.stderr || '').trim().split('\n').pop()} |`);
    continue;
  }
  const x = JSON.parse(last) as { kernels: string[]; withMs: number; withoutMs: number };
  rows.push({ threads, ...x });
  console.log(
    `| ${threads} | ${x.withMs.toFixed(1)} ms | ${x.withoutMs.toFixed(1)} ms | ${(x.withoutMs / x.withMs).toFixed(2)}x |`,
  );
}
mkdirSync('bench/results', { recursive: true });
writeFileSync(
  'bench/results/tf-kernel-ab.json',
  JSON.stringify({ date: new Date().toISOString(), off, rows }, null, 2) + '\n',
);
