// How often a generated task's own program reads as an easier level than the one it was drawn at
// (generators/label.ts): per labelled family × tabled level, the share of deduction tasks whose label
// is lower (a level-1 arith candidate of depth 1 that level 0 admits), the same, or none (a shape no
// table describes). Prints the table and writes bench/results/label-share.json.
// Run: npx tsx bench/label-share.ts [tasks per cell, default 1000]
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRng } from '../core/rng.js';
import { drawReference, labelProgram } from '../generators/index.js';

const FAMILIES = ['arith', 'logic', 'bits', 'str'];
const LEVELS = [0, 1, 2, 3, 4];
const N = Number(process.argv[2] ?? 1000);

interface Row {
  family: string;
  level: number;
  tasks: number;
  /** Shares of the tasks whose label is lower than, equal to or above their level, or null. */
  lower: number;
  same: number;
  higher: number;
  none: number;
  /** How many tasks got each label (null as "none"). */
  labels: Record<string, number>;
}

const rows: Row[] = [];
for (const family of FAMILIES)
  for (const level of LEVELS) {
    const labels: Record<string, number> = {};
    for (let i = 0; i < N; i++) {
      const { draft } = drawReference(family, createRng(`label-share/${family}/${level}/${i}`), level, 'deduction');
      const key = String(labelProgram(family, draft.program, draft.inputs).level ?? 'none');
      labels[key] = (labels[key] ?? 0) + 1;
    }
    const share = (test: (l: number) => boolean): number =>
      Object.entries(labels).reduce((n, [l, k]) => n + (l !== 'none' && test(Number(l)) ? k : 0), 0) / N;
    rows.push({
      family,
      level,
      tasks: N,
      lower: share((l) => l < level),
      same: share((l) => l === level),
      higher: share((l) => l > level),
      none: (labels.none ?? 0) / N,
      labels,
    });
  }

const pct = (x: number): string => `${(100 * x).toFixed(1)}%`.padStart(7);
console.log('family level   lower    same  higher    none  labels');
for (const r of rows) {
  const labels = Object.entries(r.labels)
    .map(([l, k]) => `${l}:${k}`)
    .join(' ');
  console.log(
    `${r.family.padEnd(6)} ${String(r.level).padStart(5)} ${pct(r.lower)} ${pct(r.same)} ${pct(r.higher)} ${pct(r.none)}  ${labels}`,
  );
}
console.log(`${rows.length} cells × ${N} deduction tasks`);
mkdirSync('bench/results', { recursive: true });
writeFileSync(
  'bench/results/label-share.json',
  JSON.stringify({ tasksPerCell: N, type: 'deduction', rows }, null, 2) + '\n',
);
