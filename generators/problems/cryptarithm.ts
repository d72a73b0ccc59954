// Cryptarithm (arithmetic): letters stand for distinct digits so that a sum of words holds.
import { defineProblemFamily, problemSkill, shuffled } from './kit.js';

const ID = 'cryptarithm';
const LETTERS = 'ABCDEFGHJKMNPRSTUVWXYZ';

const verifier = `function f(answer, data) {
  if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) return 0;
  var letters = data.letters, used = {};
  for (var k = 0; k < letters.length; k++) {
    var d = answer[letters[k]];
    if (!Object.prototype.hasOwnProperty.call(answer, letters[k]) || typeof d !== 'number' || d % 1 !== 0 || d < 0 || d > 9 || used[d]) return 0;
    used[d] = true;
  }
  function value(w) {
    if (w.length > 1 && answer[w[0]] === 0) return -1;
    var v = 0; for (var j = 0; j < w.length; j++) v = v * 10 + answer[w[j]]; return v;
  }
  var total = 0;
  for (var t = 0; t < data.terms.length; t++) { var v = value(data.terms[t]); if (v < 0) return 0; total += v; }
  var r = value(data.result);
  return r >= 0 && r === total ? 1 : 0;
}`;

interface Level extends Record<string, number> {
  terms: number;
  digits: number;
}

const LEVELS: Level[] = [
  { terms: 2, digits: 1 },
  { terms: 2, digits: 2 },
  { terms: 2, digits: 3 },
  { terms: 3, digits: 3 },
  { terms: 3, digits: 4 },
];

export const cryptarithm = defineProblemFamily({
  id: ID,
  name: 'Cryptarithm',
  description: 'assign distinct digits to letters so that a sum of words is right',
  domain: 'arithmetic',
  skills: [
    problemSkill(
      ID,
      'carry',
      'column addition with carries',
      'reason about digits and carries column by column',
      [],
      0,
    ),
    problemSkill(
      ID,
      'distinct',
      'distinct-digit constraints',
      'keep letters on distinct digits, no leading zero',
      [`${ID}.carry`],
      1,
    ),
  ],
  levels: LEVELS,
  growth: {
    terms: { by: 4 },
    digits: { by: 1, every: 8, max: 13, why: 'a sum of the terms could pass 2^53 and lose its last digits' },
  },
  verifier,
  size: (d) => (d as { letters: string[] }).letters.length,
  draw(rng, L) {
    // Numbers with distinct digits overall would be too rare; letters are the distinct digits that appear.
    const lo = L.digits === 1 ? 1 : 10 ** (L.digits - 1);
    const nums = Array.from({ length: L.terms }, () => rng.int(lo, 10 ** L.digits - 1));
    const sum = nums.reduce((a, b) => a + b, 0);
    const digits = [...new Set([...nums, sum].flatMap((n) => [...String(n)].map(Number)))];
    const letters = shuffled(rng, [...LETTERS]).slice(0, digits.length);
    const of = new Map(digits.map((d, i) => [d, letters[i]!]));
    const word = (n: number): string => [...String(n)].map((c) => of.get(Number(c))!).join('');
    const terms = nums.map(word);
    const result = word(sum);
    const witness: Record<string, number> = Object.fromEntries(digits.map((d, i) => [letters[i]!, d]));
    const sorted = [...letters].sort();
    const [a, b] = [sorted[0]!, sorted[1] ?? sorted[0]!];
    const swapped = { ...witness, [a]: witness[b]!, [b]: witness[a]! };
    const bumped = { ...witness, [a]: (witness[a]! + 1) % 10 };
    const dup = { ...witness, [a]: witness[b]! };
    const missing = Object.fromEntries(Object.entries(witness).filter(([k]) => k !== a));
    return {
      statement:
        `Each letter stands for a different digit (0-9) and no word of more than one letter starts with 0. Make this sum true: ${terms.join(' + ')} = ${result}. ` +
        `Answer with a JSON object mapping every letter (${sorted.join(', ')}) to its digit, e.g. {"${a}": 1}.`,
      data: { terms, result, letters: sorted },
      witness: Object.fromEntries(sorted.map((k) => [k, witness[k]!])),
      failures: [swapped, bumped, dup, missing],
    };
  },
});
