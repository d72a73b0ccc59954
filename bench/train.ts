// npm run bench:train — training and sampling throughput of the solver (not a test).
//  1. The issue's shape (vocab 64, d 64, 2 layers, 4 heads, seq 48, batch 64), one GRPO step
//     (forward, backward, clip, AdamW): our fused model vs a naïve tfjs transformer (per-head
//     attention, transpose-flag matMuls as tfjs's own matMul gradient uses, mask rebuilt per step,
//     tfjs-wasm's own kernels rather than accel/wasm-kernels.ts's SIMD matMul, Sum, Identity, Slice and
//     SplitV), our step data-parallel over one thread per core (src/solver/accel/parallel.ts, as the
//     policy's updates run; bench/shape-shard.ts), and the same model/batch/loss in PyTorch CPU on
//     all cores and on one (bench/train_torch.py; torch from the shared venv of bench/torch-venv.ts,
//     made by --setup-torch, or TORCH_PYTHON). Each torch figure is compared with ours on as many
//     threads. The same step on the tensorflow backend (`cogen setup tensorflow`) with its native
//     fused ops on one thread and on as many as torch (solver.threads; TensorFlow's own ops on one,
//     the backend's default), and on one thread with the composites in their place (the fused ops'
//     kernels unregistered), in a child process per thread count, since loading tfjs-node puts
//     tfjs's gradients in place of ours for the whole process.
//  2. The default policy (solverConfigSchema.parse({})): B=8 prompts × G=8 answers, sampling
//     tokens/s and update tokens/s.
//  3. The tensorflow/PyTorch ratio in paired rounds (--rounds, default 5): tensorflow's step, then
//     torch's, back to back, per thread count; the median and range of the rounds' ratios.
//  4. Decoding at the shape (bench/decode.ts): the solver's decode path on tensorflow and wasm,
//     unconstrained and with the typed answer grammar, beside PyTorch's KV-cache decode of the same
//     model (bench/decode_torch.py), in as many rounds, each of interleaved calls (20, --quick 5);
//     tensorflow's composite step in one round more.
// Shape-step times are the median step of each measurement (torch's too), decoding times the median
// call. Prints a table and writes bench/results/train.json (with the load average at its start and
// end). Ratios within one run are what count.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as os from 'node:os';
import * as tf from '@tensorflow/tfjs-core';
import { createRng } from '../core/rng.js';
import {
  AdamW,
  initBackend,
  type ModelConfig,
  type Params,
  readArrays,
  setExplicitTranspose,
  setFastWasmKernels,
  ShardWorkers,
} from '../src/solver/testing.js';
import { createPolicy, solverConfigSchema } from '../src/solver/index.js';
import { grpoStep, SHAPE, shapeBatch, shapeModel, shapeOptim } from './shape.js';
import { decodeRounds } from './decode.js';
import { shapeLogp, shardGrads, type ShapeRows } from './shape-shard.js';
import { median } from './stats.js';
import { torchPython } from './torch-venv.js';

/** Threads of the data-parallel step: one per core, as torch's default, at most 4 (the policy's cap). */
const THREADS = Math.min(4, os.availableParallelism());
const quick = process.argv.includes('--quick');
// --only wasm|cpu|tensorflow|webgpu: one backend (development, and bench/gpu.sh for webgpu; the
// recorded run measures wasm, cpu and tensorflow); --only decode: the decoding rounds alone
const only = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : null;
const log = (l: string): void => console.log(l);

