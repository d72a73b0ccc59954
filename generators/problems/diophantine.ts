// Linear Diophantine equations (number theory): non-negative integers x, y with a·x + b·y = c.
import { defineProblemFamily, problemSkill } from './kit.js';

const ID = 'diophantine';

const verifier = `function f(answer, data) {
  if (!Array.isArray(answer) || answer.length !== data.coefficients.length) return 0;
  var s = 0;
  for (var i = 0; i < answer.length; i++) {
    var x = answer[i];
    if (typeof x !== 'number' || x % 1 !== 0 || x < 0 || x > data.c) return 0;
    s += data.coefficients[i] * x;
  }
  return s === data.c ? 1 : 0;
}`;

interface Level extends Record<string, number> {
  unknowns: number;
  maxCoefficient: number;
  maxValue: number;
}

const LEVELS: Level[] = [
  { unknowns: 2, maxCoefficient: 5, maxValue: 4 },
  { unknowns: 2, maxCoefficient: 12, maxValue: 9 },
  { unknowns: 3, maxCoefficient: 15, maxValue: 9 },
  { unknowns: 3, maxCoefficient: 40, maxValue: 20 },
  { unknowns: 4, maxCoefficient: 60, maxValue: 30 },
];

export const diophantine = defineProblemFamily({
  id: ID,
  name: 'Linear Diophantine equation',
  description: 'non-negative integers solving a·x + b·y (+ …) = c',
  domain: 'number-theory',
  skills: [
    problemSkill(ID, 'solve', 'integer solutions', 'search non-negative solutions of a linear equation', [], 0),
    problemSkill(ID, 'several', 'several unknowns', 'three or four unknowns', [`${ID}.solve`, 'bezout.combine'], 2),
  ],
  levels: LEVELS,
  growth: {
    unknowns: { by: 2, max: 200, why: 'the equation would make a statement of many thousands of characters' },
    maxCoefficient: { by: 10 },
    maxValue: { by: 5 },
  },
  verifier,
  size: (d) => (d as { coefficients: number[] }).coefficients.length,
  draw(rng, L) {
    const coefficients = Array.from({ length: L.unknowns }, () => rng.int(2, L.maxCoefficient));
    const xs = coefficients.map(() => rng.int(0, L.maxValue));
    xs[0] = Math.max(1, xs[0]!);
    const c = coefficients.reduce((s, a, i) => s + a * xs[i]!, 0);
    // (four unknowns up to level 4; grown levels name more: x, y, z, w, x5, x6, …)
    const names = coefficients.map((_, i) => ['x', 'y', 'z', 'w'][i] ?? `x${i + 1}`);
    const lhs = coefficients.map((a, i) => `${a}·${names[i]}`).join(' + ');
    return {
      statement: `Find whole numbers ${names.slice(0, L.unknowns).join(', ')} ≥ 0 with ${lhs} = ${c}. Answer with the JSON array [${names.slice(0, L.unknowns).join(', ')}].`,
      data: { coefficients, c },
      witness: xs,
      failures: [
        xs.map((x, i) => (i === 0 ? x + 1 : x)),
        xs.map((x, i) => (i === 0 ? x - 1 : x)),
        [...xs].reverse(),
        xs.slice(1),
      ],
    };
  },
});
