// The transformer as a proposer (self-play, proposers/self-play.ts): one prompt run once (prefill),
// then candidates of choice tokens after it, each token one decode step from the KV cache, the
// model's logits read synchronously (the grammar's sampler asks for a choice in the middle of a
// synchronous draw). Its rows train with the solver's loss: the masks are the allowed options, so
// the proposer's log-probs are of its own choice tokens only, renormalised over the options.
import type * as tf from '@tensorflow/tfjs-core';
import { decodeStep, disposeCache, prefill, restartCache, type KVCache } from './kv-decode.js';
import type { ModelConfig, Params } from './params.js';
import { BOS, VOCAB_SIZE, charId, encode } from './tokenizer.js';
import type { TrainRow } from './train-step.js';

/** A proposer role's row (structurally proposers' ChoiceRow): prompt, choice tokens, masks, log-probs, advantage. */
export interface ChoiceRow {
  prompt: string;
  tokens: string;
  allowed: string[];
  logp: number[];
  adv: number;
}

/** Prompt ids cut from the left to maxPromptLen, as the solver's prompts are. */
export const promptIdsOf = (text: string, maxPromptLen: number): number[] => {
  const ids = encode(text);
  return ids.length > maxPromptLen ? ids.slice(ids.length - maxPromptLen) : ids;
};

/** Decodes choice tokens after one prompt; every candidate restarts right after it. */
export class ChoiceDecoder {
  private readonly promptLogits: Float32Array;
  private cache: KVCache;
  private logits: Float32Array;
  /** The token pushed but not yet run through the model (run when the next scores are asked for). */
  private queued: number | null = null;
  private length = 0;

  constructor(
    private readonly params: Params,
    private readonly mc: ModelConfig,
    private readonly maxPromptLen: number,
    /** Answer positions this model has (maxPositions − maxPromptLen − 1). */
    private readonly maxLen: number,
    private readonly temperature: number,
    prompt: string,
  ) {
    const tokens = new Int32Array([BOS, ...promptIdsOf(prompt, maxPromptLen)]);
    const out = prefill(params, mc, { tokens, N: 1, T: tokens.length, pad: new Int32Array(1) }, 1);
    this.promptLogits = out.logits.dataSync() as Float32Array;
    out.logits.dispose();
    this.cache = out.cache;
    this.logits = this.promptLogits;
  }

  restart(): void {
    this.cache = restartCache(this.cache);
    this.logits = this.promptLogits;
    this.queued = null;
    this.length = 0;
  }

  scores(allowed: string): number[] {
    if (this.queued !== null) {
      if (this.length > this.maxLen)
        throw new Error(`choice decoder: more than ${this.maxLen} choice tokens (the positions were grown for fewer)`);
      // choice token k sits at position maxPromptLen + 1 + k, as answer inputs do (model.ts)
      const out: { logits: tf.Tensor2D; cache: KVCache } = decodeStep(
        this.params,
        this.mc,
        this.cache,
        new Int32Array([this.queued]),
        this.maxPromptLen + this.length,
      );
      this.cache = out.cache;
      this.logits = out.logits.dataSync() as Float32Array;
      out.logits.dispose();
      this.queued = null;
    }
    const T = this.temperature > 0 ? this.temperature : 1;
    return [...allowed].map((ch) => this.logits[charId(ch)]! / T);
  }

  push(token: string): void {
    this.queued = charId(token);
    this.length++;
  }

  close(): void {
    disposeCache(this.cache);
  }
}

/** Proposer rows as training rows (each its own group of one; the advantage is the row's). */
export function choiceTrainRows(rows: readonly ChoiceRow[], maxPromptLen: number): TrainRow[] {
  return rows.map((r) => ({
    prompt: promptIdsOf(r.prompt, maxPromptLen),
    answer: encode(r.tokens),
    oldLogp: Float32Array.from(r.logp),
    allowed: r.allowed.map((a) => {
      const m = new Uint8Array(VOCAB_SIZE);
      for (const ch of a) m[charId(ch)] = 1;
      return m;
    }),
    adv: r.adv,
  }));
}
