// A small seeded PRNG (sfc32) whose whole state is four numbers, so it can be checkpointed.

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [lo, hi], both inclusive. */
  int(lo: number, hi: number): number;
  pick<T>(items: readonly T[]): T;
  bool(p?: number): boolean;
  /** An independent stream derived from this one and a label. */
  fork(label: string | number): Rng;
  state(): [number, number, number, number];
}

function hashString(s: string): number {
  // FNV-1a, 32-bit
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export function createRng(seed: number | string | [number, number, number, number]): Rng {
  let a: number, b: number, c: number, d: number;
  if (Array.isArray(seed)) {
    [a, b, c, d] = seed;
  } else {
    const s = typeof seed === 'number' ? seed >>> 0 : hashString(seed);
    a = 0x9e3779b9;
    b = 0x243f6a88;
    c = 0xb7e15162;
    d = s;
  }
  const next = (): number => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    let t = (a + b) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    d = (d + 1) | 0;
    t = (t + d) | 0;
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  if (!Array.isArray(seed)) for (let i = 0; i < 15; i++) next();
  const rng: Rng = {
    next,
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    pick: (items) => {
      if (items.length === 0) throw new Error('rng.pick: empty list');
      return items[Math.floor(next() * items.length)]!;
    },
    bool: (p = 0.5) => next() < p,
    fork: (label) => createRng(`${a},${b},${c},${d}/${label}`),
    state: () => [a >>> 0, b >>> 0, c >>> 0, d >>> 0],
  };
  return rng;
}
