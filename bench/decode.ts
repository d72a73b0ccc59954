// Decoding throughput at bench/shape.ts's shape, for bench:train (not a test): the solver's own
// decode path (src/solver/decode.ts: prefill, then one KV-cache step per answer token, each token
// picked in JS) on one backend, in a child process (`--serve <backend>`), and beside it
// bench/decode_torch.py, a PyTorch KV-cache decode of the same model. A round starts the peers,
// then times their calls one after another, interleaved (bench/decode-peer.ts).
//
// The work, the same on both sides: B = 8 prompts of 31 tokens after <bos>, G = 8 answers each
// (64 rows, the shape's batch), 16 answer positions (maxAnswerLen 15 and <eos>: 1 + 31 + 16 = 48
// positions, the shape's seq), temperature 1, no top-k/top-p, the prompt run once per prompt and
// shared by its G rows. Two grammars on our side:
//   - free: every token of the vocabulary allowed at every position (<eos> too), so the figure is
//     the model's and the sampler's, as PyTorch's is; a row that samples <eos> is done, the others
//     go on (at the shape's random weights no step ends them all, so every call runs 16 steps);
//   - typed: the answer grammar of an int (answer-grammar.ts, 'int': digits and '-', all inside the
//     shape's 64-token vocabulary), masks built by the grammar as the policy's are.
// Tokens/s counts rows × positions sampled, prefill included (PyTorch's likewise).
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import * as tf from '@tensorflow/tfjs-core';
import { createRng } from '../core/rng.js';
import {
  decodeMasked,
  type DecodeOptions,
  type DecodePrompt,
  decodeRows,
  FUSED,
  initBackend,
} from '../src/solver/testing.js';
import { Peer } from './decode-peer.js';
import { SHAPE, shapeModel } from './shape.js';
import { median } from './stats.js';
import { torchPython } from './torch-venv.js';

export const DECODE = { prompts: 8, group: 8, promptLen: 31, answerLen: 15 };
export type DecodeGrammar = 'free' | 'typed';
/** What a round times: our decode on a backend with one grammar, or PyTorch's (no grammar). */
type Series =
  | 'tensorflow free'
  | 'tensorflow typed'
  | 'wasm free'
  | 'wasm typed'
  | 'torch free'
  | 'composite free'
  | 'composite typed';
const MAIN: Series[] = ['tensorflow free', 'tensorflow typed', 'torch free', 'wasm free', 'wasm typed'];

function decodePrompts(vocab: number): DecodePrompt[] {
  const rng = createRng(4);
  // ids past the four specials (tokenizer.ts), so no prompt holds a <bos>, <sep> or <eos>
  return Array.from({ length: DECODE.prompts }, (_, b) => ({
    ids: Array.from({ length: DECODE.promptLen }, () => rng.int(4, vocab - 1)),
    grammar: 'int',
    seed: `bench/${b}`,
  }));
}

/** One decode call of the work in either grammar on the current backend; returns the steps it ran. */
function decoder(): (grammar: DecodeGrammar) => Promise<number> {
  const { mc, params } = shapeModel();
  const V = mc.vocabSize;
  const o: DecodeOptions = {
    maxPromptLen: DECODE.promptLen,
    maxAnswerLen: DECODE.answerLen,
    sampling: { temperature: 1, topK: 0, topP: 1 },
  };
  const prompts = decodePrompts(V);
  const all = new Uint8Array(V).fill(1);
  const free = { allowed: () => all, next: () => {} };
  return async (grammar) => {
    const rows =
      grammar === 'free'
        ? await decodeMasked(params, mc, o, prompts, DECODE.group, false, () => free)
        : (await decodeRows(params, mc, o, prompts, DECODE.group, false)).flat();
    // the typed grammar's tokens must lie inside the shape's vocabulary (pick() reads V logits)
    if (grammar === 'typed' && rows.some((r) => r.allowed.some((a) => a.subarray(V).some((x) => x))))
      throw new Error("the int grammar allowed a token outside the shape's vocabulary");
    return Math.max(...rows.map((r) => r.answer.length));
  };
}

