// Generator throughput: drafts per second (generation + reference screening) and validated tasks per
// second (generation + sandbox materialise: two runs per input in fresh QuickJS contexts), per family
// and level, over an even mix of deduction / abduction / induction. Writes bench/results/generators.json.
//
//   npm run bench:generators [-- --n 300 --workers 2 --levels 0-4 --families arith,logic]
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { createRng } from '../src/rng.js';
import { TASK_TYPES, type TaskDraft } from '../src/task.js';
import { createSandbox } from '../sandbox/index.js';
import { families, materialise } from '../generators/index.js';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : def;
};
const N = Number(arg('n', '300'));
const WORKERS = Number(arg('workers', String(Math.max(1, cpus().length))));
const levels = arg('levels', '0-4');
if (!/^\d+(-\d+)?$/.test(levels)) throw new Error(`--levels takes N or LO-HI (e.g. 0-2), got "${levels}"`);
const [lo, hi = lo] = levels.split('-').map(Number) as [number, number?];
const only = arg('families', '');
const BATCH = 64;

interface Row {
  family: string;
  level: number;
  drafts: number;
  draftsPerSec: number;
  validated: number;
  validatedPerSec: number;
  rejected: Record<string, number>;
}

const sandbox = await createSandbox({ workers: WORKERS });
const rows: Row[] = [];
const fams = families.filter((f) => !only || only.split(',').includes(f.id));
// Warm the pool (worker start-up and QuickJS module instantiation are not generator costs).
await Promise.all(Array.from({ length: 50 }, () => sandbox.run('function f(a) { return a + 1; }', [1])));

for (const fam of fams) {
  for (let level = lo; level <= Math.min(hi, fam.levels - 1); level++) {
    const rng = createRng(`bench/${fam.id}/${level}`);
    // 1. Generation alone.
    const t0 = performance.now();
    const drafts: TaskDraft[] = [];
    for (let i = 0; i < N; i++) drafts.push(fam.generate(rng, level, TASK_TYPES[i % 3]!));
    const genMs = performance.now() - t0;
    // 2. Generation + validation, batched so the worker pool stays busy.
    const seen = new Set<string>();
    const rejected: Record<string, number> = {};
    let validated = 0;
    const rng2 = createRng(`bench2/${fam.id}/${level}`);
    const t1 = performance.now();
    for (let i = 0; i < N; i += BATCH) {
      const batch: TaskDraft[] = [];
      for (let j = i; j < Math.min(N, i + BATCH); j++) batch.push(fam.generate(rng2, level, TASK_TYPES[j % 3]!));
      const results = await Promise.all(batch.map((d) => materialise(sandbox, d, seen)));
      for (const r of results) {
        if (r.ok) validated++;
        else rejected[r.reason] = (rejected[r.reason] ?? 0) + 1;
      }
    }
    const valMs = performance.now() - t1;
    rows.push({
      family: fam.id,
      level,
      drafts: N,
      draftsPerSec: Math.round((N / genMs) * 1000),
      validated,
      validatedPerSec: Math.round((validated / valMs) * 1000),
      rejected,
    });
    const r = rows[rows.length - 1]!;
    process.stderr.write(`${fam.id} L${level}: ${r.draftsPerSec} drafts/s, ${r.validatedPerSec} validated/s\n`);
  }
}
await sandbox.close();

const pad = (s: string | number, n: number): string => String(s).padStart(n);
console.log(`\ngenerators: ${N} drafts per family x level (even mix of task types), sandbox workers ${WORKERS}, ${cpus().length} cores`);
console.log(`${'family'.padEnd(10)} ${'level'.padStart(5)} ${pad('drafts/s', 10)} ${pad('validated/s', 12)} ${pad('accepted', 9)}  rejected`);
for (const r of rows) {
  const rej = Object.entries(r.rejected).map(([k, n]) => `${k}:${n}`).join(' ') || '-';
  const flag = r.level <= 2 && r.validatedPerSec < 1000 ? ' *' : '';
  console.log(`${r.family.padEnd(10)} ${pad(r.level, 5)} ${pad(r.draftsPerSec, 10)} ${pad(r.validatedPerSec, 12)}${flag.padEnd(2)} ${pad(`${r.validated}/${r.drafts}`, 7)}  ${rej}`);
}
const low = rows.filter((r) => r.level <= 2 && r.validatedPerSec < 1000);
console.log(low.length === 0 ? '\nall families >= 1,000 validated tasks/s at levels 0-2' : `\n* below the 1,000 validated/s target at levels 0-2: ${low.length} of ${rows.filter((r) => r.level <= 2).length}`);

mkdirSync('bench/results', { recursive: true });
writeFileSync(
  'bench/results/generators.json',
  JSON.stringify({ date: new Date().toISOString(), node: process.version, cores: cpus().length, workers: WORKERS, draftsPerCell: N, rows }, null, 2) + '\n',
);
console.log('wrote bench/results/generators.json');
