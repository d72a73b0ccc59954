// Sum grid (constraints, kakuro-like): fill a grid with digits 1-9 so each row and column adds up
// to its given sum, with no digit twice in a row.
import { defineProblemFamily, problemSkill, shuffled } from './kit.js';

const ID = 'sum-grid';

const verifier = `function f(answer, data) {
  var R = data.rowSums.length, C = data.colSums.length;
  if (!Array.isArray(answer) || answer.length !== R) return 0;
  var cols = [];
  for (var c = 0; c < C; c++) cols.push(0);
  for (var r = 0; r < R; r++) {
    var row = answer[r], s = 0, seen = {};
    if (!Array.isArray(row) || row.length !== C) return 0;
    for (var c2 = 0; c2 < C; c2++) {
      var v = row[c2];
      if (typeof v !== 'number' || v % 1 !== 0 || v < 1 || v > 9 || seen[v]) return 0;
      seen[v] = true; s += v; cols[c2] += v;
    }
    if (s !== data.rowSums[r]) return 0;
  }
  for (var c3 = 0; c3 < C; c3++) if (cols[c3] !== data.colSums[c3]) return 0;
  return 1;
}`;

interface Level extends Record<string, number> {
  rows: number;
  cols: number;
}

const LEVELS: Level[] = [
  { rows: 2, cols: 2 },
  { rows: 2, cols: 3 },
  { rows: 3, cols: 3 },
  { rows: 3, cols: 4 },
  { rows: 4, cols: 4 },
];

export const sumGrid = defineProblemFamily({
  id: ID,
  name: 'Sum grid',
  description: 'fill a grid with digits 1-9 to meet row and column sums, no repeat in a row',
  domain: 'constraints',
  skills: [
    problemSkill(ID, 'sums', 'meet row and column sums', 'split sums into digits across two directions', [], 0),
    problemSkill(
      ID,
      'distinct',
      'distinct digits per row',
      'sums with the all-different constraint',
      [`${ID}.sums`],
      2,
    ),
  ],
  levels: LEVELS,
  growth: {
    rows: { by: 1 },
    cols: { by: 1, every: 10, max: 9, why: 'a row of more than 9 cells cannot hold distinct digits 1-9' },
  },
  verifier,
  size: (d) =>
    (d as { rowSums: number[]; colSums: number[] }).rowSums.length * (d as { colSums: number[] }).colSums.length,
  draw(rng, L) {
    const grid = Array.from({ length: L.rows }, () => shuffled(rng, [1, 2, 3, 4, 5, 6, 7, 8, 9]).slice(0, L.cols));
    const rowSums = grid.map((r) => r.reduce((a, b) => a + b, 0));
    const colSums = Array.from({ length: L.cols }, (_, c) => grid.reduce((s, r) => s + r[c]!, 0));
    const bumped = grid.map((r, i) => (i === 0 ? r.map((v, j) => (j === 0 ? (v % 9) + 1 : v)) : [...r]));
    const transposedish = grid.map((r) => [...r].reverse());
    return {
      statement:
        `Fill a ${L.rows}×${L.cols} grid with digits 1-9, no digit twice in the same row, so that the rows add up to ${JSON.stringify(rowSums)} (top to bottom) ` +
        `and the columns add up to ${JSON.stringify(colSums)} (left to right). Answer with the grid as a JSON array of rows.`,
      data: { rowSums, colSums },
      witness: grid,
      failures: [
        bumped,
        transposedish,
        grid.map((r) => r.map(() => Math.round(r.reduce((a, b) => a + b, 0) / L.cols))),
        grid.slice(1),
      ],
    };
  },
});
