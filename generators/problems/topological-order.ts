// Topological order (graphs): order the tasks so every dependency comes before what needs it.
import { defineProblemFamily, problemSkill, shuffled } from './kit.js';

const ID = 'topological-order';

const verifier = `function f(answer, data) {
  var n = data.nodes;
  if (!Array.isArray(answer) || answer.length !== n) return 0;
  var pos = {};
  for (var i = 0; i < n; i++) {
    var v = answer[i];
    if (typeof v !== 'number' || v % 1 !== 0 || v < 0 || v >= n || pos[v] !== undefined) return 0;
    pos[v] = i;
  }
  for (var e = 0; e < data.edges.length; e++) if (pos[data.edges[e][0]] > pos[data.edges[e][1]]) return 0;
  return 1;
}`;

interface Level extends Record<string, number> {
  nodes: number;
  edges: number;
}

const LEVELS: Level[] = [
  { nodes: 4, edges: 3 },
  { nodes: 6, edges: 6 },
  { nodes: 8, edges: 10 },
  { nodes: 10, edges: 15 },
  { nodes: 13, edges: 22 },
];

export const topologicalOrder = defineProblemFamily({
  id: ID,
  name: 'Topological order',
  description: 'order the nodes of a DAG so every edge points forward',
  domain: 'graphs',
  skills: [
    problemSkill(ID, 'order', 'respect dependencies', 'put each prerequisite before what needs it', [], 0),
    problemSkill(
      ID,
      'kahn',
      'topological sort',
      'order a larger DAG (Kahn’s algorithm)',
      [`${ID}.order`, 'shortest-path.walk'],
      2,
    ),
  ],
  levels: LEVELS,
  growth: {
    nodes: { by: 5, max: 600, why: 'the edges would make a statement of many thousands of characters' },
    edges: { by: 8 },
  },
  verifier,
  size: (d) => (d as { nodes: number }).nodes,
  draw(rng, L) {
    const order = shuffled(
      rng,
      Array.from({ length: L.nodes }, (_, i) => i),
    );
    const edges: number[][] = [];
    const has = new Set<string>();
    for (let k = 0; k < L.edges * 3 && edges.length < L.edges; k++) {
      const i = rng.int(0, L.nodes - 2);
      const j = rng.int(i + 1, L.nodes - 1);
      const key = `${order[i]},${order[j]}`;
      if (!has.has(key)) {
        has.add(key);
        edges.push([order[i]!, order[j]!]);
      }
    }
    edges.sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
    const [a, b] = edges[0]!;
    const broken = order.map((v) => (v === a ? b! : v === b ? a! : v));
    return {
      statement:
        `Nodes 0 to ${L.nodes - 1}; each pair [a, b] in ${JSON.stringify(edges)} means a must come before b. ` +
        `Answer with a JSON array of all ${L.nodes} nodes in an order that respects every pair.`,
      data: { nodes: L.nodes, edges },
      witness: order,
      failures: [broken, order.slice(1), [...order].reverse(), [...order.slice(0, -1), order[0]!]],
    };
  },
});
