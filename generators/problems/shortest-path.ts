// Shortest path (graphs): a cheapest path between two nodes of a weighted undirected graph. Any
// path of least total weight is accepted; the verifier computes the least weight itself.
import type { Rng } from '../../core/rng.js';
import { defineProblemFamily, problemSkill } from './kit.js';

const ID = 'shortest-path';

const verifier = `function f(answer, data) {
  var n = data.nodes, E = data.edges, dist = [];
  if (!Array.isArray(answer) || answer.length < 1 || answer.length > n) return 0;
  if (answer[0] !== data.from || answer[answer.length - 1] !== data.to) return 0;
  var total = 0;
  for (var j = 1; j < answer.length; j++) {
    var u = answer[j - 1], v = answer[j], w = -1;
    for (var k = 0; k < E.length && w < 0; k++) if ((E[k][0] === u && E[k][1] === v) || (E[k][0] === v && E[k][1] === u)) w = E[k][2];
    if (w < 0) return 0;
    total += w;
  }
  for (var i = 0; i < n; i++) dist.push(i === data.from ? 0 : 1e9);
  for (var changed = true, round = 0; changed && round < n; round++) {
    changed = false;
    for (var e = 0; e < E.length; e++) {
      var a = E[e][0], b = E[e][1], c = E[e][2];
      if (dist[a] + c < dist[b]) { dist[b] = dist[a] + c; changed = true; }
      if (dist[b] + c < dist[a]) { dist[a] = dist[b] + c; changed = true; }
    }
  }
  return total === dist[data.to] ? 1 : 0;
}`;

interface Level extends Record<string, number> {
  nodes: number;
  extraEdges: number;
  maxWeight: number;
}

const LEVELS: Level[] = [
  { nodes: 4, extraEdges: 1, maxWeight: 5 },
  { nodes: 6, extraEdges: 3, maxWeight: 9 },
  { nodes: 8, extraEdges: 5, maxWeight: 9 },
  { nodes: 10, extraEdges: 8, maxWeight: 15 },
  { nodes: 13, extraEdges: 12, maxWeight: 20 },
];

/** A connected graph: a random spanning tree plus extra edges, weights 1..maxWeight. */
export function randomGraph(rng: Rng, n: number, extra: number, maxWeight: number): number[][] {
  const edges: number[][] = [];
  const has = new Set<string>();
  const add = (a: number, b: number): void => {
    if (a === b || has.has(`${a},${b}`)) return;
    has.add(`${a},${b}`);
    has.add(`${b},${a}`);
    edges.push([a, b, rng.int(1, maxWeight)]);
  };
  for (let v = 1; v < n; v++) add(rng.int(0, v - 1), v);
  for (let k = 0; k < extra; k++) add(rng.int(0, n - 1), rng.int(0, n - 1));
  return edges;
}

function dijkstra(n: number, edges: number[][], from: number): { dist: number[]; prev: number[] } {
  const dist = Array.from({ length: n }, (_, i) => (i === from ? 0 : Infinity));
  const prev = Array.from({ length: n }, () => -1);
  const done = new Set<number>();
  while (done.size < n) {
    let u = -1;
    for (let i = 0; i < n; i++) if (!done.has(i) && (u < 0 || dist[i]! < dist[u]!)) u = i;
    done.add(u);
    for (const [a, b, w] of edges) {
      for (const [x, y] of [
        [a!, b!],
        [b!, a!],
      ] as const)
        if (x === u && dist[u]! + w! < dist[y]!) [dist[y], prev[y]] = [dist[u]! + w!, u];
    }
  }
  return { dist, prev };
}

export const shortestPath = defineProblemFamily({
  id: ID,
  name: 'Shortest path',
  description: 'a least-weight path between two nodes of a weighted graph',
  domain: 'graphs',
  skills: [
    problemSkill(ID, 'walk', 'follow edges', 'write a path of edges between two nodes', [], 0),
    problemSkill(ID, 'dijkstra', 'least-weight paths', 'compare path weights (Dijkstra)', [`${ID}.walk`], 1),
  ],
  levels: LEVELS,
  growth: {
    nodes: { by: 5, max: 600, why: 'the edges would make a statement of many thousands of characters' },
    extraEdges: { by: 6 },
    maxWeight: { by: 5 },
  },
  verifier,
  size: (d) => (d as { nodes: number }).nodes,
  draw(rng, L) {
    const edges = randomGraph(rng, L.nodes, L.extraEdges, L.maxWeight);
    const from = 0;
    const { dist, prev } = dijkstra(L.nodes, edges, from);
    let to = 1;
    for (let i = 1; i < L.nodes; i++) if (dist[i]! > dist[to]!) to = i;
    const path = [to];
    while (path[0] !== from) path.unshift(prev[path[0]!]!);
    // A near miss: the first edge out of `from` that the path does not take, then back onto it.
    const detour = edges.find(([a, b]) => (a === from && b !== path[1]) || (b === from && a !== path[1]));
    const via = detour ? (detour[0] === from ? detour[1]! : detour[0]!) : path[1]!;
    return {
      statement:
        `An undirected graph has nodes 0 to ${L.nodes - 1} and weighted edges [a, b, weight]: ${JSON.stringify(edges)}. ` +
        `Find a path from node ${from} to node ${to} of least total weight. Answer with the JSON array of the nodes on the path, from ${from} to ${to}.`,
      data: { nodes: L.nodes, edges, from, to },
      witness: path,
      failures: [[from, via, ...path], path.slice(0, -1), [from, to], [...path].reverse()],
    };
  },
});
