// Character-level tokenizer: four specials, then printable ASCII 32..126 (one id per character).
//
//   0 <pad>   1 <bos>   2 <sep> (answer starts after it)   3 <eos>   4.. ' ' .. '~'
//
// A training/sampling sequence is  <bos> prompt <sep> answer <eos>.

export const PAD = 0;
export const BOS = 1;
export const SEP = 2;
export const EOS = 3;
const FIRST = 32;
const LAST = 126;
const OFFSET = 4 - FIRST;
export const VOCAB_SIZE = 4 + (LAST - FIRST + 1); // 99

/** Characters outside printable ASCII are mapped to '?'. */
export function charId(ch: string): number {
  const c = ch.charCodeAt(0);
  return c >= FIRST && c <= LAST ? c + OFFSET : '?'.charCodeAt(0) + OFFSET;
}

export function encode(text: string): number[] {
  const out = new Array<number>(text.length);
  for (let i = 0; i < text.length; i++) out[i] = charId(text[i]!);
  return out;
}

/** Decodes character ids; specials are dropped. */
export function decode(ids: ArrayLike<number>): string {
  let s = '';
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    if (id >= 4 && id < VOCAB_SIZE) s += String.fromCharCode(id - OFFSET);
  }
  return s;
}

export function idChar(id: number): string {
  return id >= 4 && id < VOCAB_SIZE ? String.fromCharCode(id - OFFSET) : '';
}
