// A policy's sampling: prompts as decode rows (ids cut to maxPromptLen, each in its answer grammar,
// each with its own random stream), decoded on this thread or over the shard workers (decode.ts,
// accel/parallel.ts); and agentic actions under their tools' grammar (episodes.ts).
import type { AnswerShape } from '../../core/task.js';
import { readArrays } from './accel/index.js';
import { decodeRows, type DecodePrompt } from './decode.js';
import { decodeActions, type ActionTool } from './episodes.js';
import { grammarFor } from './grammars.js';
import type { PolicyState } from './state.js';
import { encode } from './tokenizer.js';
import { shardDecode } from './train-step.js';
import type { PolicyPrompt, RolloutRow } from './types.js';

/**
 * Fewest answers per call worth decoding on the shard workers. A decode step is mostly per-op
 * overhead, the same for a chunk as for the whole batch, and each call sends the weights: on 2 cores,
 * 2 threads took 117 ms for 64 answers against 111 ms on one, 171 against 183 ms for 128, 257
 * against 359 ms for 256 (scratch measurement, B prompts × 8).
 */
const PARALLEL_DECODE_ROWS = 128;

/** Prompt ids, truncated from the left to maxPromptLen (the end, nearest the answer, is kept). */
export function promptIds(s: PolicyState, text: string): number[] {
  const ids = encode(text);
  const max = s.cfg.model.maxPromptLen;
  return ids.length > max ? ids.slice(ids.length - max) : ids;
}

/** The grammar a prompt's answers are decoded in: its shape when typed answers are on, else its kind. */
export function grammarOf(s: PolicyState, p: PolicyPrompt): AnswerShape {
  // A working that fits the answer budget is written in full; one that does not, answered at once.
  if (p.work !== undefined && s.cfg.working !== 'off') {
    const w = grammarFor(p.work);
    if (w.minRemaining(w.start()) <= s.cfg.model.maxAnswerLen) return p.work;
  }
  if (!s.cfg.typedAnswers || p.shape === undefined) return p.kind;
  // A shape with a single possible answer (null, an empty or all-null argument list) would give
  // the answer away: decode the plain literal. (The built-in families never produce one.)
  if (/^(null|\[(null(,null)*)?\])$/.test(p.shape)) return p.kind;
  // A shape whose shortest answer exceeds the budget (a long argument list) cannot be written at
  // all: decode the plain literal then (no answer of that shape could be right within the budget).
  const g = grammarFor(p.shape);
  return g.minRemaining(g.start()) <= s.cfg.model.maxAnswerLen ? p.shape : p.kind;
}

/**
 * G answers per prompt (or the greedy one), rows[b][i]: on this thread, or (from
 * PARALLEL_DECODE_ROWS answers) split into contiguous chunks of prompts over the shard workers.
 * Each prompt has its own random stream, seeded from the policy's stream once per call, so the
 * answers do not depend on the split.
 */
export async function decodeBatch(
  s: PolicyState,
  prompts: PolicyPrompt[],
  G: number,
  greedy: boolean,
): Promise<RolloutRow[][]> {
  const seed = greedy ? 0 : s.rng.int(0, 2 ** 31 - 1);
  const dps: DecodePrompt[] = prompts.map((p, b) => ({
    ids: promptIds(s, p.text),
    grammar: grammarOf(s, p),
    seed: `${seed}/${b}`,
  }));
  if (dps.length >= 2 && dps.length * G >= PARALLEL_DECODE_ROWS) {
    const parts = await s.pool.run(async (workers) => {
      const n = Math.min(workers.size + 1, dps.length);
      const starts = Array.from({ length: n + 1 }, (_, i) => Math.floor((i * dps.length) / n));
      const chunks = starts.slice(0, n).map((from, i) => ({ prompts: dps.slice(from, starts[i + 1]), G, greedy }));
      return workers.decode(chunks.slice(1), await readArrays(s.params), () =>
        shardDecode(s.params, s.setup, chunks[0]!),
      );
    });
    if (parts) return parts.flat();
  }
  return decodeRows(s.params, s.mc, s.setup.decode, dps, G, greedy);
}

/** One action per context (its text cut from the left to maxPromptLen), decoded under its tools' action grammar. */
export async function decodeActionRows(
  s: PolicyState,
  prompts: { text: string; tools: readonly ActionTool[] }[],
  greedy: boolean,
): Promise<RolloutRow[]> {
  if (!prompts.length) return [];
  const seed = greedy ? 0 : s.rng.int(0, 2 ** 31 - 1);
  const aps = prompts.map((p, b) => ({ ids: promptIds(s, p.text), tools: p.tools, seed: `${seed}/${b}` }));
  return decodeActions(s.params, s.mc, s.setup.decode, aps, greedy);
}
