// The bridge's speed beside Reasoning Gym's own, in the same run (bench/generators.ts prints it):
// per bridged family and level, validated tasks/s through the bridge (a draw: one request, the item
// generated, its witness and near misses scored, the task built in Node) against RG's own
// generate + score_answer of the reference in the same Python process, with no cogen in the way.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRng } from '../../core/rng.js';
import { bridgedFamilies, findBridgedFamily, loadCatalogue } from './catalogue.js';
import { notSetUpLine } from './paths.js';
import type { RgWorker } from './process.js';
import { drawBridged } from './tasks.js';

export interface BridgedBenchRow {
  family: string;
  level: number;
  /** Validated tasks per second through the bridge (failed draws count as time, not tasks). */
  bridged: number;
  /** Reasoning Gym's own generate + score per second, in the worker. */
  native: number;
  /** bridged / native: the bridge's overhead as a ratio (validation scores ~4 answers per item, RG 1). */
  ratio: number;
  /** Draws that gave no task: a duplicate of one drawn before in the row, or an item that did not verify. */
  rejected: number;
  /** Why the row could not be measured (then the rates are 0). */
  error?: string;
}

export interface BenchOptions {
  /** Families (default: every bridged family). */
  families?: string[];
  /** Levels per family (default: all). */
  maxLevel?: number;
  /** Time per measurement (s, default 0.5): each row takes about twice this. */
  seconds?: number;
  log?: (line: string) => void;
}

export async function benchBridged(worker: RgWorker, opts: BenchOptions = {}): Promise<BridgedBenchRow[]> {
  const seconds = opts.seconds ?? 0.5;
  const families = opts.families ?? bridgedFamilies().map((f) => f.id);
  const rows: BridgedBenchRow[] = [];
  for (const id of families) {
    const fam = findBridgedFamily(id);
    if (!fam) continue;
    for (const [level, { config }] of fam.levels.entries()) {
      if (opts.maxLevel !== undefined && level > opts.maxLevel) break;
      const space = typeof config.size === 'number' && config.size > 0 ? config.size : 2 ** 20;
      try {
        // Reasoning Gym alone, in Python: generate + score the reference, for `seconds`, over items
        // drawn as the bridge draws them (random indices of the level).
        const pick = createRng(`${id}/${level}/rg`);
        const indices = Array.from({ length: 20_000 }, () => pick.int(0, space - 1));
        // one untimed item first: a dataset's first item may load its data
        await worker.request('bench', { dataset: fam.dataset, config, indices: indices.slice(0, 1), seconds });
        const own = await worker.request<{ seconds: number; items: number }>('bench', {
          dataset: fam.dataset,
          config,
          indices,
          seconds,
        });
        // Through the bridge: validated tasks, one draw at a time, for about as long.
        const rng = createRng(`${id}/${level}/bridge`);
        const seen = new Set<string>();
        let served = 0;
        let rejected = 0;
        const t0 = performance.now();
        while ((performance.now() - t0) / 1000 < seconds) {
          try {
            await drawBridged(worker, { family: id, level, rng, seen, attempts: 1 });
            served++;
          } catch {
            rejected++;
          }
        }
        const elapsed = (performance.now() - t0) / 1000;
        const bridged = served / elapsed;
        const native = own.items / own.seconds;
        rows.push({ family: id, level, bridged, native, ratio: native > 0 ? bridged / native : 0, rejected });
        opts.log?.(
          `${id} L${level}: ${bridged.toFixed(1)}/s bridged, ${native.toFixed(1)}/s Reasoning Gym alone (${(bridged / native).toFixed(2)}×)`,
        );
      } catch (e) {
        rows.push({ family: id, level, bridged: 0, native: 0, ratio: 0, rejected: 0, error: (e as Error).message });
        opts.log?.(`${id} L${level}: not measured (${(e as Error).message})`);
      }
    }
  }
  return rows;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2) : 0;
};

export interface BridgedBenchReport {
  rows: BridgedBenchRow[];
  /** The per-row table and a summary, for the console. */
  table: string;
  /** bench/results/reasoning-gym.md: the summary, the excluded datasets, the rows. */
  markdown: string;
}

/**
 * benchBridged over every bridged family, formatted. `nativeFamilies` is what the caller counts of
 * cogen's own families (code + problem), for the line "families available".
 */
