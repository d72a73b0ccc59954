// Decoding (docs/DESIGN.md, "Solver and the GRPO family"): G answers per prompt, each prompt run
// once (prefill) and the answers extended token by token from the KV cache, every token masked to
// what the answer's grammar allows. The policy runs it on this thread and, for the other chunks of
// a batch, the shard workers run the same code (accel/parallel.ts).
//
// Each prompt draws from its own random stream (seeded by the policy per call), so the answers do
// not depend on how prompts are split between threads.
import { createRng } from '../../core/rng.js';
import type { AnswerShape } from '../../core/task.js';
import { isWorkShape } from '../../core/working.js';
import type { SolverConfig } from './config.js';
import { stepToken } from './answer-grammar.js';
import { allowedTokens, grammarFor } from './grammars.js';
import { answerFromView } from './answer-view.js';
import { decodeStep, disposeCache, prefill } from './kv-decode.js';
import type { Batch } from './model.js';
import type { ModelConfig, Params } from './params.js';
import { BOS, EOS, decode, tokenText } from './tokenizer.js';

export interface DecodeOptions {
  maxPromptLen: number;
  maxAnswerLen: number;
  sampling: SolverConfig['sampling'];
}

export interface DecodePrompt {
  /** prompt ids, already cut to maxPromptLen */
  ids: number[];
  /** the grammar its answers are decoded in */
  grammar: AnswerShape;
  /** random stream state for its answers (sfc32 seed); unused when greedy */
  seed: string;
}

/** One decoded answer, with what an update needs. */
export interface DecodedRow {
  prompt: number[];
  /** answer token ids, ending with <eos> */
  answer: number[];
  /** log-prob of each answer token under the sampling distribution (temperature, grammar mask; before top-k/top-p) */
  oldLogp: Float32Array;
  /** allowed tokens at each answer position */
  allowed: Uint8Array[];
  text: string;
  /** The working as written, before `text` took its answer (answers written in a working's shape only). */
  written?: string;
}

/** G answers per prompt (rows[b][i]: answer i to prompt b), or the argmax answer when greedy. */
export async function decodeRows(
  params: Params,
  mc: ModelConfig,
  o: DecodeOptions,
  prompts: DecodePrompt[],
  G: number,
  greedy: boolean,
): Promise<DecodedRow[][]> {
  const rows = await decodeMasked(params, mc, o, prompts, G, greedy, (b) => {
    const grammar = grammarFor(prompts[b]!.grammar);
    let state = grammar.start();
    return {
      allowed: (tokensLeft) => allowedTokens(prompts[b]!.grammar, state, tokensLeft),
      next: (token) => {
        state = stepToken(grammar, state, tokenText(token));
      },
    };
  });
  for (let r = 0; r < rows.length; r++) {
    const shape = prompts[Math.floor(r / G)]!.grammar;
    if (isWorkShape(shape)) rows[r]!.written = rows[r]!.text;
    rows[r]!.text = answerFromView(shape, rows[r]!.text);
  }
  return prompts.map((_, b) => rows.slice(b * G, (b + 1) * G));
}

/** One answer's grammar as decoding walks it: the tokens allowed with `tokensLeft` tokens left, and the step on a token (never <eos>). */
export interface RowGrammar {
  allowed(tokensLeft: number): Uint8Array;
  next(token: number): void;
}

/**
 * The decoding loop that answers and agentic actions share: G rows per prompt (row r answers prompt
 * ⌊r / G⌋ and draws from that prompt's random stream), each token masked by its row's grammar
 * (grammarOf(b), one per row).
 */
