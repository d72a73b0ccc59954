// bench:generators over levels past the tables (`--levels 0-30`; docs/levels.md): for every native
// family, a curve against d of validated tasks/s, the median reference cost (interpreter steps, as
// validation measures it: the code program on its inputs, a problem's verifier on its witness and
// near misses) and the median size (a code program's AST nodes; a problem's instance size, the
// family's own measure, and its statement's characters), with the checks the levels must pass:
//   sound    >= 99 % of the drafts validate (a problem's witness scores 1 and its near misses < 1)
//   fast     the median wall time to one validated task (generateTask: draws until one validates) < 2 s
//   growth   the median cost or size at d + 5 strictly above d, and at 30 >= 10x its value at 4; a
//            family whose rule states slower growth (`slower`) promises its own factor at 30 instead
// The drafts per cell are chosen so that levels 0-30 of all 36 families take well under an hour on
// 2 cores (bench/results/generators-levels.md records the wall time).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { createRng } from '../core/rng.js';
import { CODE_TASK_TYPES, type AnyDraft, type Json, type ProblemDraft } from '../core/task.js';
import { createSandbox, type Sandbox } from '../sandbox/index.js';
import { drawReference, families, generateTask, materialise, problemFamilies } from '../generators/index.js';
import { median } from './stats.js';

export interface LevelRow {
  family: string;
  kind: 'code' | 'problem';
  level: number;
  drafts: number;
  validated: number;
  validatedPerSec: number;
  /** Median reference cost in interpreter steps over the validated drafts. */
  cost: number;
  /** Median size: AST nodes of a code program, the family's instance size of a problem. */
  size: number;
  /** Median statement characters of a problem (the prompt it makes); null for code. */
  statementChars: number | null;
  /** Median wall time to one validated task, ms. */
  msToTask: number;
  rejected: Record<string, number>;
}

interface Source {
  id: string;
  kind: 'code' | 'problem';
  slower?: { ratio: number; why: string };
  /** The i-th draft of a level and its size. */
  draw(rng: ReturnType<typeof createRng>, level: number, i: number): { draft: AnyDraft; size: number };
}

const sources = (only: string[]): Source[] =>
  [
    ...families.map((f): Source => ({
      id: f.id,
      kind: 'code',
      draw: (rng, level, i) => drawReference(f.id, rng, level, CODE_TASK_TYPES[i % 3]!),
    })),
    ...problemFamilies.map((f): Source => ({
      id: f.id,
      kind: 'problem',
      ...(f.slower ? { slower: f.slower } : {}),
      draw: (rng, level) => withSize(f.generate(rng, level), f.size),
    })),
  ].filter((s) => only.length === 0 || only.includes(s.id));

const withSize = (draft: ProblemDraft, size: (data: Json) => number) => ({ draft, size: size(draft.data) });

const BATCH = 32;

async function cell(
  sandbox: Sandbox,
  s: Source,
  level: number,
  n: number,
  latencyTasks: number,
  seed: number,
): Promise<LevelRow> {
  const rng = createRng(`levels/${seed}/${s.id}/${level}`);
  const rejected: Record<string, number> = {};
  const costs: number[] = [];
  const sizes: number[] = [];
  const statements: number[] = [];
  let validated = 0;
  const t0 = performance.now();
  for (let i = 0; i < n; i += BATCH) {
    const drawn = Array.from({ length: Math.min(BATCH, n - i) }, (_, j) => s.draw(rng, level, i + j));
    const results = await Promise.all(drawn.map((d) => materialise(sandbox, d.draft)));
    results.forEach((r, j) => {
      if (!r.ok) {
        rejected[r.reason] = (rejected[r.reason] ?? 0) + 1;
        return;
      }
      validated++;
      if (r.cost !== null) costs.push(r.cost);
      sizes.push(drawn[j]!.size);
      if (r.task.type === 'problem') statements.push(r.task.statement.length);
    });
  }
  const ms = performance.now() - t0;
  // Time to one validated task, one at a time, as a run's proposer waits for it.
  const lat: number[] = [];
  const types = s.kind === 'code' ? CODE_TASK_TYPES : (['problem'] as const);
  for (let i = 0; i < latencyTasks; i++) {
    const t = performance.now();
    await generateTask(sandbox, {
      family: s.id,
      level,
      type: types[i % types.length]!,
      rng: createRng(`levels/latency/${seed}/${s.id}/${level}/${i}`),
    });
    lat.push(performance.now() - t);
  }
  return {
    family: s.id,
    kind: s.kind,
    level,
    drafts: n,
    validated,
    validatedPerSec: Math.round((validated / ms) * 1000),
    cost: median(costs),
    size: median(sizes),
    statementChars: statements.length ? median(statements) : null,
    msToTask: Math.round(median(lat) * 10) / 10,
    rejected,
  };
}

