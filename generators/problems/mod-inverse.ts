// Modular inverse (number theory): x with a·x ≡ 1 (mod m), 0 ≤ x < m.
import { defineProblemFamily, problemSkill } from './kit.js';
import { egcd } from './bezout.js';

const ID = 'mod-inverse';

const verifier = `function f(answer, data) {
  var x = answer, m = data.m;
  if (typeof x !== 'number' || x % 1 !== 0 || x < 0 || x >= m) return 0;
  var r = 0, a = data.a % m;
  for (var i = 0; i < 64 && x > 0; i++) { if (x % 2 === 1) r = (r + a) % m; a = (a * 2) % m; x = Math.floor(x / 2); }
  return r === 1 % m ? 1 : 0;
}`;

interface Level extends Record<string, number> {
  max: number;
}

const LEVELS: Level[] = [{ max: 11 }, { max: 30 }, { max: 100 }, { max: 1000 }, { max: 100000 }];

export const modInverse = defineProblemFamily({
  id: ID,
  name: 'Modular inverse',
  description: 'the inverse of a modulo m',
  domain: 'number-theory',
  skills: [
    problemSkill(ID, 'residues', 'residues', 'multiply and reduce modulo m', [], 0),
    problemSkill(
      ID,
      'inverse',
      'modular inverses',
      'invert with the extended Euclidean algorithm',
      [`${ID}.residues`, 'bezout.euclid'],
      2,
    ),
  ],
  levels: LEVELS,
  growth: { max: { times: 2, every: 5, max: 2 ** 26, why: 'a·x could pass 2^53 and stop being exact' } },
  slower: {
    ratio: 1.25,
    why: 'the modulus doubles every five levels: its digits grow by one every ~17 levels, below 2^26 so that a·x stays exact',
  },
  verifier,
  size: (d) => Math.log10((d as { m: number }).m),
  draw(rng, L) {
    let m = rng.int(Math.max(5, Math.floor(L.max / 3)), L.max);
    let a = rng.int(2, m - 1);
    while (egcd(m, a)[0] !== 1) {
      m = rng.int(Math.max(5, Math.floor(L.max / 3)), L.max);
      a = rng.int(2, m - 1);
    }
    const x = ((egcd(a, m)[1] % m) + m) % m;
    return {
      statement: `Find the whole number x, 0 ≤ x < ${m}, with ${a}·x ≡ 1 (mod ${m}). Answer with x as a JSON number.`,
      data: { a, m },
      witness: x,
      failures: [(x + 1) % m, m - x, x + m, a],
    };
  },
});