/** A naïve transformer as one would first write it in tfjs: per-head projections and attention. */
function naiveLogits(params: Params, mc: ModelConfig, b: ReturnType<typeof shapeBatch>): tf.Tensor2D {
  const P = (n: string): tf.Tensor => params.get(n)!;
  const { N, T } = b;
  const d = mc.dModel,
    dh = d / mc.heads;
  const ln = (x: tf.Tensor, g: string, bb: string): tf.Tensor => {
    const xc = tf.sub(x, tf.mean(x, -1, true));
    return tf.add(tf.mul(tf.mul(xc, tf.rsqrt(tf.add(tf.mean(tf.square(xc), -1, true), 1e-5))), P(g)), P(bb));
  };
  const oneHot = tf.cast(tf.oneHot(tf.tensor1d(b.tokens, 'int32'), mc.vocabSize), 'float32');
  let x = tf.add(
    tf.reshape(tf.matMul(oneHot as tf.Tensor2D, P('wte.weight') as tf.Tensor2D), [N, T, d]),
    P('wpe.weight'),
  );
  for (let i = 0; i < mc.layers; i++) {
    const pre = `h.${i}.`;
    const a = ln(x, pre + 'ln_1.weight', pre + 'ln_1.bias');
    const heads: tf.Tensor[] = [];
    const mask = tf.mul(tf.sub(1, tf.linalg.bandPart(tf.ones([T, T]), -1, 0)), -1e9);
    const W = P(pre + 'attn.c_attn.weight'),
      Bq = P(pre + 'attn.c_attn.bias');
    for (let hh = 0; hh < mc.heads; hh++) {
      const proj = (j: number): tf.Tensor =>
        tf.add(
          tf.matMul(
            tf.reshape(a, [N * T, d]) as tf.Tensor2D,
            tf.slice(W, [0, j * d + hh * dh], [d, dh]) as tf.Tensor2D,
          ),
          tf.slice(Bq, [j * d + hh * dh], [dh]),
        );
      const q = tf.reshape(proj(0), [N, T, dh]),
        k = tf.reshape(proj(1), [N, T, dh]),
        v = tf.reshape(proj(2), [N, T, dh]);
      const s = tf.add(tf.div(tf.matMul(q, k, false, true), Math.sqrt(dh)), mask);
      heads.push(tf.matMul(tf.softmax(s), v));
    }
    const y = tf.reshape(tf.concat(heads, 2), [N * T, d]) as tf.Tensor2D;
    x = tf.add(
      x,
      tf.reshape(tf.add(tf.matMul(y, P(pre + 'attn.c_proj.weight') as tf.Tensor2D), P(pre + 'attn.c_proj.bias')), [
        N,
        T,
        d,
      ]),
    );
    const m = tf.reshape(ln(x, pre + 'ln_2.weight', pre + 'ln_2.bias'), [N * T, d]) as tf.Tensor2D;
    const f = tf.add(tf.matMul(m, P(pre + 'mlp.c_fc.weight') as tf.Tensor2D), P(pre + 'mlp.c_fc.bias'));
    const g = tf.mul(
      tf.mul(f, 0.5),
      tf.add(1, tf.tanh(tf.mul(tf.add(f, tf.mul(tf.mul(tf.square(f), f), 0.044715)), Math.sqrt(2 / Math.PI)))),
    );
    x = tf.add(
      x,
      tf.reshape(
        tf.add(tf.matMul(g as tf.Tensor2D, P(pre + 'mlp.c_proj.weight') as tf.Tensor2D), P(pre + 'mlp.c_proj.bias')),
        [N, T, d],
      ),
    );
  }
  const hN = tf.reshape(ln(x, 'ln_f.weight', 'ln_f.bias'), [N * T, d]) as tf.Tensor2D;
  return tf.matMul(hN, P('wte.weight') as tf.Tensor2D, false, true);
}

/** The median of `steps` timed calls of one: on a shared machine a burst of load hits single steps. */
async function medianStepMs(one: () => Promise<void>, steps: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < steps; i++) {
    const t0 = performance.now();
    await one();
    times.push(performance.now() - t0);
  }
  return median(times);
}

async function shapeStepMs(variant: 'fused' | 'naive', steps: number): Promise<number> {
  const { mc, params } = shapeModel();
  const b = shapeBatch();
  const opt = new AdamW(params, shapeOptim);
  // naive: tfjs-wasm's own kernels and transpose flags; fused: whatever the backend set up
  const explicitWas = variant === 'naive' ? setExplicitTranspose(false) : null;
  if (variant === 'naive') setFastWasmKernels(false);
  const logp = (): tf.Tensor2D => {
    if (variant === 'fused') return shapeLogp(params, mc, b);
    const lsm = tf.logSoftmax(naiveLogits(params, mc, b));
    return tf.reshape(
      tf.sum(tf.mul(lsm, tf.cast(tf.oneHot(tf.tensor1d(b.targets, 'int32'), mc.vocabSize), 'float32')), 1),
      [b.N, b.T],
    ) as tf.Tensor2D;
  };
  const old = tf.tidy(logp);
  const mask = tf.ones([b.N, b.T]) as tf.Tensor2D;
  const adv = tf.tensor1d(b.adv);
  const one = (): Promise<void> => grpoStep(params, opt, logp, old, mask, adv);
  await one();
  const ms = await medianStepMs(one, steps);
  if (explicitWas !== null) setExplicitTranspose(explicitWas);
  setFastWasmKernels(true);
  old.dispose();
  mask.dispose();
  adv.dispose();
  opt.dispose();
  for (const v of params.values()) v.dispose();
  return ms;
}

