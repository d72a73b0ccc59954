// Bézout coefficients (number theory): integers x, y with a·x + b·y = gcd(a, b). Infinitely many
// pairs are right; the verifier computes the gcd itself.
import { defineProblemFamily, problemSkill } from './kit.js';

const ID = 'bezout';

const verifier = `function f(answer, data) {
  if (!Array.isArray(answer) || answer.length !== 2) return 0;
  var x = answer[0], y = answer[1];
  if (typeof x !== 'number' || typeof y !== 'number' || x % 1 !== 0 || y % 1 !== 0 || Math.abs(x) > 1e9 || Math.abs(y) > 1e9) return 0;
  var a = data.a, b = data.b, g = a, h = b;
  while (h) { var t = g % h; g = h; h = t; }
  return a * x + b * y === g ? 1 : 0;
}`;

interface Level extends Record<string, number> {
  max: number;
}

const LEVELS: Level[] = [{ max: 12 }, { max: 40 }, { max: 150 }, { max: 1000 }, { max: 20000 }];

/** The extended Euclidean algorithm: [g, x, y] with a·x + b·y = g. */
export function egcd(a: number, b: number): [number, number, number] {
  if (b === 0) return [a, 1, 0];
  const [g, x, y] = egcd(b, a % b);
  return [g, y, x - Math.floor(a / b) * y];
}

export const bezout = defineProblemFamily({
  id: ID,
  name: 'Bézout coefficients',
  description: 'integers x, y with a·x + b·y = gcd(a, b)',
  domain: 'number-theory',
  skills: [
    problemSkill(ID, 'combine', 'integer combinations', 'combine two numbers with integer coefficients', [], 0),
    problemSkill(
      ID,
      'euclid',
      'extended Euclid',
      'run the extended Euclidean algorithm on larger numbers',
      [`${ID}.combine`],
      2,
    ),
  ],
  levels: LEVELS,
  growth: { max: { times: 2, every: 5, max: 2 ** 26, why: 'a·x + b·y could pass 2^53 and stop being exact' } },
  slower: {
    ratio: 1.3,
    why: 'the numbers double every five levels: their digits grow by one every ~17 levels, below 2^26 so that a·x + b·y stays exact',
  },
  verifier,
  size: (d) => Math.log10((d as { a: number }).a),
  draw(rng, L) {
    const a = rng.int(Math.max(2, Math.floor(L.max / 3)), L.max);
    let b = rng.int(2, L.max);
    if (b === a) b = a - 1;
    const [g, x, y] = egcd(a, b);
    return {
      statement: `Find integers x and y with ${a}·x + ${b}·y = gcd(${a}, ${b}). Answer with the JSON array [x, y].`,
      data: { a, b },
      witness: [x, y],
      failures: [[x + 1, y], [y, x], [-x, -y], g === 1 ? [0, 0] : [x * 2, y * 2]],
    };
  },
});
