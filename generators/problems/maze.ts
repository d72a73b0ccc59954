// Maze (planning): a sequence of moves from the start to the goal through open cells.
import type { Rng } from '../../core/rng.js';
import { defineProblemFamily, problemSkill, shuffled } from './kit.js';

const ID = 'maze';

const verifier = `function f(answer, data) {
  var g = data.grid, R = g.length, C = g[0].length;
  if (typeof answer !== 'string' || answer.length > R * C) return 0;
  var r = data.start[0], c = data.start[1];
  for (var i = 0; i < answer.length; i++) {
    var m = answer[i];
    if (m === 'U') r--; else if (m === 'D') r++; else if (m === 'L') c--; else if (m === 'R') c++; else return 0;
    if (r < 0 || c < 0 || r >= R || c >= C || g[r][c] === '#') return 0;
  }
  return r === data.goal[0] && c === data.goal[1] ? 1 : 0;
}`;

interface Level extends Record<string, number> {
  rows: number;
  cols: number;
}

const LEVELS: Level[] = [
  { rows: 3, cols: 5 },
  { rows: 5, cols: 5 },
  { rows: 7, cols: 7 },
  { rows: 9, cols: 9 },
  { rows: 11, cols: 13 },
];

/** A perfect maze on the odd cells (randomised depth-first carving), as rows of '.' and '#'. */
function carve(rng: Rng, R: number, C: number): string[][] {
  const g = Array.from({ length: R }, () => Array.from({ length: C }, () => '#'));
  const stack: [number, number][] = [[0, 0]];
  g[0]![0] = '.';
  while (stack.length > 0) {
    const [r, c] = stack[stack.length - 1]!;
    const next = shuffled(rng, [
      [-2, 0],
      [2, 0],
      [0, -2],
      [0, 2],
    ] as [number, number][]).find(([dr, dc]) => g[r + dr]?.[c + dc] === '#');
    if (!next) {
      stack.pop();
      continue;
    }
    g[r + next[0] / 2]![c + next[1] / 2] = '.';
    g[r + next[0]]![c + next[1]] = '.';
    stack.push([r + next[0], c + next[1]]);
  }
  return g;
}

function solve(g: string[][], start: [number, number], goal: [number, number]): string {
  const key = (r: number, c: number): string => `${r},${c}`;
  const prev = new Map<string, [string, number, number]>([[key(...start), ['', -1, -1]]]);
  const queue: [number, number][] = [start];
  const moves: [string, number, number][] = [
    ['U', -1, 0],
    ['D', 1, 0],
    ['L', 0, -1],
    ['R', 0, 1],
  ];
  while (queue.length > 0) {
    const [r, c] = queue.shift()!;
    if (r === goal[0] && c === goal[1]) break;
    for (const [m, dr, dc] of moves) {
      const [nr, nc] = [r + dr, c + dc];
      if (g[nr]?.[nc] === '.' && !prev.has(key(nr, nc))) {
        prev.set(key(nr, nc), [m, r, c]);
        queue.push([nr, nc]);
      }
    }
  }
  let out = '';
  let [r, c] = goal;
  while (r !== start[0] || c !== start[1]) {
    const [m, pr, pc] = prev.get(key(r, c))!;
    out = m + out;
    [r, c] = [pr, pc];
  }
  return out;
}

export const maze = defineProblemFamily({
  id: ID,
  name: 'Maze path',
  description: 'moves (U, D, L, R) from the start to the goal through open cells',
  domain: 'planning',
  skills: [
    problemSkill(ID, 'moves', 'grid moves', 'follow a route cell by cell without entering walls', [], 0),
    problemSkill(
      ID,
      'search',
      'path search',
      'find a route through a larger maze (BFS)',
      [`${ID}.moves`, 'shortest-path.walk'],
      2,
    ),
  ],
  levels: LEVELS,
  growth: {
    rows: { by: 2, max: 171, why: 'the grid would make a statement of many thousands of characters' },
    cols: { by: 2 },
  },
  verifier,
  size: (d) => (d as { grid: string[] }).grid.length * (d as { grid: string[] }).grid[0]!.length,
  draw(rng, L) {
    const g = carve(rng, L.rows, L.cols);
    const start: [number, number] = [0, 0];
    const goal: [number, number] = [L.rows - 1, L.cols - 1];
    const path = solve(g, start, goal);
    const grid = g.map((r) => r.join(''));
    const flip = (m: string): string => ({ U: 'D', D: 'U', L: 'R', R: 'L' })[m] ?? m;
    return {
      statement:
        `A maze of ${L.rows} rows and ${L.cols} columns ('.' open, '#' wall):\n${grid.join('\n')}\n` +
        `Start at the top-left cell (row 0, column 0) and reach the bottom-right cell (row ${L.rows - 1}, column ${L.cols - 1}), moving U (up), D (down), L (left) or R (right) through open cells. ` +
        'Answer with the moves as a JSON string, e.g. "RRDD".',
      data: { grid, start, goal },
      witness: path,
      failures: [path.slice(0, -1), path.replace(/^./, (m) => flip(m)), path.split('').reverse().join(''), `${path}R`],
    };
  },
});