/**
 * Our step data-parallel on `threads` threads (src/solver/accel/parallel.ts, as the policy's updates run):
 * the rows split in equal shards, this thread computing the first, shard workers the others.
 */
async function shapeStepParallelMs(threads: number, steps: number): Promise<number> {
  const { mc, params } = shapeModel();
  const b = shapeBatch();
  const opt = new AdamW(params, shapeOptim);
  const old = tf.tidy(() => shapeLogp(params, mc, b));
  const oldData = (await old.data()) as Float32Array;
  old.dispose();
  const norm = { rows: b.N, tokens: b.N * b.T };
  const shards: ShapeRows[] = Array.from({ length: threads }, (_, i) => {
    const from = Math.floor((i * b.N) / threads),
      to = Math.floor(((i + 1) * b.N) / threads);
    return {
      N: to - from,
      T: b.T,
      norm,
      tokens: b.tokens.slice(from * b.T, to * b.T),
      targets: b.targets.slice(from * b.T, to * b.T),
      adv: b.adv.slice(from, to),
      old: oldData.slice(from * b.T, to * b.T),
    };
  });
  const workers = await ShardWorkers.start(threads - 1, tf.getBackend(), new URL('./shape-shard.ts', import.meta.url), {
    mc,
  });
  const one = async (): Promise<void> => {
    const { grads } = await workers.grads(
      shards.slice(1),
      await readArrays(params),
      async () => undefined,
      () => shardGrads(params, null, { mc }, shards[0]!),
    );
    const r = opt.apply(grads);
    await r.gradNorm.data();
    r.gradNorm.dispose();
  };
  try {
    await one();
    return await medianStepMs(one, steps);
  } finally {
    await workers.close();
    opt.dispose();
    for (const v of params.values()) v.dispose();
  }
}

async function policyThroughput(steps: number) {
  const cfg = solverConfigSchema.parse({ backend: tf.getBackend() as 'wasm' });
  const p = await createPolicy(cfg, { seed: 1, totalSteps: 5000, log: () => {} });
  const rng = createRng(3);
  const prompts = Array.from({ length: 8 }, (_, i) => ({
    text: `D f=(a,b)=>a*${i}+b; f(${rng.int(0, 9)},${rng.int(0, 9)})=? L${i % 3}`.padEnd(40 + rng.int(0, 40), ' x'),
    kind: (i % 4 === 3 ? 'program' : 'literal') as 'literal',
  }));
  let sampleMs = 0,
    sampleTok = 0,
    updateMs = 0,
    trainTok = 0;
  for (let s = 0; s <= steps; s++) {
    let t0 = performance.now();
    const ro = await p.sample(prompts, 8);
    const dtS = performance.now() - t0;
    const rows = ro.rows.flat();
    const maxP = Math.max(...rows.map((r) => r.prompt.length));
    const maxA = Math.max(...rows.map((r) => r.answer.length));
    t0 = performance.now();
    await p.update(
      ro,
      ro.answers.map((g) => g.map((_, i) => i % 2)),
    );
    const dtU = performance.now() - t0;
    if (s === 0) continue; // warm-up
    sampleMs += dtS;
    updateMs += dtU;
    sampleTok += rows.reduce((a, r) => a + r.answer.length, 0);
    trainTok += rows.length * (maxP + 2 + maxA);
  }
  p.dispose();
  return {
    sampleTokensPerS: (sampleTok / sampleMs) * 1000,
    trainTokensPerS: (trainTok / updateMs) * 1000,
    updateMs: updateMs / steps,
    sampleMs: sampleMs / steps,
  };
}