export interface FamilyVerdict {
  family: string;
  sound: boolean;
  fast: boolean;
  /** Which measure grows as required (cost, size), or null. */
  grows: 'cost' | 'size' | null;
  ratio30: { cost: number; size: number } | null;
  slower?: { ratio: number; why: string };
}

/** The checks of one family's rows (levels lo..hi). */
export function verdict(rows: LevelRow[], slower?: { ratio: number; why: string }): FamilyVerdict {
  const at = (d: number) => rows.find((r) => r.level === d);
  const measure = (m: 'cost' | 'size'): boolean => {
    const a4 = at(4)?.[m];
    const a30 = at(30)?.[m];
    if (a4 === undefined || a30 === undefined) return false;
    if (slower) return a30 >= slower.ratio * a4;
    if (a30 < 10 * a4) return false;
    return rows.every((r) => at(r.level + 5) === undefined || at(r.level + 5)![m] > r[m]);
  };
  const r4 = at(4);
  const r30 = at(30);
  return {
    family: rows[0]!.family,
    sound: rows.every((r) => r.validated >= 0.99 * r.drafts),
    fast: rows.every((r) => r.msToTask < 2000),
    grows: measure('cost') ? 'cost' : measure('size') ? 'size' : null,
    ratio30: r4 && r30 ? { cost: r30.cost / r4.cost, size: r30.size / r4.size } : null,
    ...(slower ? { slower } : {}),
  };
}

interface LevelsOptions {
  lo: number;
  hi: number;
  n: number;
  latencyTasks: number;
  workers: number;
  only: string[];
  out: string;
  seed: number;
  seedDrawn: boolean;
  replace?: boolean;
}
/** A run that re-measured some families of a stored result (`--replace`): their rows are its. */
interface Rerun {
  families: string[];
  seed: number;
  seedDrawn: boolean;
  date: string;
  loadAverageAtStart: number[];
  wallSeconds: number;
}
type Stored = LevelsOptions & {
  date: string;
  node: string;
  cores: number;
  loadAverageAtStart: number[];
  wallSeconds: number;
  verdicts: FamilyVerdict[];
  rows: LevelRow[];
  reruns?: Rerun[];
};

/**
 * `--replace`: the families measured now take the place of their rows and verdicts in the stored
 * result `${out}.json`, which keeps its other rows, its own seed and header; the re-run is listed.
 */
function replaceIn(out: string, o: LevelsOptions, rows: LevelRow[], verdicts: FamilyVerdict[], rerun: Rerun): Stored {
  const stored = JSON.parse(readFileSync(`${out}.json`, 'utf8')) as Stored;
  for (const k of ['lo', 'hi', 'n', 'latencyTasks', 'workers'] as const) {
    if (stored[k] !== o[k]) throw new Error(`--replace: the stored result has ${k} ${stored[k]}, this run ${o[k]}`);
  }
  const order = sources([]).map((s) => s.id);
  const rank = (x: { family: string }) => order.indexOf(x.family);
  const fresh = new Set(rerun.families);
  return {
    ...stored,
    rows: [...stored.rows.filter((r) => !fresh.has(r.family)), ...rows].sort(
      (a, b) => rank(a) - rank(b) || a.level - b.level,
    ),
    verdicts: [...stored.verdicts.filter((v) => !fresh.has(v.family)), ...verdicts].sort((a, b) => rank(a) - rank(b)),
    reruns: [
      ...(stored.reruns ?? [])
        .map((r) => ({ ...r, families: r.families.filter((f) => !fresh.has(f)) }))
        .filter((r) => r.families.length > 0),
      rerun,
    ],
  };
}

