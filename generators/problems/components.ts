// Connected components (graphs): label the nodes so that two nodes share a label exactly when a
// path joins them. Any labelling of that partition is accepted.
import { defineProblemFamily, problemSkill, shuffled } from './kit.js';

const ID = 'components';

const verifier = `function f(answer, data) {
  var n = data.nodes;
  if (!Array.isArray(answer) || answer.length !== n) return 0;
  for (var i = 0; i < n; i++) if (typeof answer[i] !== 'number' || answer[i] % 1 !== 0) return 0;
  var parent = [];
  for (var j = 0; j < n; j++) parent.push(j);
  function root(x) { while (parent[x] !== x) x = parent[x] = parent[parent[x]]; return x; }
  for (var e = 0; e < data.edges.length; e++) parent[root(data.edges[e][0])] = root(data.edges[e][1]);
  var labelOf = {}, rootOf = {};
  for (var k = 0; k < n; k++) {
    var r = root(k), l = answer[k];
    if (labelOf[r] === undefined && rootOf[l] === undefined) { labelOf[r] = l; rootOf[l] = r; }
    else if (labelOf[r] !== l || rootOf[l] !== r) return 0;
  }
  return 1;
}`;

interface Level extends Record<string, number> {
  nodes: number;
  groups: number;
  extra: number;
}

const LEVELS: Level[] = [
  { nodes: 5, groups: 2, extra: 0 },
  { nodes: 7, groups: 3, extra: 1 },
  { nodes: 9, groups: 3, extra: 2 },
  { nodes: 12, groups: 4, extra: 3 },
  { nodes: 15, groups: 5, extra: 4 },
];

export const components = defineProblemFamily({
  id: ID,
  name: 'Connected components',
  description: 'label the nodes of a graph by connected component',
  domain: 'graphs',
  skills: [
    problemSkill(ID, 'reach', 'reachability', 'follow edges to find what is connected', [], 0),
    problemSkill(ID, 'partition', 'components as a partition', 'group every node by its component', [`${ID}.reach`], 1),
  ],
  levels: LEVELS,
  growth: {
    nodes: { by: 5, max: 600, why: 'the edges would make a statement of many thousands of characters' },
    groups: { by: 1, every: 3 },
    extra: { by: 1, every: 2 },
  },
  verifier,
  size: (d) => (d as { nodes: number }).nodes,
  draw(rng, L) {
    const group = shuffled(
      rng,
      Array.from({ length: L.nodes }, (_, i) => (i < L.groups ? i : rng.int(0, L.groups - 1))),
    );
    const edges: number[][] = [];
    for (let g = 0; g < L.groups; g++) {
      const members = group.flatMap((x, i) => (x === g ? [i] : []));
      for (let k = 1; k < members.length; k++) edges.push([members[rng.int(0, k - 1)]!, members[k]!]);
      for (let k = 0; k < L.extra && members.length > 2; k++)
        edges.push([members[0]!, members[rng.int(1, members.length - 1)]!]);
    }
    const sorted = shuffled(rng, edges).map(([a, b]) => (a! < b! ? [a!, b!] : [b!, a!]));
    const merged = group.map((g) => (g === 1 ? 0 : g));
    const split = group.map((g, i) =>
      i === group.findIndex((x) => group.filter((y) => y === x).length > 1) ? L.groups : g,
    );
    return {
      statement:
        `An undirected graph has nodes 0 to ${L.nodes - 1} and the edges ${JSON.stringify(sorted)}. Label every node with a number so that two nodes get the same label exactly when a path connects them. ` +
        `Answer with a JSON array of ${L.nodes} labels, node 0's first.`,
      data: { nodes: L.nodes, edges: sorted },
      witness: group,
      failures: [merged, split, group.map(() => 0), group.map((_, i) => i)],
    };
  },
});
