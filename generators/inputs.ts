// The inputs of generated programs: the ranges a level draws them from, drawing one value of an
// input type, and naming what a level draws (for its knobs text).
import type { Rng } from '../core/rng.js';
import type { Json } from '../core/task.js';

/** How the inputs of one level are drawn. */
export interface Ranges {
  /** Integer inputs, inclusive. */
  int: [number, number];
  /** Array lengths, inclusive. */
  len: [number, number];
  /** String lengths, inclusive. */
  strLen: [number, number];
  /** Letters strings are drawn from. */
  letters: string;
  /** How many keys a dictionary may have (a-f, 6, unless set; grown levels set more: docs/levels.md). */
  keys?: number;
}

export const ranges = (
  int: [number, number],
  len: [number, number] = [1, 4],
  strLen: [number, number] = [1, 4],
  letters = 'abcde',
): Ranges => ({
  int,
  len,
  strLen,
  letters,
});

const DICT_KEYS = ['a', 'b', 'c', 'd', 'e', 'f'];
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz';

/** The first n dictionary keys: a, b, …, z, then aa, ab, …; DICT_KEYS for the default 6. */
function dictKeys(n: number | undefined): readonly string[] {
  if (n === undefined) return DICT_KEYS;
  return Array.from({ length: n }, (_, i) =>
    i < 26 ? ALPHABET[i]! : ALPHABET[Math.floor(i / 26) - 1]! + ALPHABET[i % 26]!,
  );
}
const WORD_POOL = [
  'ab',
  'ba',
  'cat',
  'dog',
  'ox',
  'a',
  'b',
  'sun',
  'cab',
  'bob',
  'tea',
  'eat',
  'ant',
  'bee',
  'cow',
  'owl',
];

/** One random value of an input type under a level's ranges. */
export function drawValue(rng: Rng, ty: string, r: Ranges): Json {
  switch (ty) {
    case 'int':
      return rng.int(r.int[0], r.int[1]);
    case 'nat':
      return rng.int(Math.max(0, r.int[0]), Math.max(0, r.int[1]));
    case 'bool':
      return rng.bool();
    case 'str':
      return drawStr(rng, r);
    case 'int[]': {
      const xs: number[] = [];
      for (let i = 0, n = rng.int(r.len[0], r.len[1]); i < n; i++) xs.push(rng.int(r.int[0], r.int[1]));
      return xs;
    }
    case 'str[]': {
      const xs: string[] = [];
      for (let i = 0, n = rng.int(r.len[0], r.len[1]); i < n; i++) xs.push(rng.pick(WORD_POOL));
      return xs;
    }
    case 'rec':
      return { x: rng.int(r.int[0], r.int[1]), y: rng.int(r.int[0], r.int[1]), name: drawStr(rng, r), ok: rng.bool() };
    case 'dict': {
      const out: Record<string, Json> = {};
      for (const k of dictKeys(r.keys)) if (rng.bool(0.5)) out[k] = rng.int(Math.max(0, r.int[0]), r.int[1]);
      return out;
    }
    default:
      throw new Error(`inputs: no input generator for type ${ty}`);
  }
}

// A top-level function rather than an arrow inside drawValue: tsx (esbuild's keepNames) calls __name
// on every arrow bound to a name each time it is created, which costs more than the string itself.
function drawStr(rng: Rng, r: Ranges): string {
  const n = rng.int(r.strLen[0], r.strLen[1]);
  let s = '';
  for (let i = 0; i < n; i++) s += r.letters[rng.int(0, r.letters.length - 1)];
  return s;
}

const interval = ([lo, hi]: readonly [number, number]): string => `${lo}..${hi}`;
const lengths = ([lo, hi]: readonly [number, number]): string => (lo === hi ? `${lo}` : `${lo}-${hi}`);

/** The inputs of the given types, as a level draws them. */
export function describeInputs(types: readonly string[], r: Ranges): string {
  const letters = `${lengths(r.strLen)} letters from ${r.letters}`;
  const nat = (lo: number): number => Math.max(0, lo);
  const texts: Record<string, string> = {
    int: `ints ${interval(r.int)}`,
    nat: `nats ${interval([nat(r.int[0]), nat(r.int[1])])}`,
    'int[]': `arrays of ${lengths(r.len)} ints ${interval(r.int)}`,
    str: `strings of ${letters}`,
    'str[]': `arrays of ${lengths(r.len)} words`,
    rec: `records {x, y: ${interval(r.int)}, name: ${letters}, ok}`,
    dict: `dictionaries of keys ${dictKeys(r.keys)[0]}-${dictKeys(r.keys).at(-1)} with values ${interval([nat(r.int[0]), r.int[1]])}`,
  };
  return types.flatMap((type) => texts[type] ?? []).join(', ');
}
