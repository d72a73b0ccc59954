// Sliding puzzle (planning): slide the tiles into order; the verifier replays the moves.
import { defineProblemFamily, gridText, problemSkill } from './kit.js';

const ID = 'sliding-puzzle';

const verifier = `function f(answer, data) {
  if (typeof answer !== 'string' || answer.length > data.maxMoves) return 0;
  var R = data.rows, C = data.cols, b = data.board.slice(), z = b.indexOf(0);
  for (var i = 0; i < answer.length; i++) {
    var r = Math.floor(z / C), c = z % C, m = answer[i], t;
    if (m === 'U') t = r > 0 ? z - C : -1; else if (m === 'D') t = r < R - 1 ? z + C : -1;
    else if (m === 'L') t = c > 0 ? z - 1 : -1; else if (m === 'R') t = c < C - 1 ? z + 1 : -1; else return 0;
    if (t < 0) return 0;
    b[z] = b[t]; b[t] = 0; z = t;
  }
  for (var k = 0; k < b.length - 1; k++) if (b[k] !== k + 1) return 0;
  return b[b.length - 1] === 0 ? 1 : 0;
}`;

interface Level extends Record<string, number> {
  rows: number;
  cols: number;
  scramble: number;
}

const LEVELS: Level[] = [
  { rows: 2, cols: 2, scramble: 3 },
  { rows: 2, cols: 3, scramble: 6 },
  { rows: 3, cols: 3, scramble: 8 },
  { rows: 3, cols: 3, scramble: 14 },
  { rows: 3, cols: 4, scramble: 20 },
];

const DELTA: Record<string, [number, number]> = { U: [-1, 0], D: [1, 0], L: [0, -1], R: [0, 1] };
const INVERSE: Record<string, string> = { U: 'D', D: 'U', L: 'R', R: 'L' };

export const slidingPuzzle = defineProblemFamily({
  id: ID,
  name: 'Sliding puzzle',
  description: 'moves of the blank that put the tiles of a sliding puzzle in order',
  domain: 'planning',
  skills: [
    problemSkill(ID, 'slide', 'slide tiles', 'move the blank and track the board', ['maze.moves'], 0),
    problemSkill(ID, 'plan', 'plan a solution', 'undo a longer scramble', [`${ID}.slide`], 2),
  ],
  levels: LEVELS,
  growth: {
    rows: { by: 1, every: 3, max: 30, why: 'the board would make a statement of many thousands of characters' },
    cols: { by: 1, every: 3 },
    scramble: { by: 5 },
  },
  verifier,
  size: (d) => (d as { rows: number; cols: number }).rows * (d as { cols: number }).cols,
  draw(rng, L) {
    const n = L.rows * L.cols;
    const board = [...Array.from({ length: n - 1 }, (_, i) => i + 1), 0];
    let z = n - 1;
    const scramble: string[] = [];
    while (scramble.length < L.scramble) {
      const m = rng.pick(Object.keys(DELTA));
      if (scramble.length > 0 && INVERSE[m] === scramble[scramble.length - 1]) continue;
      const [dr, dc] = DELTA[m]!;
      const [r, c] = [Math.floor(z / L.cols) + dr, (z % L.cols) + dc];
      if (r < 0 || c < 0 || r >= L.rows || c >= L.cols) continue;
      const t = r * L.cols + c;
      [board[z], board[t]] = [board[t]!, 0];
      z = t;
      scramble.push(m);
    }
    const solution = scramble
      .reverse()
      .map((m) => INVERSE[m]!)
      .join('');
    const rows = Array.from({ length: L.rows }, (_, r) => board.slice(r * L.cols, (r + 1) * L.cols));
    const maxMoves = 4 * L.scramble;
    return {
      statement:
        `A ${L.rows}×${L.cols} sliding puzzle (0 is the blank):\n${gridText(rows)}\n` +
        `Each move slides the blank U, D, L or R (it swaps with the tile on that side). Put the tiles in order 1, 2, …, ${n - 1} row by row with the blank last, ` +
        `in at most ${maxMoves} moves. Answer with the moves as a JSON string, e.g. "ULDR".`,
      data: { rows: L.rows, cols: L.cols, board, maxMoves },
      witness: solution,
      failures: [
        solution.slice(0, -1),
        solution.slice(1),
        `${solution}${solution.slice(-1)}`,
        solution.split('').reverse().join(''),
      ],
    };
  },
});
