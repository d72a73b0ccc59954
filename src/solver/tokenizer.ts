// The solver's tokens: four specials, every printable ASCII character, and the words of its tasks
// (keywords, booleans and null, builtins, multi-character operators) as one token each.
//
//   0 <pad>   1 <bos>   2 <sep>   3 <eos>   4.. ' ' .. '~'   then WORDS
//
// A training/sampling sequence is  <bos> prompt answer <eos>, with <sep> marking the prompt's last
// token (model.ts). Why words: a value spelled over a varying number of characters moves every
// argument after it, and a small model does not learn to count them (docs/solver-view.md); with
// `true` and `false` one token each, every boolean argument sits at a fixed place.
//
// Encoding is greedy longest match; a word of letters matches only where it is not part of a longer
// identifier (`trueish` stays characters), so decode(encode(s)) === s for every printable ASCII
// string (the compact rendering is one), and any text not made of words is still written, one
// character a token.

export const PAD = 0;
export const BOS = 1;
export const SEP = 2;
export const EOS = 3;
const FIRST = 32;
const LAST = 126;
const CHARS = LAST - FIRST + 1;

/** The view's name, recorded in checkpoints: a checkpoint of another view is refused (checkpoint.ts). */
export const VIEW = 'words-signed';

/**
 * Multi-character tokens. Letter words: JSON's literals, the JavaScript keywords and builtins the
 * code families write, and the hint words of induction prompts; operators: every multi-character one
 * they write. Order is the id order; append only (a checkpoint's embedding rows follow it).
 */
export const WORDS: readonly string[] = [
  'true',
  'false',
  'null',
  'return',
  'function',
  'const',
  'let',
  'for',
  'while',
  'if',
  'else',
  'of',
  'new',
  'typeof',
  'undefined',
  'length',
  'Math',
  'floor',
  'abs',
  'max',
  'min',
  'slice',
  'sort',
  'filter',
  'map',
  'reduce',
  'concat',
  'push',
  'includes',
  'indexOf',
  'join',
  'split',
  'reverse',
  'keys',
  'Object',
  'charAt',
  'toUpperCase',
  'repeat',
  'shift',
  'xs',
  'acc',
  'arith',
  'logic',
  'nested',
  'add',
  'sub',
  'mul',
  'div',
  'mod',
  'and',
  'or',
  'not',
  '=>',
  '===',
  '!==',
  '==',
  '!=',
  '<=',
  '>=',
  '&&',
  '||',
  '++',
  '--',
  '+=',
  '-=',
  '*=',
  '**',
  '...',
  '>>>',
  '>>',
  '<<',
];

const SPECIALS = ['<pad>', '<bos>', '<sep>', '<eos>'];
/** Token id → its text ('' for specials). */
export const TOKENS: readonly string[] = [
  ...SPECIALS.map(() => ''),
  ...Array.from({ length: CHARS }, (_, i) => String.fromCharCode(FIRST + i)),
  ...WORDS,
];
export const VOCAB_SIZE = TOKENS.length;
/** Names of the specials, for the view written as text (served-view.ts). */
export const SPECIAL_NAMES: readonly string[] = SPECIALS;

const wordId = new Map(WORDS.map((w, i) => [w, 4 + CHARS + i]));
const byLength = [...WORDS].sort((a, b) => b.length - a.length);
const isIdent = (c: string | undefined): boolean => c !== undefined && /[A-Za-z0-9_$]/.test(c);

/** Characters outside printable ASCII are written as '?'. */
export function charId(ch: string): number {
  const c = ch.charCodeAt(0);
  return c >= FIRST && c <= LAST ? c - FIRST + 4 : '?'.charCodeAt(0) - FIRST + 4;
}

/** The word that starts at `i`, if any (longest first; letter words only at identifier boundaries). */
function wordAt(text: string, i: number): string | undefined {
  for (const w of byLength) {
    if (!text.startsWith(w, i)) continue;
    if (/^[A-Za-z]/.test(w) && (isIdent(text[i - 1]) || isIdent(text[i + w.length]))) continue;
    return w;
  }
  return undefined;
}

export function encode(text: string): number[] {
  const out: number[] = [];
  for (let i = 0; i < text.length;) {
    const w = wordAt(text, i);
    if (w) {
      out.push(wordId.get(w)!);
      i += w.length;
    } else out.push(charId(text[i++]!));
  }
  return out;
}

/** The text of token ids; specials are dropped. */
export function decode(ids: ArrayLike<number>): string {
  let s = '';
  for (let i = 0; i < ids.length; i++) s += TOKENS[ids[i]!] ?? '';
  return s;
}

/** One token's text ('' for a special or an id outside the vocabulary). */
export const tokenText = (id: number): string => TOKENS[id] ?? '';