type TorchResult = { stepMs: number; tokensPerS: number; torch: string; threads: number } | { error: string };
/** threads 0: torch's default (one per core). */
function torchStep(steps: number, threads = 0): TorchResult {
  const found = torchPython(process.argv.includes('--setup-torch'));
  if ('error' in found) return found;
  const py = found.python;
  const r = spawnSync(
    py,
    ['bench/train_torch.py', JSON.stringify({ ...SHAPE, steps, ...(threads ? { threads } : {}) })],
    { encoding: 'utf8', timeout: 600_000 },
  );
  if (r.status !== 0) return { error: `${py}: ${(r.stderr || r.error?.message || '').trim().split('\n').pop()}` };
  return JSON.parse(r.stdout.trim().split('\n').pop()!);
}

/** tensorflow with its native ops on `threads` threads, in a child process; null with the reason when it cannot run. */
type TfResult =
  | {
      threads: number;
      shapeStepMs: number;
      shapeTokensPerS: number;
      compositeStepMs?: number;
      parallelThreads?: number;
      parallelShapeStepMs?: number;
      policy?: Awaited<ReturnType<typeof policyThroughput>>;
      tf: string;
    }
  | { error: string };
function tensorflowStep(threads: number, withPolicy: boolean, stepOnly = false): TfResult {
  const r = spawnSync(
    process.execPath,
    [
      ...process.execArgv,
      fileURLToPath(import.meta.url),
      '--tf-child',
      String(threads),
      ...(withPolicy ? ['--policy'] : []),
      ...(stepOnly ? ['--step-only'] : []),
      ...(quick ? ['--quick'] : []),
    ],
    { encoding: 'utf8', timeout: 900_000, env: { ...process.env, TF_CPP_MIN_LOG_LEVEL: '2' } },
  );
  const last = r.stdout?.trim().split('\n').pop() ?? '';
  if (r.status !== 0 || !last.startsWith('{'))
    return { error: `tensorflow child: ${(r.stderr || r.error?.message || '').trim().split('\n').pop()}` };
  return JSON.parse(last) as TfResult;
}

/** Runs f with the native fused ops' kernels unregistered (null when they were not registered), then registers them again. */
async function withoutTensorflowOps(f: () => Promise<number>): Promise<number | null> {
  const kernels = tf.getKernelsForBackend('tensorflow').filter((k) => k.kernelName.startsWith('Cogen'));
  if (kernels.length === 0) return null;
  for (const k of kernels) tf.unregisterKernel(k.kernelName, 'tensorflow');
  try {
    return await f();
  } finally {
    for (const k of kernels) tf.registerKernel(k);
  }
}

if (process.argv.includes('--tf-child')) {
  const threads = Number(process.argv[process.argv.indexOf('--tf-child') + 1]);
  const used = await initBackend('tensorflow', { threads, log: (l) => console.error(l) });
  if (used !== 'tensorflow') throw new Error(`tensorflow did not start (got ${used}); run \`cogen setup tensorflow\``);
  const n = quick ? 3 : 10;
  const ms = await shapeStepMs('fused', n);
  // the same step with the composites in place of the native fused ops (accel/tf-ops.cc): without
  // their kernels registered, fused.ts hands out none
  const stepOnly = process.argv.includes('--step-only');
  // (on one thread: the composites are TensorFlow's own ops, which stay on one)
  const composite = stepOnly || threads > 1 ? null : await withoutTensorflowOps(() => shapeStepMs('fused', n));
  // one TensorFlow thread each on THREADS JS threads (shard workers, as on wasm)
  const par = !stepOnly && threads === 1 && THREADS > 1 ? await shapeStepParallelMs(THREADS, n) : undefined;
  const pol = process.argv.includes('--policy') ? await policyThroughput(quick ? 1 : 3) : undefined;
  const b = tf.backend() as unknown as { binding: { TF_Version: string } };
  console.log(
    JSON.stringify({
      threads,
      shapeStepMs: ms,
      shapeTokensPerS: (SHAPE.batch * SHAPE.seq * 1000) / ms,
      ...(composite !== null ? { compositeStepMs: composite } : {}),
      ...(par ? { parallelThreads: THREADS, parallelShapeStepMs: par } : {}),
      ...(pol ? { policy: pol } : {}),
      tf: b.binding.TF_Version,
    }),
  );
  process.exit(0);
}

