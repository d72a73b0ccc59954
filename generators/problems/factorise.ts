// Prime factorisation (number theory): the primes whose product is n, with multiplicity.
import { defineProblemFamily, problemSkill } from './kit.js';

const ID = 'factorise';
/** The primes up to 450 (the largest factor's cap; levels 0-4 draw from those up to 113). */
const PRIMES = Array.from({ length: 449 }, (_, i) => i + 2).filter((p) =>
  Array.from({ length: p - 2 }, (_, i) => i + 2).every((q) => p % q !== 0),
);

const verifier = `function f(answer, data) {
  if (!Array.isArray(answer) || answer.length === 0 || answer.length > 60) return 0;
  var p = 1;
  for (var i = 0; i < answer.length; i++) {
    var q = answer[i];
    if (typeof q !== 'number' || q % 1 !== 0 || q < 2 || q > data.n) return 0;
    for (var d = 2; d * d <= q; d++) if (q % d === 0) return 0;
    p *= q;
    if (p > data.n) return 0;
  }
  return p === data.n ? 1 : 0;
}`;

interface Level extends Record<string, number> {
  factors: number;
  largest: number;
}

const LEVELS: Level[] = [
  { factors: 2, largest: 7 },
  { factors: 3, largest: 13 },
  { factors: 4, largest: 31 },
  { factors: 5, largest: 61 },
  { factors: 6, largest: 113 },
];

export const factorise = defineProblemFamily({
  id: ID,
  name: 'Prime factorisation',
  description: 'the prime factors of n, with multiplicity',
  domain: 'number-theory',
  skills: [
    problemSkill(ID, 'divide', 'trial division', 'divide out small primes', [], 0),
    problemSkill(ID, 'primes', 'larger prime factors', 'recognise larger primes', [`${ID}.divide`], 2),
  ],
  levels: LEVELS,
  growth: { largest: { by: 7, max: 450, why: 'a product of six factors could pass 2^53 and stop being exact' } },
  slower: {
    ratio: 1.2,
    why: 'n must stay an exact JavaScript number (below 2^53), so its six prime factors grow slowly (the largest by 7 a level)',
  },
  verifier,
  size: (d) => Math.log10((d as { n: number }).n),
  draw(rng, L) {
    const pool = PRIMES.filter((p) => p <= L.largest);
    const factors = Array.from({ length: L.factors }, () => rng.pick(pool)).sort((a, b) => a - b);
    const n = factors.reduce((a, b) => a * b, 1);
    const merged = [factors[0]! * factors[1]!, ...factors.slice(2)];
    return {
      statement: `Write ${n} as a product of prime numbers. Answer with the JSON array of the prime factors, repeated as often as they divide ${n}, e.g. [2, 2, 3] for 12.`,
      data: { n },
      witness: factors,
      failures: [merged, factors.slice(1), [...factors, 1], [n]],
    };
  },
});
