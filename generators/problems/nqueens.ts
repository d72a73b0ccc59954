// N-queens (constraints): place n queens, one per row, none attacking another, with some fixed.
import type { Rng } from '../../core/rng.js';
import { defineProblemFamily, problemSkill, shuffled } from './kit.js';

const ID = 'nqueens';

const verifier = `function f(answer, data) {
  var n = data.n;
  if (!Array.isArray(answer) || answer.length !== n) return 0;
  for (var r = 0; r < n; r++) {
    var c = answer[r];
    if (typeof c !== 'number' || c % 1 !== 0 || c < 0 || c >= n) return 0;
    for (var q = 0; q < r; q++) if (answer[q] === c || Math.abs(answer[q] - c) === r - q) return 0;
  }
  for (var k = 0; k < data.fixed.length; k++) if (answer[data.fixed[k][0]] !== data.fixed[k][1]) return 0;
  return 1;
}`;

interface Level extends Record<string, number> {
  n: number;
  fixed: number;
}

const LEVELS: Level[] = [
  { n: 4, fixed: 1 },
  { n: 5, fixed: 1 },
  { n: 6, fixed: 1 },
  { n: 7, fixed: 2 },
  { n: 8, fixed: 2 },
];

/** A random solution by backtracking over shuffled columns. */
function solve(rng: Rng, n: number): number[] {
  const cols: number[] = [];
  const place = (r: number): boolean => {
    if (r === n) return true;
    for (const c of shuffled(
      rng,
      Array.from({ length: n }, (_, i) => i),
    )) {
      if (cols.every((q, k) => q !== c && Math.abs(q - c) !== r - k)) {
        cols.push(c);
        if (place(r + 1)) return true;
        cols.pop();
      }
    }
    return false;
  };
  place(0);
  return cols;
}

export const nqueens = defineProblemFamily({
  id: ID,
  name: 'N-queens',
  description: 'place n non-attacking queens on an n×n board, some of them fixed',
  domain: 'constraints',
  skills: [
    problemSkill(ID, 'place', 'non-attacking placement', 'rows, columns and diagonals without clashes', [], 0),
    problemSkill(ID, 'backtrack', 'backtracking search', 'search larger boards with fixed queens', [`${ID}.place`], 3),
  ],
  levels: LEVELS,
  growth: {
    n: { by: 1, every: 2, max: 40, why: 'the backtracking search for a witness would take seconds' },
    fixed: { by: 1, every: 4 },
  },
  slower: {
    ratio: 2.5,
    why: 'the board grows one row every two levels: the witness is found by backtracking, whose cost grows exponentially with the board',
  },
  verifier,
  size: (d) => (d as { n: number }).n,
  draw(rng, L) {
    const sol = solve(rng, L.n);
    const rows = shuffled(
      rng,
      sol.map((_, i) => i),
    )
      .slice(0, L.fixed)
      .sort((a, b) => a - b);
    const fixed = rows.map((r) => [r, sol[r]!]);
    const swapped = [...sol];
    [swapped[0], swapped[1]] = [sol[1]!, sol[0]!];
    return {
      statement:
        `Place ${L.n} queens on a ${L.n}×${L.n} board, one in each row, so that no two share a column or a diagonal. ` +
        `Rows and columns are numbered from 0; these queens are already placed (row, column): ${fixed.map(([r, c]) => `(${r}, ${c})`).join(', ')}. ` +
        `Answer with a JSON array of ${L.n} column numbers, the queen's column for rows 0 to ${L.n - 1}.`,
      data: { n: L.n, fixed },
      witness: sol,
      failures: [swapped, sol.map((c) => (c + 1) % L.n), sol.slice(1), sol.map((_, i) => i)],
    };
  },
});