export async function decodeMasked(
  params: Params,
  mc: ModelConfig,
  o: DecodeOptions,
  prompts: readonly { ids: number[]; seed: string }[],
  G: number,
  greedy: boolean,
  grammarOf: (b: number) => RowGrammar,
): Promise<DecodedRow[]> {
  const maxA = o.maxAnswerLen;
  const V = mc.vocabSize;
  const B = prompts.length;
  if (B === 0) return [];
  const N = B * G;
  const P = Math.max(...prompts.map((x) => x.ids.length)) + 1; // <bos> and the longest prompt
  const tokens = new Int32Array(B * P);
  const pad = new Int32Array(B);
  prompts.forEach(({ ids }, b) => {
    pad[b] = P - 1 - ids.length;
    tokens[b * P + pad[b]!] = BOS;
    tokens.set(ids, b * P + pad[b]! + 1);
  });
  const batch: Batch = { tokens, N: B, T: P, pad };
  let { logits, cache } = prefill(params, mc, batch, G);
  const argmax = greedy || o.sampling.temperature === 0;
  const rngs = prompts.map((p) => createRng(p.seed));
  // one batch of N = B·G rows: row r is answer r mod G to prompt ⌊r / G⌋
  const promptOf = (r: number): number => Math.floor(r / G);
  const rows: DecodedRow[] = [];
  const grammars: RowGrammar[] = [];
  for (let r = 0; r < N; r++) {
    rows.push({
      prompt: prompts[promptOf(r)]!.ids,
      answer: [],
      oldLogp: new Float32Array(maxA + 1),
      allowed: [],
      text: '',
    });
    grammars.push(grammarOf(promptOf(r)));
  }
  const done = new Uint8Array(N);
  let remaining = N;
  try {
    for (let k = 0; k <= maxA; k++) {
      const l = (await logits.data()) as Float32Array;
      logits.dispose();
      const next = new Int32Array(N);
      for (let r = 0; r < N; r++) {
        if (done[r]) continue;
        const row = rows[r]!;
        const allowed = grammars[r]!.allowed(maxA - k);
        const { token, logp } = pick(l.subarray(r * V, (r + 1) * V), allowed, argmax, o.sampling, rngs[promptOf(r)]!);
        row.answer.push(token);
        row.oldLogp[k] = logp;
        row.allowed.push(allowed);
        if (token === EOS) {
          done[r] = 1;
          remaining--;
        } else {
          grammars[r]!.next(token);
          next[r] = token;
        }
      }
      if (remaining === 0) break;
      // answer input k sits at position maxPromptLen + 1 + k (model.ts)
      ({ logits, cache } = decodeStep(params, mc, cache, next, o.maxPromptLen + 1 + k));
    }
  } finally {
    if (!logits.isDisposed) logits.dispose();
    disposeCache(cache);
  }
  for (const row of rows) {
    row.oldLogp = row.oldLogp.slice(0, row.answer.length);
    row.text = decode(row.answer);
  }
  return rows;
}

// pick()'s scratch: the candidates and their exp(logit/T − max), grown to the vocabulary once, so
// that a step's 64-odd picks allocate nothing
let candIds = new Int32Array(0);
let candExp = new Float64Array(0);

/**
 * Samples (or takes the argmax of) one token among the allowed ones; returns its log-prob under
 * softmax(logits/T) restricted to the allowed tokens. The vocabulary is the logits' (the solver's
 * is the tokenizer's; bench/decode.ts runs bench/shape.ts's smaller one). Each candidate's
 * exp(logit/T − max) is computed once and its sums taken in candidate order, which gives the same
 * numbers as recomputing it for the normaliser, the pool's total and the draw.
 */
export function pick(
  logits: Float32Array,
  allowed: Uint8Array,
  greedy: boolean,
  sampling: DecodeOptions['sampling'],
  rng: { next(): number },
): { token: number; logp: number } {
  const { temperature, topK, topP } = sampling;
  const T = temperature > 0 ? temperature : 1;
  if (candIds.length < logits.length) {
    candIds = new Int32Array(logits.length);
    candExp = new Float64Array(logits.length);
  }
  let n = 0;
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) {
    if (!allowed[i]) continue;
    candIds[n++] = i;
    if (logits[i]! / T > max) max = logits[i]! / T;
  }
  if (n === 0) throw new Error('grammar allowed no token (bug)');
  let z = 0;
  for (let c = 0; c < n; c++) z += candExp[c] = Math.exp(logits[candIds[c]!]! / T - max);
  const logZ = max + Math.log(z);
  let token: number;
  if (greedy) {
    token = candIds[0]!;
    for (let c = 0; c < n; c++) if (logits[candIds[c]!]! > logits[token]!) token = candIds[c]!;
  } else if ((topK > 0 && topK < n) || topP < 1) {
    token = pickTruncated(logits, Array.from(candIds.subarray(0, n)), T, max, logZ, sampling, rng);
  } else {
    // the pool is every candidate: its total is z
    let u = rng.next() * z;
    token = candIds[n - 1]!;
    for (let c = 0; c < n; c++) {
      u -= candExp[c]!;
      if (u <= 0) {
        token = candIds[c]!;
        break;
      }
    }
  }
  return { token, logp: logits[token]! / T - logZ };
}

/** A draw from the top-k / top-p pool of the candidates. */
function pickTruncated(
  logits: Float32Array,
  cand: number[],
  T: number,
  max: number,
  logZ: number,
  sampling: DecodeOptions['sampling'],
  rng: { next(): number },
): number {
  const { topK, topP } = sampling;
  let pool = [...cand].sort((a, b) => logits[b]! - logits[a]!);
  if (topK > 0) pool = pool.slice(0, topK);
  if (topP < 1) {
    let acc = 0;
    let n = 0;
    while (n < pool.length) {
      acc += Math.exp(logits[pool[n]!]! / T - logZ);
      n++;
      if (acc >= topP) break;
    }
    pool = pool.slice(0, n);
  }
  let total = 0;
  for (const i of pool) total += Math.exp(logits[i]! / T - max);
  let u = rng.next() * total;
  let token = pool[pool.length - 1]!;
  for (const i of pool) {
    u -= Math.exp(logits[i]! / T - max);
    if (u <= 0) {
      token = i;
      break;
    }
  }
  return token;
}