const results: Record<string, unknown> = {
  date: new Date().toISOString(),
  cpus: os.cpus().length,
  node: process.version,
  shape: SHAPE,
  loadAtStart: os.loadavg(),
};
const rows: [string, string, string][] = [];
const fmt = (x: number): string => x.toFixed(0);
for (const backend of only === 'webgpu'
  ? (['webgpu'] as const)
  : (['wasm', 'cpu'] as const).filter((b) => !only || b === only)) {
  const used = await initBackend(backend, { log });
  const n = quick || used === 'cpu' ? 2 : 5;
  const fused = await shapeStepMs('fused', n);
  const naive = used === 'wasm' ? await shapeStepMs('naive', quick ? 1 : 2) : null;
  const parallel = used === 'wasm' && THREADS > 1 ? await shapeStepParallelMs(THREADS, n) : null;
  const pol = await policyThroughput(quick || used === 'cpu' ? 1 : 3);
  results[used] = {
    shapeStepMs: fused,
    shapeTokensPerS: (SHAPE.batch * SHAPE.seq * 1000) / fused,
    naiveStepMs: naive,
    ...(parallel !== null
      ? {
          parallelThreads: THREADS,
          parallelShapeStepMs: parallel,
          parallelShapeTokensPerS: (SHAPE.batch * SHAPE.seq * 1000) / parallel,
        }
      : {}),
    policy: pol,
  };
  rows.push([
    `${used}: shape step (ours, 1 thread)`,
    `${fmt(fused)} ms`,
    `${fmt((SHAPE.batch * SHAPE.seq * 1000) / fused)} tok/s`,
  ]);
  if (parallel !== null)
    rows.push([
      `${used}: shape step (ours, data-parallel, ${THREADS} threads)`,
      `${fmt(parallel)} ms`,
      `${fmt((SHAPE.batch * SHAPE.seq * 1000) / parallel)} tok/s`,
    ]);
  if (naive !== null)
    rows.push([`${used}: shape step (naive tfjs)`, `${fmt(naive)} ms`, `ours ${(naive / fused).toFixed(1)}x faster`]);
  rows.push([`${used}: policy update B=8 G=8`, `${fmt(pol.updateMs)} ms`, `${fmt(pol.trainTokensPerS)} train tok/s`]);
  rows.push([`${used}: policy sample B=8 G=8`, `${fmt(pol.sampleMs)} ms`, `${fmt(pol.sampleTokensPerS)} sample tok/s`]);
}
// tensorflow on one thread (the backend's default; the policy's throughput there too) and on
// THREADS, each in a child
const tfRuns = !only || only === 'tensorflow' ? [...new Set([1, THREADS])].map((t) => tensorflowStep(t, t === 1)) : [];
for (const r of tfRuns) {
  if ('error' in r) {
    rows.push(['tensorflow', 'n/a', r.error]);
    continue;
  }
  results[`tensorflow${r.threads}`] = r;
  const wasm = results.wasm as { shapeStepMs: number; parallelShapeStepMs?: number } | undefined;
  const w = r.threads === 1 ? wasm?.shapeStepMs : wasm?.parallelShapeStepMs;
  rows.push([
    `tensorflow ${r.tf} (${r.threads} thread${r.threads === 1 ? '' : 's'}): shape step`,
    `${fmt(r.shapeStepMs)} ms`,
    `${fmt(r.shapeTokensPerS)} tok/s${w ? `; wasm/tensorflow time ratio ${(w / r.shapeStepMs).toFixed(2)}` : ''}`,
  ]);
  if (r.compositeStepMs)
    rows.push([
      `tensorflow (${r.threads} thread${r.threads === 1 ? '' : 's'}), composites instead of the native fused ops: shape step`,
      `${fmt(r.compositeStepMs)} ms`,
      `native fused ops ${(r.compositeStepMs / r.shapeStepMs).toFixed(2)}x faster`,
    ]);
  if (r.parallelShapeStepMs)
    rows.push([
      `tensorflow (data-parallel, ${r.parallelThreads} threads × 1 TensorFlow thread): shape step`,
      `${fmt(r.parallelShapeStepMs)} ms`,
      `${fmt((SHAPE.batch * SHAPE.seq * 1000) / r.parallelShapeStepMs)} tok/s`,
    ]);
  if (r.policy) {
    rows.push([
      `tensorflow: policy update B=8 G=8`,
      `${fmt(r.policy.updateMs)} ms`,
      `${fmt(r.policy.trainTokensPerS)} train tok/s`,
    ]);
    rows.push([
      `tensorflow: policy sample B=8 G=8`,
      `${fmt(r.policy.sampleMs)} ms`,
      `${fmt(r.policy.sampleTokensPerS)} sample tok/s`,
    ]);
  }
}
// Torch on THREADS (one per core, at most 4, as our data-parallel step) and on one: tfjs-wasm runs
// on one thread (its threaded build needs blob: workers, which Node lacks), so our wasm step on
// THREADS is data-parallel; tensorflow's threads are TensorFlow's own.
const torchRuns = only ? [] : [torchStep(quick ? 3 : 8, THREADS), torchStep(quick ? 3 : 8, 1)];
results.torch = torchRuns[0] ?? { error: 'skipped (--only)' };
results.torch1 = torchRuns[1] ?? { error: 'skipped (--only)' };
if (only && only !== 'decode') rows.push(['torch CPU', 'n/a', 'skipped (--only)']);
for (const torch of torchRuns) {
  if ('stepMs' in torch) {
    // like for like: our step on as many threads as torch used (one, or the data-parallel step)
    const w = results.wasm as { shapeStepMs: number; parallelShapeStepMs?: number; parallelThreads?: number };
    const ours = torch.threads > 1 && w.parallelShapeStepMs !== undefined ? w.parallelShapeStepMs : w.shapeStepMs;
    const oursThreads = ours === w.shapeStepMs ? 1 : w.parallelThreads;
    const tfr = results[`tensorflow${torch.threads}`] as { shapeStepMs: number } | undefined;
    rows.push([
      `torch ${torch.torch} CPU (${torch.threads} thread${torch.threads === 1 ? '' : 's'}): shape step`,
      `${fmt(torch.stepMs)} ms`,
      `wasm (${oursThreads} thread${oursThreads === 1 ? '' : 's'})/torch time ratio ${(ours / torch.stepMs).toFixed(2)}${tfr ? `; tensorflow/torch ${(tfr.shapeStepMs / torch.stepMs).toFixed(2)}` : ''}`,
    ]);
  } else {
    rows.push(['torch CPU', 'n/a', torch.error]);
  }
}
// The tensorflow/PyTorch ratio again in ROUNDS paired rounds: each round measures the tensorflow
// step and then torch's on as many threads, back to back, so that the load of a shared machine,
// which drifts over minutes, weighs on both sides of each ratio alike.
const ROUNDS = process.argv.includes('--rounds')
  ? Number(process.argv[process.argv.indexOf('--rounds') + 1])
  : quick
    ? 1
    : 5;
