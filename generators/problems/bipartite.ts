// Bipartite check with a witness (graphs): either a 2-colouring of the graph, or an odd cycle that
// proves none exists. The answer is {"colouring": [...]} or {"oddCycle": [...]}.
import { defineProblemFamily, problemSkill, shuffled, type ProblemInstance } from './kit.js';

const ID = 'bipartite';

const verifier = `function f(answer, data) {
  if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) return 0;
  var n = data.nodes, adj = {};
  for (var e = 0; e < data.edges.length; e++) { adj[data.edges[e][0] + ',' + data.edges[e][1]] = true; adj[data.edges[e][1] + ',' + data.edges[e][0]] = true; }
  var c = answer.colouring, cyc = answer.oddCycle;
  if (Array.isArray(c) && cyc === undefined) {
    if (c.length !== n) return 0;
    for (var i = 0; i < n; i++) if (c[i] !== 0 && c[i] !== 1) return 0;
    for (var k = 0; k < data.edges.length; k++) if (c[data.edges[k][0]] === c[data.edges[k][1]]) return 0;
    return 1;
  }
  if (Array.isArray(cyc) && c === undefined) {
    var m = cyc.length, seen = {};
    if (m < 3 || m % 2 === 0 || m > n) return 0;
    for (var j = 0; j < m; j++) {
      var v = cyc[j];
      if (typeof v !== 'number' || seen[v]) return 0;
      seen[v] = true;
      if (!adj[v + ',' + cyc[(j + 1) % m]]) return 0;
    }
    return 1;
  }
  return 0;
}`;

interface Level extends Record<string, number> {
  nodes: number;
  extra: number;
}

const LEVELS: Level[] = [
  { nodes: 4, extra: 1 },
  { nodes: 6, extra: 2 },
  { nodes: 8, extra: 3 },
  { nodes: 10, extra: 5 },
  { nodes: 13, extra: 7 },
];

export const bipartite = defineProblemFamily({
  id: ID,
  name: 'Bipartite check',
  description: 'a 2-colouring of a graph, or an odd cycle that proves there is none',
  domain: 'graphs',
  skills: [
    problemSkill(
      ID,
      'colour',
      'two-colour a bipartite graph',
      'alternate sides along the edges',
      ['graph-colouring.two'],
      0,
    ),
    problemSkill(
      ID,
      'odd-cycle',
      'odd cycles as certificates',
      'find an odd cycle when no 2-colouring exists',
      [`${ID}.colour`],
      1,
    ),
  ],
  levels: LEVELS,
  growth: {
    nodes: { by: 5, max: 600, why: 'the edges would make a statement of many thousands of characters' },
    extra: { by: 3 },
  },
  verifier,
  size: (d) => (d as { nodes: number }).nodes,
  draw(rng, L): ProblemInstance {
    const side = Array.from({ length: L.nodes }, (_, i) => (i < 2 ? i : rng.int(0, 1)));
    const edges: number[][] = [];
    const has = new Set<string>();
    const add = (a: number, b: number): void => {
      const [x, y] = a < b ? [a, b] : [b, a];
      if (x !== y && !has.has(`${x},${y}`)) {
        has.add(`${x},${y}`);
        edges.push([x, y]);
      }
    };
    // A connected bipartite graph: each node joins an earlier node of the other side.
    for (let v = 2; v < L.nodes; v++) {
      const others = Array.from({ length: v }, (_, i) => i).filter((i) => side[i] !== side[v]);
      add(rng.pick(others), v);
    }
    add(0, 1);
    for (let k = 0; k < L.extra; k++) {
      const a = rng.int(0, L.nodes - 1);
      const others = side.flatMap((s, i) => (s !== side[a] ? [i] : []));
      add(a, rng.pick(others));
    }
    const odd = rng.bool(0.5);
    if (!odd) {
      return {
        statement: statement(L.nodes, shuffled(rng, edges)),
        data: { nodes: L.nodes, edges },
        witness: { colouring: side },
        failures: [
          { colouring: side.map((s, i) => (i === 0 ? 1 - s : s)) },
          { colouring: side.map(() => 0) },
          { oddCycle: [0, 1, 2] },
          side,
        ],
      };
    }
    // Plant an odd cycle: a path between two same-side nodes through the tree, closed by one edge.
    const path = bfsPath(
      L.nodes,
      edges,
      0,
      side.findIndex((s, i) => i > 0 && s === 0),
    );
    if (path.length < 3)
      return {
        statement: statement(L.nodes, edges),
        data: { nodes: L.nodes, edges },
        witness: { colouring: side },
        failures: [{ colouring: side.map(() => 0) }, { oddCycle: [0, 1, 2] }],
      };
    add(path[0]!, path[path.length - 1]!);
    return {
      statement: statement(L.nodes, edges),
      data: { nodes: L.nodes, edges },
      witness: { oddCycle: path },
      failures: [
        { oddCycle: path.slice(1) },
        { colouring: side },
        { oddCycle: [...path, path[0]!] },
        { oddCycle: path.slice(0, 2) },
      ],
    };
  },
});

function statement(nodes: number, edges: number[][]): string {
  return (
    `An undirected graph has nodes 0 to ${nodes - 1} and the edges ${JSON.stringify(edges)}. Is it bipartite? If it is, answer {"colouring": [...]} with a side (0 or 1) for every node, ` +
    'node 0 first, so that every edge joins different sides. If it is not, answer {"oddCycle": [...]} with the nodes of a cycle of odd length, in order around the cycle, each once.'
  );
}

function bfsPath(n: number, edges: number[][], from: number, to: number): number[] {
  const prev = Array.from({ length: n }, () => -1);
  const queue = [from];
  prev[from] = from;
  while (queue.length > 0) {
    const u = queue.shift()!;
    for (const [a, b] of edges) {
      const v = a === u ? b! : b === u ? a! : -1;
      if (v >= 0 && prev[v] === -1) {
        prev[v] = u;
        queue.push(v);
      }
    }
  }
  if (to < 0 || prev[to] === -1) return [];
  const path = [to];
  while (path[0] !== from) path.unshift(prev[path[0]!]!);
  return path;
}
