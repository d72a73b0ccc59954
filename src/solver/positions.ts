// The position of each prompt token (docs/solver-view.md, "Positions from both ends"). A compact
// prompt is `<values>@<program>` (generators/render.ts): the values count from <bos> at 0, so
// argument k sits at the same place in every prompt; the program counts back from the prompt's last
// token, which sits at maxPromptLen in every prompt, so the operator and names next to the answer
// sit at the same places whatever the number of values. A prompt with no `@` outside a JSON string
// counts from <bos> alone. Answer inputs follow at maxPromptLen + 1 + k (model.ts).
import { charId } from './tokenizer.js';

const MARK = charId('@');
const QUOTE = charId('"');
const ESCAPE = charId('\\');

/** Index of the first `@` outside a JSON string in ids[from, to), or -1 (parseCompact's rule, over tokens). */
export function programMark(ids: ArrayLike<number>, from: number, to: number): number {
  let inString = false;
  for (let t = from; t < to; t++) {
    const id = ids[t];
    if (inString) {
      if (id === ESCAPE) t++;
      else if (id === QUOTE) inString = false;
    } else if (id === QUOTE) inString = true;
    else if (id === MARK) return t;
  }
  return -1;
}

/**
 * Writes the positions of one row's <bos> and prompt, ids[bos .. last], into out[bos .. last]
 * (`last` is the prompt's last token; at most maxPromptLen tokens follow <bos>).
 */
export function writePromptPositions(
  ids: ArrayLike<number>,
  bos: number,
  last: number,
  maxPromptLen: number,
  out: Int32Array | number[],
): void {
  const mark = programMark(ids, bos + 1, last + 1);
  for (let t = bos; t <= last; t++) out[t] = mark >= 0 && t > mark ? maxPromptLen - (last - t) : t - bos;
}

/** Positions of <bos> followed by a prompt's ids (bench/ceiling.ts hands them to its PyTorch peer). */
export function promptPositions(ids: readonly number[], maxPromptLen: number): number[] {
  const row = [0, ...ids];
  const out = new Array<number>(row.length).fill(0);
  writePromptPositions(row, 0, row.length - 1, maxPromptLen, out);
  return out;
}