/** The peer that times `series`' calls: a Node child on the backend, or PyTorch. */
function startPeer(who: 'tensorflow' | 'wasm' | 'torch' | 'composite'): Peer | { error: string } {
  if (who === 'torch') {
    const py = torchPython();
    if ('error' in py) return py;
    const cfg = {
      vocab: SHAPE.vocab,
      d: SHAPE.d,
      layers: SHAPE.layers,
      heads: SHAPE.heads,
      positions: SHAPE.seq,
      ...DECODE,
      calls: 0,
      threads: 1,
      serve: true,
    };
    return new Peer('torch', py.python, [
      fileURLToPath(new URL('./decode_torch.py', import.meta.url)),
      JSON.stringify(cfg),
    ]);
  }
  const backend = who === 'composite' ? 'tensorflow' : who;
  return new Peer(
    who,
    process.execPath,
    [
      ...process.execArgv,
      fileURLToPath(import.meta.url),
      '--serve',
      backend,
      ...(who === 'composite' ? ['--composite'] : []),
    ],
    { ...process.env, TF_CPP_MIN_LOG_LEVEL: '2' },
  );
}

/** One round: each series' call times (ms) and steps per call, or why a peer gave none. */
interface Round {
  ms: Partial<Record<Series, number[]>>;
  steps: Partial<Record<Series, number>>;
  peers: Record<string, unknown>;
}

/**
 * Starts the series' peers, warms them (two calls of each grammar), then `calls` times calls each
 * series once, in turn, the order reversed every other time.
 */
async function round(index: number, calls: number, series: Series[]): Promise<Round> {
  const out: Round = { ms: {}, steps: {}, peers: {} };
  const peers = new Map<string, Peer>();
  for (const who of new Set(series.map((s) => s.split(' ')[0]!))) {
    const p = startPeer(who as 'tensorflow');
    if ('error' in p) {
      out.peers[who] = p;
      continue;
    }
    try {
      out.peers[who] = await p.next<Record<string, unknown>>();
      peers.set(who, p);
    } catch (e) {
      out.peers[who] = { error: (e as Error).message };
    }
  }
  const live = series.filter((s) => peers.has(s.split(' ')[0]!));
  try {
    for (let k = 0; k < calls; k++) {
      for (const s of (index + k) % 2 ? [...live].reverse() : live) {
        const [who, grammar] = s.split(' ') as [string, DecodeGrammar];
        const r = await peers.get(who)!.ask<{ ms: number; steps?: number }>(grammar);
        (out.ms[s] ??= []).push(r.ms);
        out.steps[s] = r.steps ?? DECODE.answerLen + 1;
      }
    }
  } finally {
    for (const p of peers.values()) p.close();
  }
  return out;
}

const range = (xs: number[], digits: number): string =>
  `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}-${Math.max(...xs).toFixed(digits)})`;
const tokensPerS = (ms: number, steps: number): number => (DECODE.prompts * DECODE.group * steps * 1000) / ms;

/**
 * bench:train's decoding figures: `rounds` rounds of `calls` interleaved calls each (tensorflow
 * free and typed, PyTorch, wasm free and typed), then one round of tensorflow with model.ts's
 * composite step in place of the native one. One thread each: tensorflow's default, tfjs-wasm's
 * only, torch.set_num_threads(1). Per round, each series' median and best call, and the ratios of
 * its paired calls (each call over the other side's call beside it; their median) and of its best
 * calls. Returns the table's rows and the JSON's record.
 */