export async function benchReasoningGym(
  worker: RgWorker,
  opts: BenchOptions & { nativeFamilies?: { code: number; problem: number } } = {},
): Promise<BridgedBenchReport> {
  const catalogue = loadCatalogue();
  if (!catalogue) {
    const line = `${notSetUpLine()}: no bridged rows`;
    return { rows: [], table: line, markdown: `${line}\n` };
  }
  const all = await benchBridged(worker, opts);
  const rows = all.filter((r) => r.error === undefined);
  const unmeasured = all.filter((r) => r.error !== undefined);
  const fams = new Set(rows.map((r) => r.family));
  const ratios = rows.filter((r) => r.native > 0).map((r) => r.ratio);
  const n = opts.nativeFamilies;
  const total = n ? n.code + n.problem + catalogue.families.length : undefined;
  const summary = [
    `Reasoning Gym ${catalogue.reasoningGym} bridged: ${catalogue.families.length} families (${catalogue.families.reduce((a, f) => a + f.levels.length, 0)} levels), ${catalogue.excluded.length} excluded; measured ${fams.size} families, ${rows.length} levels, ${opts.seconds ?? 0.5} s each way`,
    `validated tasks/s through the bridge: median ${median(rows.map((r) => r.bridged)).toFixed(1)}; Reasoning Gym alone (generate + score, same worker): median ${median(rows.map((r) => r.native)).toFixed(1)}; ratio bridge/RG: median ${median(ratios).toFixed(3)}, min ${Math.min(...ratios).toFixed(3)}, max ${Math.max(...ratios).toFixed(3)}`,
    ...(total !== undefined
      ? [
          `families available: ${n!.code} native code + ${n!.problem} native problem + ${catalogue.families.length} bridged = ${total} (target >= 130)`,
        ]
      : []),
  ];
  const pad = (s: string, w: number): string => s.padEnd(w);
  const table = [
    ...summary,
    '',
    `${pad('FAMILY', 30)}${pad('LEVEL', 6)}${pad('BRIDGED/s', 11)}${pad('RG/s', 11)}${pad('RATIO', 8)}REJECTED`,
    ...rows.map(
      (r) =>
        `${pad(r.family, 30)}${pad(String(r.level), 6)}${pad(r.bridged.toFixed(1), 11)}${pad(r.native.toFixed(1), 11)}${pad(r.ratio.toFixed(3), 8)}${r.rejected}`,
    ),
  ].join('\n');
  const markdown = [
    '# Reasoning Gym bridge: validated tasks/s against Reasoning Gym alone',
    '',
    'Written by `npm run bench:generators` (bridges/reasoning_gym/bench.ts). Per bridged family and level, in one run:',
    '**bridged** = validated tasks/s through the bridge (a draw is one request: the item generated, its reference',
    'answer and up to 4 near misses scored by its own `score_answer`, the task built in Node; draws that give no',
    'task, a duplicate of one drawn before in the row or an item that does not verify, count as time and are listed',
    "as rejected); **RG** = Reasoning Gym's own generate + `score_answer` of the",
    "reference in the same worker process, no cogen in the way. The ratio is the bridge's cost including validation.",
    "Each side runs for a short window over different random items, and some datasets' item costs are heavy-tailed,",
    "so a single row's ratio is noisy (rows above 1 are that noise); the medians over all rows are the figure.",
    '',
    ...summary.map((s) => `- ${s}`),
    '',
    '## Excluded datasets (never served)',
    '',
    ...catalogue.excluded.map((x) => `- \`rg.${x.dataset}\`: ${x.reason}`),
    '',
    ...(unmeasured.length
      ? ['## Not measured', '', ...unmeasured.map((r) => `- \`${r.family}\` level ${r.level}: ${r.error}`), '']
      : []),
    '## Per family and level',
    '',
    '| family | level | bridged/s | RG/s | ratio | rejected |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.family} | ${r.level} | ${r.bridged.toFixed(1)} | ${r.native.toFixed(1)} | ${r.ratio.toFixed(3)} | ${r.rejected} |`,
    ),
    '',
  ].join('\n');
  return { rows, table, markdown };
}

/**
 * bench:generators' Reasoning Gym part: benchReasoningGym with its own worker, the table printed,
 * `<outDir>/reasoning-gym.{json,md}` written. Nothing but one line when the bridge is not set up.
 */
export async function runReasoningGymBench(
  opts: BenchOptions & { nativeFamilies: { code: number; problem: number }; outDir: string },
): Promise<BridgedBenchReport> {
  const { RgWorker } = await import('./process.js');
  const worker = new RgWorker();
  try {
    const report = await benchReasoningGym(worker, opts);
    console.log(report.table);
    if (report.rows.length > 0) {
      mkdirSync(opts.outDir, { recursive: true });
      const catalogue = loadCatalogue()!;
      const json = {
        date: new Date().toISOString(),
        reasoningGym: catalogue.reasoningGym,
        secondsPerMeasurement: opts.seconds ?? 0.5,
        familiesAvailable: { ...opts.nativeFamilies, bridged: catalogue.families.length },
        excluded: catalogue.excluded,
        rows: report.rows,
      };
      writeFileSync(join(opts.outDir, 'reasoning-gym.json'), `${JSON.stringify(json, null, 2)}\n`);
      writeFileSync(join(opts.outDir, 'reasoning-gym.md'), report.markdown);
      console.log(`wrote ${join(opts.outDir, 'reasoning-gym.{json,md}')}`);
    }
    return report;
  } finally {
    worker.close();
  }
}