if (!only && tfRuns.some((r) => !('error' in r)) && torchRuns.some((r) => 'stepMs' in r)) {
  const paired: Record<number, number[]> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const threads of [...new Set([1, THREADS])]) {
      const t = tensorflowStep(threads, false, true);
      const p = torchStep(quick ? 3 : 8, threads);
      if ('error' in t || 'error' in p) continue;
      (paired[threads] ??= []).push(t.shapeStepMs / p.stepMs);
    }
  }
  results.pairedTensorflowTorch = paired;
  for (const [threads, r] of Object.entries(paired)) {
    rows.push([
      `tensorflow/torch (${threads} thread${threads === '1' ? '' : 's'}), ${r.length} paired rounds`,
      '',
      `median ${median(r).toFixed(2)}, range ${Math.min(...r).toFixed(2)}-${Math.max(...r).toFixed(2)}`,
    ]);
  }
}
// 4. decoding, in as many paired rounds (bench/decode.ts); `--only decode` runs it alone
if (!only || only === 'decode') {
  const d = await decodeRounds(ROUNDS, quick ? 5 : 20);
  rows.push(...d.rows);
  results.decode = d.record;
}
results.loadAtEnd = os.loadavg();
console.log('\n| what | time | figure |\n| --- | --- | --- |');
for (const r of rows) console.log(`| ${r.join(' | ')} |`);
if (!only) {
  mkdirSync('bench/results', { recursive: true });
  writeFileSync('bench/results/train.json', JSON.stringify(results, null, 2) + '\n');
  console.log('\nwrote bench/results/train.json');
}
