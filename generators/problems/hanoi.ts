// Towers of Hanoi (planning): move the tower to another peg, one disk at a time, never a larger disk
// on a smaller one; the verifier replays the moves. Higher levels start from a mixed position.
import { defineProblemFamily, problemSkill } from './kit.js';

const ID = 'hanoi';

const verifier = `function f(answer, data) {
  if (!Array.isArray(answer) || answer.length > data.maxMoves) return 0;
  var pegs = [data.pegs[0].slice(), data.pegs[1].slice(), data.pegs[2].slice()];
  for (var i = 0; i < answer.length; i++) {
    var m = answer[i];
    if (!Array.isArray(m) || m.length !== 2) return 0;
    var a = m[0], b = m[1];
    if ((a !== 0 && a !== 1 && a !== 2) || (b !== 0 && b !== 1 && b !== 2) || a === b || pegs[a].length === 0) return 0;
    var d = pegs[a][pegs[a].length - 1];
    if (pegs[b].length > 0 && pegs[b][pegs[b].length - 1] < d) return 0;
    pegs[b].push(pegs[a].pop());
  }
  var g = pegs[data.goal];
  if (g.length !== data.disks) return 0;
  for (var k = 0; k < g.length; k++) if (g[k] !== data.disks - k) return 0;
  return 1;
}`;

interface Level extends Record<string, number> {
  disks: number;
  mixed: number;
}

const LEVELS: Level[] = [
  { disks: 2, mixed: 0 },
  { disks: 3, mixed: 0 },
  { disks: 3, mixed: 1 },
  { disks: 4, mixed: 1 },
  { disks: 5, mixed: 1 },
];

type Move = [number, number];

/** Moves that bring disks 1..k (wherever they are) onto `to`, largest first (the standard recursion). */
function solve(where: number[], k: number, to: number, out: Move[]): void {
  if (k === 0) return;
  const from = where[k]!;
  if (from === to) return solve(where, k - 1, to, out);
  const spare = 3 - from - to;
  solve(where, k - 1, spare, out);
  out.push([from, to]);
  where[k] = to;
  solve(where, k - 1, to, out);
}

export const hanoi = defineProblemFamily({
  id: ID,
  name: 'Towers of Hanoi',
  description: 'legal moves that gather all disks on the goal peg',
  domain: 'planning',
  skills: [
    problemSkill(ID, 'moves', 'legal disk moves', 'move one disk, never onto a smaller one', [], 0),
    problemSkill(
      ID,
      'recursion',
      'recursive planning',
      'move a tower by moving the smaller tower out of the way',
      [`${ID}.moves`],
      1,
    ),
    problemSkill(ID, 'mixed', 'from any position', 'gather disks from a mixed position', [`${ID}.recursion`], 2),
  ],
  levels: LEVELS,
  growth: {
    disks: { by: 1, log: true, max: 13, why: 'the 2^14 − 1 moves of 14 disks would pass a 64 KiB completion' },
  },
  slower: {
    ratio: 4,
    why: 'an answer doubles with each disk, so disks grow with the logarithm of the level (one more at d = 5, 7, 11, 19, 35, …)',
  },
  verifier,
  size: (d) => (d as { disks: number }).disks,
  draw(rng, L) {
    // A tower on one peg (any of the three), or at mixed levels each disk on any peg.
    const start = rng.int(0, 2);
    const where = Array.from({ length: L.disks + 1 }, () => (L.mixed ? rng.int(0, 2) : start));
    // The largest disk is not on the goal peg yet, so there is always something to do.
    const goal = (where[L.disks]! + rng.int(1, 2)) % 3;
    const pegs: number[][] = [[], [], []];
    for (let d = L.disks; d >= 1; d--) pegs[where[d]!]!.push(d);
    const moves: Move[] = [];
    solve([...where], L.disks, goal, moves);
    const maxMoves = 2 ** L.disks - 1;
    const first = moves[0] ?? [0, 1];
    return {
      statement:
        `Three pegs 0, 1, 2 hold disks 1 (smallest) to ${L.disks} (largest), listed bottom to top: ${JSON.stringify(pegs)}. ` +
        `Move one top disk at a time, never onto a smaller disk, until all disks are on peg ${goal}, in at most ${maxMoves} moves. ` +
        'Answer with the JSON array of moves [from, to].',
      data: { disks: L.disks, pegs, goal, maxMoves },
      witness: moves,
      failures: [
        moves.slice(0, -1),
        [[first[1], first[0]], ...moves.slice(1)],
        [...moves].reverse(),
        [...moves, [goal, (goal + 1) % 3]],
      ],
    };
  },
});
