// Sudoku (constraints): complete a grid so every row, column and box holds each symbol once.
// 4×4 at the lowest levels, then 6×6, then 9×9; more holes as the level rises.
import type { Rng } from '../../core/rng.js';
import { defineProblemFamily, gridText, problemSkill, shuffled } from './kit.js';

const ID = 'sudoku';

const verifier = `function f(answer, data) {
  var n = data.n, bh = data.boxRows, bw = data.boxCols, g = data.grid;
  if (!Array.isArray(answer) || answer.length !== n) return 0;
  for (var r = 0; r < n; r++) {
    if (!Array.isArray(answer[r]) || answer[r].length !== n) return 0;
    for (var c = 0; c < n; c++) {
      var v = answer[r][c];
      if (typeof v !== 'number' || v % 1 !== 0 || v < 1 || v > n) return 0;
      if (g[r][c] !== 0 && g[r][c] !== v) return 0;
    }
  }
  for (var i = 0; i < n; i++) {
    var row = {}, col = {}, box = {};
    for (var j = 0; j < n; j++) {
      var a = answer[i][j], b = answer[j][i];
      var per = n / bw, br = Math.floor(i / per) * bh + Math.floor(j / bw), bc = (i % per) * bw + (j % bw);
      var x = answer[br][bc];
      if (row[a] || col[b] || box[x]) return 0;
      row[a] = col[b] = box[x] = true;
    }
  }
  return 1;
}`;

interface Level extends Record<string, number> {
  boxRows: number;
  boxCols: number;
  holes: number;
}

const LEVELS: Level[] = [
  { boxRows: 2, boxCols: 2, holes: 5 },
  { boxRows: 2, boxCols: 2, holes: 9 },
  { boxRows: 2, boxCols: 3, holes: 14 },
  { boxRows: 2, boxCols: 3, holes: 20 },
  { boxRows: 3, boxCols: 3, holes: 40 },
];

/** A solved grid: the standard pattern, with symbols, rows within bands and bands shuffled. */
function solved(rng: Rng, n: number, bh: number, bw: number): number[][] {
  const base = (r: number, c: number): number => (bw * (r % bh) + Math.floor(r / bh) + c) % n;
  const symbols = shuffled(
    rng,
    Array.from({ length: n }, (_, i) => i + 1),
  );
  const bands = shuffled(
    rng,
    Array.from({ length: n / bh }, (_, i) => i),
  );
  const rows = bands.flatMap((b) =>
    shuffled(
      rng,
      Array.from({ length: bh }, (_, i) => b * bh + i),
    ),
  );
  const stacks = shuffled(
    rng,
    Array.from({ length: n / bw }, (_, i) => i),
  );
  const cols = stacks.flatMap((s) =>
    shuffled(
      rng,
      Array.from({ length: bw }, (_, i) => s * bw + i),
    ),
  );
  return rows.map((r) => cols.map((c) => symbols[base(r, c)]!));
}

export const sudoku = defineProblemFamily({
  id: ID,
  name: 'Sudoku',
  description: 'complete a sudoku grid: 4×4, 6×6 and 9×9 up to level 4, larger boxes above',
  domain: 'constraints',
  skills: [
    problemSkill(ID, 'singles', 'fill forced cells', 'a cell whose row, column and box leave one symbol', [], 0),
    problemSkill(ID, 'boxes', 'rectangular boxes', 'sudoku with 2×3 boxes', [`${ID}.singles`], 2),
    problemSkill(ID, 'classic', 'classic 9×9 sudoku', 'the 9×9 grid with many holes', [`${ID}.boxes`], 4),
  ],
  levels: LEVELS,
  growth: {
    // the box's sides grow in turn, one every 4 levels: 3×4 at d = 8, 4×4 at 12, 4×5 at 16, …
    boxRows: { by: 1, every: 8, max: 9, why: 'a grid of 90 × 90 or more would pass the 32,000-character statement' },
    boxCols: {
      by: 1,
      every: 8,
      offset: 4,
      max: 9,
      why: 'a grid of 90 × 90 or more would pass the 32,000-character statement',
    },
    holes: { by: 4 },
  },
  verifier,
  size: (d) => (d as { grid: number[][] }).grid.flat().filter((x) => x === 0).length,
  draw(rng, level) {
    // The grid's side is the box's area (levels 0-4: 4, 6, 9; grown levels: 16, 25, …).
    const L = { ...level, n: level.boxRows * level.boxCols };
    const sol = solved(rng, L.n, L.boxRows, L.boxCols);
    const cells = shuffled(
      rng,
      Array.from({ length: L.n * L.n }, (_, i) => i),
    ).slice(0, L.holes);
    const grid = sol.map((r) => [...r]);
    for (const k of cells) grid[Math.floor(k / L.n)]![k % L.n] = 0;
    const h = cells[0]!;
    const [hr, hc] = [Math.floor(h / L.n), h % L.n];
    const changed = sol.map((r) => [...r]);
    changed[hr]![hc] = (sol[hr]![hc]! % L.n) + 1;
    const swapped = sol.map((r) => [...r]);
    const other = (hc + 1) % L.n;
    [swapped[hr]![hc], swapped[hr]![other]] = [sol[hr]![other]!, sol[hr]![hc]!];
    return {
      statement:
        `Fill in this ${L.n}×${L.n} sudoku (0 marks an empty cell) so that every row, every column and every ${L.boxRows}×${L.boxCols} box holds each number 1-${L.n} exactly once:\n${gridText(grid)}\n` +
        'Answer with the completed grid as a JSON array of rows, e.g. [[1,2,...],...].',
      data: { n: L.n, boxRows: L.boxRows, boxCols: L.boxCols, grid },
      witness: sol,
      failures: [changed, swapped, sol.slice(0, L.n - 1), grid],
    };
  },
});
