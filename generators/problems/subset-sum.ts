// Subset sum (arithmetic): choose some of the numbers (by position) that add up to a target.
import { defineProblemFamily, problemSkill, shuffled } from './kit.js';

const ID = 'subset-sum';

const verifier = `function f(answer, data) {
  if (!Array.isArray(answer) || answer.length === 0 || answer.length > data.numbers.length) return 0;
  var used = {}, total = 0;
  for (var k = 0; k < answer.length; k++) {
    var i = answer[k];
    if (typeof i !== 'number' || i % 1 !== 0 || i < 0 || i >= data.numbers.length || used[i]) return 0;
    used[i] = true; total += data.numbers[i];
  }
  return total === data.target ? 1 : 0;
}`;

interface Level extends Record<string, number> {
  numbers: number;
  pick: number;
  max: number;
}

const LEVELS: Level[] = [
  { numbers: 4, pick: 2, max: 9 },
  { numbers: 6, pick: 3, max: 20 },
  { numbers: 8, pick: 4, max: 40 },
  { numbers: 10, pick: 5, max: 80 },
  { numbers: 14, pick: 6, max: 150 },
];

export const subsetSum = defineProblemFamily({
  id: ID,
  name: 'Subset sum',
  description: 'pick numbers (by their positions) whose sum is a target',
  domain: 'arithmetic',
  skills: [
    problemSkill(ID, 'pick', 'choose a subset with a given sum', 'search the subsets of a short list for a sum', [], 0),
    problemSkill(ID, 'search', 'subset search in long lists', 'prune a search over many subsets', [`${ID}.pick`], 2),
  ],
  levels: LEVELS,
  growth: {
    numbers: { by: 6, max: 1200, why: 'the list would make a statement of many thousands of characters' },
    pick: { by: 2 },
    max: { by: 10 },
  },
  verifier,
  size: (d) => (d as { numbers: number[] }).numbers.length,
  draw(rng, L) {
    const numbers = Array.from({ length: L.numbers }, () => rng.int(1, L.max));
    const chosen = shuffled(
      rng,
      numbers.map((_, i) => i),
    )
      .slice(0, L.pick)
      .sort((a, b) => a - b);
    const target = chosen.reduce((s, i) => s + numbers[i]!, 0);
    const out = numbers.findIndex((_, i) => !chosen.includes(i));
    return {
      statement:
        `Numbers (positions 0 to ${L.numbers - 1}): ${JSON.stringify(numbers)}. Choose some of them, each position at most once, whose sum is exactly ${target}. ` +
        'Answer with the JSON array of the chosen positions, e.g. [0, 2].',
      data: { numbers, target },
      witness: chosen,
      failures: [chosen.slice(1), [...chosen, out], [...chosen, chosen[0]!], chosen.map((i) => (i + 1) % L.numbers)],
    };
  },
});