export async function levelsBench(o: LevelsOptions): Promise<void> {
  const load = loadavg();
  const started = performance.now();
  const sandbox = await createSandbox({ workers: o.workers });
  const rows: LevelRow[] = [];
  const verdicts: FamilyVerdict[] = [];
  try {
    for (const s of sources(o.only)) {
      const own: LevelRow[] = [];
      for (let level = o.lo; level <= o.hi; level++) {
        const r = await cell(sandbox, s, level, o.n, o.latencyTasks, o.seed);
        own.push(r);
        process.stderr.write(
          `${s.id} d${level}: ${r.validated}/${r.drafts} valid, ${r.validatedPerSec} validated/s, cost ${r.cost}, size ${r.size}, ${r.msToTask} ms to a task\n`,
        );
      }
      rows.push(...own);
      verdicts.push(verdict(own, s.slower));
    }
  } finally {
    await sandbox.close();
  }
  const wallSeconds = (performance.now() - started) / 1000;
  const date = new Date().toISOString();
  const { replace, ...opts } = o;
  const result: Stored = replace
    ? replaceIn(o.out, o, rows, verdicts, {
        families: sources(o.only).map((s) => s.id),
        seed: o.seed,
        seedDrawn: o.seedDrawn,
        date,
        loadAverageAtStart: load,
        wallSeconds,
      })
    : {
        date,
        node: process.version,
        cores: cpus().length,
        loadAverageAtStart: load,
        wallSeconds,
        ...opts,
        verdicts,
        rows,
      };
  const md = levelsMarkdown(result);
  console.log(md.join('\n'));
  mkdirSync('bench/results', { recursive: true });
  writeFileSync(`${o.out}.json`, JSON.stringify(result, null, 2) + '\n');
  writeFileSync(`${o.out}.md`, md.join('\n') + '\n');
  console.log(`wrote ${o.out}.json and ${o.out}.md`);
}

const fmt = (x: number): string => (x >= 100 ? String(Math.round(x)) : String(Math.round(x * 10) / 10));

const rerunText = (r: Rerun): string =>
  `Re-run: ${r.families.join(', ')} on seed ${r.seed}${r.seedDrawn ? ' (drawn at random)' : ''}, ${r.date.slice(0, 16).replace('T', ' ')} UTC, load average ${r.loadAverageAtStart.map((x) => x.toFixed(2)).join(' ')} at the start, ${Math.round(r.wallSeconds)} s: ${r.families.length === 1 ? 'its rows and checks are' : 'their rows and checks are'} this run's (\`--replace\`); the other rows are the run above's.`;

function levelsMarkdown(o: Stored): string[] {
  const { rows, verdicts } = o;
  const shown = [0, 4, 5, 10, 15, 20, 25, 30].filter((d) => d >= o.lo && d <= o.hi);
  const head = `| family | measure | ${shown.map((d) => `d=${d}`).join(' | ')} |`;
  const out = [
    `# bench:generators --levels ${o.lo}-${o.hi}`,
    '',
    `Seed ${o.seed}${o.seedDrawn ? ' (drawn at random by the benchmark; `--seed` replays it)' : ''}: ${o.n} drafts per family × level (code: deduction, abduction, induction in turn), ${o.latencyTasks} tasks one at a time for the latency; ${o.workers} sandbox workers, ${o.cores} cores, load average ${o.loadAverageAtStart.map((x) => x.toFixed(2)).join(' ')} at the start; ${Math.round(o.wallSeconds)} s in all.`,
    '',
    ...(o.reruns ?? []).flatMap((r) => [rerunText(r), '']),
    '## Checks',
    '',
    '| family | >= 99 % valid | median to a task < 2 s | grows (d + 5 > d, 30 >= 10× 4; or its stated factor) | cost at 30 / at 4 | size at 30 / at 4 |',
    '|---|---|---|---|---|---|',
    ...verdicts.map(
      (v) =>
        `| ${v.family} | ${v.sound ? 'yes' : 'NO'} | ${v.fast ? 'yes' : 'NO'} | ${v.grows ? `yes, ${v.grows}${v.slower ? ` (slower: ≥ ${v.slower.ratio}×)` : ''}` : `NO${v.slower ? ` (slower: ≥ ${v.slower.ratio}×)` : ''}`} | ${v.ratio30 ? fmt(v.ratio30.cost) : '-'} | ${v.ratio30 ? fmt(v.ratio30.size) : '-'} |`,
    ),
    '',
    `All families: sound ${verdicts.every((v) => v.sound) ? 'yes' : 'NO'}, fast ${verdicts.every((v) => v.fast) ? 'yes' : 'NO'}, growth ${verdicts.every((v) => v.grows) ? 'yes' : 'NO'}.`,
    '',
    '## Curves (selected levels; every level in the JSON)',
    '',
    head,
    `|---|---|${shown.map(() => '---').join('|')}|`,
  ];
  for (const v of verdicts) {
    const own = rows.filter((r) => r.family === v.family);
    const cellOf = (d: number, f: (r: LevelRow) => number | null): string => {
      const r = own.find((x) => x.level === d);
      const x = r ? f(r) : null;
      return x === null ? '-' : fmt(x);
    };
    const line = (label: string, f: (r: LevelRow) => number | null) =>
      `| ${v.family} | ${label} | ${shown.map((d) => cellOf(d, f)).join(' | ')} |`;
    out.push(
      line('validated/s', (r) => r.validatedPerSec),
      line('cost (steps)', (r) => r.cost),
      line('size', (r) => r.size),
      line('ms to a task', (r) => r.msToTask),
    );
  }
  return out;
}
