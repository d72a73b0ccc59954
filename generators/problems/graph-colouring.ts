// Graph colouring (constraints): colour the nodes with k colours so no edge joins equal colours.
import { defineProblemFamily, problemSkill } from './kit.js';

const ID = 'graph-colouring';

const verifier = `function f(answer, data) {
  if (!Array.isArray(answer) || answer.length !== data.nodes) return 0;
  for (var i = 0; i < answer.length; i++) {
    var c = answer[i];
    if (typeof c !== 'number' || c % 1 !== 0 || c < 0 || c >= data.colours) return 0;
  }
  for (var e = 0; e < data.edges.length; e++) if (answer[data.edges[e][0]] === answer[data.edges[e][1]]) return 0;
  return 1;
}`;

interface Level extends Record<string, number> {
  nodes: number;
  colours: number;
  density: number;
}

const LEVELS: Level[] = [
  { nodes: 5, colours: 2, density: 0.5 },
  { nodes: 6, colours: 3, density: 0.5 },
  { nodes: 8, colours: 3, density: 0.55 },
  { nodes: 10, colours: 3, density: 0.6 },
  { nodes: 12, colours: 4, density: 0.6 },
];

export const graphColouring = defineProblemFamily({
  id: ID,
  name: 'Graph colouring',
  description: 'colour a graph with k colours, no edge between equal colours',
  domain: 'constraints',
  skills: [
    problemSkill(ID, 'two', '2-colouring', 'alternate two colours along the edges', [], 0),
    problemSkill(ID, 'k', 'k-colouring', 'colour with three or four colours', [`${ID}.two`], 1),
  ],
  levels: LEVELS,
  growth: {
    nodes: { by: 5, max: 600, why: 'the edges would make a statement of many thousands of characters' },
    density: { times: 0.92 },
  },
  verifier,
  size: (d) => (d as { nodes: number }).nodes,
  draw(rng, L) {
    // A planted colouring: edges only join different colours, so the instance is colourable.
    const colour = Array.from({ length: L.nodes }, (_, i) => (i < L.colours ? i : rng.int(0, L.colours - 1)));
    const edges: number[][] = [];
    for (let a = 0; a < L.nodes; a++)
      for (let b = a + 1; b < L.nodes; b++) if (colour[a] !== colour[b] && rng.next() < L.density) edges.push([a, b]);
    if (edges.length === 0) edges.push([0, 1]);
    const [a, b] = edges[0]!;
    const clash = colour.map((c, i) => (i === b ? colour[a!]! : c));
    return {
      statement:
        `A graph has nodes 0 to ${L.nodes - 1} and the edges ${JSON.stringify(edges)}. Give every node a colour from 0 to ${L.colours - 1} so that the two ends of every edge have different colours. ` +
        `Answer with a JSON array of ${L.nodes} colours, the colour of node 0 first.`,
      data: { nodes: L.nodes, colours: L.colours, edges },
      witness: colour,
      failures: [clash, colour.map(() => 0), colour.map((c) => c + 1), colour.slice(1)],
    };
  },
});