export async function decodeRounds(
  rounds: number,
  calls: number,
): Promise<{ rows: [string, string, string][]; record: Record<string, unknown> }> {
  const all: Round[] = [];
  for (let i = 0; i < rounds; i++) all.push(await round(i, calls, MAIN));
  const composite = await round(0, Math.max(3, Math.floor(calls / 4)), ['composite free', 'composite typed']);
  const rows: [string, string, string][] = [];
  const what = `${DECODE.prompts} prompts × ${DECODE.group} answers, ${DECODE.promptLen + 1} + ${DECODE.answerLen + 1} positions, 1 thread`;
  const label: Record<Series, string> = {
    'tensorflow free': 'unconstrained: tensorflow',
    'wasm free': 'unconstrained: wasm',
    'torch free': 'PyTorch KV-cache, no grammar',
    'tensorflow typed': 'typed int grammar: tensorflow',
    'wasm typed': 'typed int grammar: wasm',
    'composite free': "unconstrained: tensorflow with model.ts's composite step",
    'composite typed': "typed int grammar: tensorflow with model.ts's composite step",
  };
  const figures: Partial<Record<Series, { medianMs: number[]; bestMs: number[]; tokensPerS: number[] }>> = {};
  for (const s of [...MAIN, 'composite free', 'composite typed'] as Series[]) {
    const rs = (s.startsWith('composite') ? [composite] : all).filter((r) => r.ms[s]?.length);
    if (!rs.length) continue;
    const f = {
      medianMs: rs.map((r) => median(r.ms[s]!)),
      bestMs: rs.map((r) => Math.min(...r.ms[s]!)),
      tokensPerS: rs.map((r) => tokensPerS(median(r.ms[s]!), r.steps[s]!)),
    };
    figures[s] = f;
    rows.push([
      `decode (${what}), ${label[s]}`,
      `${range(f.medianMs, 1)} ms a call (best ${range(f.bestMs, 1)})`,
      `${range(f.tokensPerS, 0)} tok/s`,
    ]);
  }
  for (const r of [...all, composite])
    for (const [who, p] of Object.entries(r.peers))
      if (p && typeof p === 'object' && 'error' in p) rows.push([`decode, ${who}`, 'n/a', String(p.error)]);
  const pairs: [string, Series, Series, string][] = [
    [
      'tensorflowTorchFree',
      'tensorflow free',
      'torch free',
      'tensorflow / PyTorch KV-cache decode time, unconstrained',
    ],
    ['tensorflowWasmFree', 'tensorflow free', 'wasm free', 'tensorflow / wasm decode time, unconstrained'],
    ['tensorflowWasmTyped', 'tensorflow typed', 'wasm typed', 'tensorflow / wasm decode time, typed int grammar'],
    ['typedTorch', 'tensorflow typed', 'torch free', 'tensorflow typed / PyTorch unconstrained decode time'],
  ];
  const ratios: Record<string, { pairedCalls: number[]; bestCalls: number[] }> = {};
  for (const [key, a, b, text] of pairs) {
    const rs = all.filter((r) => r.ms[a]?.length && r.ms[b]?.length);
    if (!rs.length) continue;
    const r = {
      pairedCalls: rs.map((x) => median(x.ms[a]!.map((v, k) => v / x.ms[b]![k]!))),
      bestCalls: rs.map((x) => Math.min(...x.ms[a]!) / Math.min(...x.ms[b]!)),
    };
    ratios[key] = r;
    rows.push([
      `${text}, ${rs.length} rounds of ${calls} paired calls`,
      '',
      `paired calls: ${range(r.pairedCalls, 2)}; best calls: ${range(r.bestCalls, 2)}`,
    ]);
  }
  const record = {
    work: { ...DECODE, threads: 1, sampling: 'temperature 1, no top-k/top-p', calls },
    peers: all[0]?.peers,
    rounds: all.map((r) => r.ms),
    composite: composite.ms,
    figures,
    ratios,
  };
  return { rows, record };
}

// a peer: `--serve <backend> [--composite]` answers a line {"ms", "steps"} for each grammar read on stdin
if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes('--serve')) {
  const backend = process.argv[process.argv.indexOf('--serve') + 1] as 'wasm' | 'tensorflow';
  const used = await initBackend(backend, { threads: 1, log: (l) => console.error(l) });
  if (used !== backend) throw new Error(`${backend} did not start (got ${used})`);
  // without the native decoding op's kernel, kv-decode.ts runs model.ts's composite step
  if (process.argv.includes('--composite')) tf.unregisterKernel(FUSED.decodeStep, 'tensorflow');
  const one = decoder();
  for (let i = 0; i < 2; i++) for (const g of ['free', 'typed'] as const) await one(g);
  console.log(JSON.stringify({ backend, threads: 1, composite: process.argv.includes('--composite') }));
  for await (const line of createInterface({ input: process.stdin })) {
    const t0 = performance.now();
    const steps = await one(line.trim() as DecodeGrammar);
    console.log(JSON.stringify({ ms: performance.now() - t0, steps }));
  }
  process.exit(0);
}

// `npx tsx bench/decode.ts [--rounds N] [--calls N]`: the decoding rounds alone (bench:train runs
// them too); prints the table and writes bench/results/decode.json with the load around them.
if (process.argv[1] === fileURLToPath(import.meta.url) && !process.argv.includes('--serve')) {
  const arg = (name: string, dflt: number): number =>
    process.argv.includes(name) ? Number(process.argv[process.argv.indexOf(name) + 1]) : dflt;
  const loadAtStart = os.loadavg();
  const date = new Date().toISOString();
  const d = await decodeRounds(arg('--rounds', 5), arg('--calls', 20));
  console.log('\n| what | time | figure |\n| --- | --- | --- |');
  for (const r of d.rows) console.log(`| ${r.join(' | ')} |`);
  mkdirSync('bench/results', { recursive: true });
  const out = {
    date,
    cpus: os.cpus().length,
    node: process.version,
    shape: SHAPE,
    loadAtStart,
    loadAtEnd: os.loadavg(),
    ...d.record,
  };
  writeFileSync('bench/results/decode.json', JSON.stringify(out, null, 2) + '\n');
  console.log('\nwrote bench/results/decode.json');
}
