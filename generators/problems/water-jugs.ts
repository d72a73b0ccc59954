// Water jugs (planning): fill, empty and pour between jugs until one holds the target amount.
import { defineProblemFamily, problemSkill } from './kit.js';

const ID = 'water-jugs';

const verifier = `function f(answer, data) {
  var cap = data.capacities, n = cap.length, v = [];
  for (var i = 0; i < n; i++) v.push(0);
  if (!Array.isArray(answer) || answer.length > data.maxSteps) return 0;
  function jug(x) { return typeof x === 'number' && x % 1 === 0 && x >= 0 && x < n; }
  for (var k = 0; k < answer.length; k++) {
    var s = answer[k];
    if (!Array.isArray(s)) return 0;
    if (s[0] === 'fill' && s.length === 2 && jug(s[1])) v[s[1]] = cap[s[1]];
    else if (s[0] === 'empty' && s.length === 2 && jug(s[1])) v[s[1]] = 0;
    else if (s[0] === 'pour' && s.length === 3 && jug(s[1]) && jug(s[2]) && s[1] !== s[2]) {
      var m = Math.min(v[s[1]], cap[s[2]] - v[s[2]]); v[s[1]] -= m; v[s[2]] += m;
    } else return 0;
  }
  for (var j = 0; j < n; j++) if (v[j] === data.target) return 1;
  return 0;
}`;

interface Level extends Record<string, number> {
  jugs: number;
  maxCapacity: number;
  minSteps: number;
}

const LEVELS: Level[] = [
  { jugs: 2, maxCapacity: 5, minSteps: 2 },
  { jugs: 2, maxCapacity: 9, minSteps: 4 },
  { jugs: 2, maxCapacity: 13, minSteps: 6 },
  { jugs: 3, maxCapacity: 13, minSteps: 6 },
  { jugs: 3, maxCapacity: 19, minSteps: 8 },
];

type Step = [string, number] | [string, number, number];

/** Breadth-first search over jug contents: the shortest plan to each reachable amount. */
function plans(cap: number[]): Map<number, Step[]> {
  const start = cap.map(() => 0);
  const seen = new Map<string, Step[]>([[start.join(','), []]]);
  const best = new Map<number, Step[]>();
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift()!;
    const path = seen.get(v.join(','))!;
    for (const x of v) if (x > 0 && !best.has(x)) best.set(x, path);
    const steps: Step[] = [];
    cap.forEach((_, i) => {
      steps.push(['fill', i], ['empty', i]);
      cap.forEach((__, j) => i !== j && steps.push(['pour', i, j]));
    });
    for (const s of steps) {
      const w = [...v];
      if (s[0] === 'fill') w[s[1]] = cap[s[1]]!;
      else if (s[0] === 'empty') w[s[1]] = 0;
      else {
        const m = Math.min(w[s[1]]!, cap[s[2]!]! - w[s[2]!]!);
        w[s[1]]! -= m;
        w[s[2]!]! += m;
      }
      const k = w.join(',');
      if (!seen.has(k)) {
        seen.set(k, [...path, s]);
        queue.push(w);
      }
    }
  }
  return best;
}

export const waterJugs = defineProblemFamily({
  id: ID,
  name: 'Water jugs',
  description: 'fill, empty and pour jugs until one holds a target amount',
  domain: 'planning',
  skills: [
    problemSkill(ID, 'simulate', 'track jug contents', 'apply fill, empty and pour steps', [], 0),
    problemSkill(
      ID,
      'plan',
      'plan measurements',
      'reach an amount that needs several pours',
      [`${ID}.simulate`, 'bezout.combine'],
      2,
    ),
  ],
  levels: LEVELS,
  growth: {
    maxCapacity: { by: 1, max: 100, why: 'the search over every state of the jugs would take seconds' },
    minSteps: { by: 1, every: 2 },
  },
  slower: {
    ratio: 1.5,
    why: 'the reference plan comes from a breadth-first search over every state of the jugs, whose number grows with the capacities to the power of the jugs',
  },
  verifier,
  size: (d) => (d as { capacities: number[] }).capacities.reduce((a, b) => a + b, 0),
  draw(rng, L) {
    const capacities = Array.from({ length: L.jugs }, () => rng.int(2, L.maxCapacity));
    const best = plans(capacities);
    const far = [...best].filter(
      ([, p]) => p.length >= Math.min(L.minSteps, Math.max(...[...best.values()].map((q) => q.length))),
    );
    const [target, plan] = rng.pick(far.length > 0 ? far : [...best]);
    const maxSteps = 3 * plan.length + 4;
    return {
      statement:
        `There are ${L.jugs} empty jugs holding at most ${JSON.stringify(capacities)} litres. Steps: ["fill", i] fills jug i, ["empty", i] empties it, ` +
        `["pour", i, j] pours from jug i into jug j until i is empty or j is full (jugs numbered from 0). In at most ${maxSteps} steps, make some jug hold exactly ${target} litres. ` +
        'Answer with the JSON array of steps.',
      data: { capacities, target, maxSteps },
      witness: plan,
      failures: [plan.slice(0, -1), plan.slice(1), [...plan, ['pour', 0, 0]], [['fill', L.jugs]]],
    };
  },
});
