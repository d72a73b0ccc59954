// The catalogue of bridged families: every Reasoning Gym dataset as a family `rg.<dataset>`, its
// curriculum's difficulty ladder as levels (RG's own coaching API: set_global_level(l), then
// generate_configuration()), and the datasets left out with the reason. `cogen setup reasoning-gym`
// builds it once, checking items of every level in the worker, and writes it as JSON next to the
// virtual environment, so that the taxonomy reads it synchronously and starts no Python.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { Json, Skill } from '../../core/task.js';
import { rgPaths } from './paths.js';
import type { RgWorker } from './process.js';
import { WorkerFailure } from './process.js';

export const RG_FAMILY_PREFIX = 'rg.';
export const CATALOGUE_VERSION = 1;
/** A level whose items take longer than this to generate and check at setup is too slow to serve. */
const LEVEL_TIMEOUT_MS = 30_000;

export interface RgLevel {
  /** The dataset's config at this level (seed 0 and its index space as `size` included). */
  config: { [key: string]: Json };
  /** At setup: items checked, and those whose own answer scored 1 with at least one near miss < 1. */
  tried: number;
  served: number;
}

export interface RgFamilyEntry {
  dataset: string;
  /** RG's category (the package folder: arithmetic, games, graphs, …). */
  category: string;
  doc: string;
  /** Whether the ladder comes from RG's curriculum (else one level: the default config). */
  curriculum: boolean;
  /** RG curriculum levels left out: their config fails RG's own validation. */
  skipped?: string[];
  levels: RgLevel[];
}

export interface RgCatalogue {
  version: number;
  reasoningGym: string;
  python: string;
  createdAt: string;
  families: RgFamilyEntry[];
  excluded: { dataset: string; reason: string }[];
}

/** A bridged family as the taxonomy shows it (the native families' shape, without a generator). */
export interface BridgedFamily {
  id: string;
  dataset: string;
  name: string;
  description: string;
  levels: number;
  knobs: string[];
  /** Why it has no levels above its last (`cogen skills --taxonomy` says so). */
  finite: string;
  skills: Skill[];
}

/** A bridged family's ladder is Reasoning Gym's own curriculum, served as it is: it does not grow (docs/levels.md). */
export const FINITE_LADDER =
  "Reasoning Gym's curriculum for it is a finite list of levels, served as they are (the bridge grows none)";

let cached: { path: string; value: RgCatalogue | null } | null = null;

/** The catalogue setup wrote, or null when the bridge is not set up (or the file is unreadable). */
export function loadCatalogue(path = rgPaths().catalogue): RgCatalogue | null {
  if (cached?.path === path) return cached.value;
  let value: RgCatalogue | null = null;
  if (existsSync(path)) {
    try {
      const c = JSON.parse(readFileSync(path, 'utf8')) as RgCatalogue;
      value = c && c.version === CATALOGUE_VERSION && Array.isArray(c.families) ? c : null;
    } catch {
      value = null;
    }
  }
  cached = { path, value };
  return value;
}

/** Forget the loaded catalogue (after setup wrote a new one). */
export function reloadCatalogue(): void {
  cached = null;
}

export const familyId = (dataset: string): string => `${RG_FAMILY_PREFIX}${dataset}`;
export const isBridgedFamily = (id: string): boolean => id.startsWith(RG_FAMILY_PREFIX);

const knob = (cfg: { [key: string]: Json }): string =>
  Object.entries(cfg)
    .filter(([k]) => k !== 'seed' && k !== 'size')
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(', ');

export function bridgedFamilies(catalogue = loadCatalogue()): BridgedFamily[] {
  if (!catalogue) return [];
  return catalogue.families.map((f) => {
    const id = familyId(f.dataset);
    return {
      id,
      dataset: f.dataset,
      name: `Reasoning Gym: ${f.dataset}`,
      description: `${f.doc || f.dataset} (Reasoning Gym ${catalogue.reasoningGym}, ${f.category}; scored by its score_answer in the bridge's worker)`,
      levels: f.levels.length,
      knobs: f.levels.map((l) => knob(l.config)),
      finite: FINITE_LADDER,
      skills: [
        {
          id: `${id}.solve`,
          family: id,
          name: `solve ${f.dataset}`,
          description: `answer a Reasoning Gym ${f.dataset} item (${f.category})`,
          requires: [],
          level: 0,
        },
      ],
    };
  });
}

export function findBridgedFamily(id: string, catalogue = loadCatalogue()): RgFamilyEntry | undefined {
  return catalogue?.families.find((f) => familyId(f.dataset) === id);
}

interface ListedDataset {
  dataset: string;
  category: string;
  doc: string;
  curriculum: boolean;
  levels: { [key: string]: Json }[];
  /** RG curriculum levels whose config does not construct (RG's own validation refuses it). */
  skipped: string[];
}

export interface GeneratedItem {
  index: number;
  question: string | null;
  answer: Json;
  entry: { [key: string]: Json };
  witness: number;
  witnessReason?: string;
  failures: string[];
}

/** An item cogen may serve: its own answer scores 1, and at least one near miss scores < 1. */
export const itemVerifies = (it: GeneratedItem): boolean =>
  typeof it.answer === 'string' && typeof it.question === 'string' && it.witness === 1 && it.failures.length > 0;

export interface BuildOptions {
  /** Items checked per level (default 8). */
  itemsPerLevel?: number;
  /** A level whose items verify less often than this share ends the ladder (default 0.5). */
  minShare?: number;
  log?: (line: string) => void;
  /** Only these datasets (tests). */
  only?: string[];
}

/**
 * Lists the datasets and checks `itemsPerLevel` items of each level in the worker. The ladder of a
 * family is its levels up to the first whose items verify less often than `minShare` (or that does
 * not generate in time); a family with no such level is excluded with the reason. Partly verifying
 * levels stay: their failing items are never served (every drawn item is checked again).
 */
export async function buildCatalogue(worker: RgWorker, opts: BuildOptions = {}): Promise<RgCatalogue> {
  const log = opts.log ?? (() => {});
  const per = opts.itemsPerLevel ?? 8;
  const minShare = opts.minShare ?? 0.5;
  const hello = await worker.request<{ reasoning_gym: string; python: string }>('hello');
  const { datasets } = await worker.request<{ datasets: ListedDataset[] }>('list');
  const families: RgFamilyEntry[] = [];
  const excluded: { dataset: string; reason: string }[] = [];
  const wanted = opts.only ? datasets.filter((d) => opts.only!.includes(d.dataset)) : datasets;
  for (const d of wanted) {
    const levels: RgLevel[] = [];
    let stop = '';
    for (const [l, config] of d.levels.entries()) {
      let items: GeneratedItem[];
      try {
        ({ items } = await worker.request<{ items: GeneratedItem[] }>(
          'generate',
          { dataset: d.dataset, config, indices: Array.from({ length: per }, (_, i) => i) },
          LEVEL_TIMEOUT_MS,
        ));
      } catch (e) {
        stop = `level ${l}: ${e instanceof WorkerFailure && e.reason === 'timeout' ? `${per} items did not generate and score within ${LEVEL_TIMEOUT_MS / 1000} s` : (e as Error).message}`;
        break;
      }
      const served = items.filter(itemVerifies).length;
      if (served / per < minShare) {
        const scores = [
          ...new Set(
            items.map((it) => (typeof it.answer === 'string' ? it.witness : (it.witnessReason ?? 'no text answer'))),
          ),
        ]
          .slice(0, 4)
          .join(', ');
        const accepts = items.filter((it) => it.witness === 1 && it.failures.length === 0).length;
        stop = `level ${l}: ${served}/${per} items' own answers verify (${accepts ? `${accepts} scorers accept every near miss; ` : ''}witness scores seen: ${scores})`;
        break;
      }
      levels.push({ config, tried: per, served });
    }
    if (levels.length === 0) {
      const reason = stop || (d.skipped.length ? `no level's config constructs (${d.skipped.join('; ')})` : 'no level');
      excluded.push({ dataset: d.dataset, reason });
      log(`  excluded rg.${d.dataset}: ${reason}`);
      continue;
    }
    families.push({
      dataset: d.dataset,
      category: d.category,
      doc: d.doc,
      curriculum: d.curriculum,
      levels,
      ...(d.skipped.length ? { skipped: d.skipped } : {}),
    });
    log(
      `  rg.${d.dataset}: ${levels.length} level${levels.length === 1 ? '' : 's'}${stop ? ` (ladder ends at ${stop})` : ''}${d.skipped.length ? ` (skipped: ${d.skipped.join('; ')})` : ''}`,
    );
  }
  return {
    version: CATALOGUE_VERSION,
    reasoningGym: hello.reasoning_gym,
    python: hello.python,
    createdAt: new Date().toISOString(),
    families,
    excluded,
  };
}

/** Writes the catalogue (temp file, then rename) and makes the taxonomy read it. */
export function writeCatalogue(catalogue: RgCatalogue, path = rgPaths().catalogue): void {
  writeFileSync(`${path}.part`, `${JSON.stringify(catalogue, null, 1)}\n`);
  renameSync(`${path}.part`, path);
  reloadCatalogue();
}

/** The bridged part of the taxonomy as text: families, levels and the excluded datasets (empty when not set up). */
export function formatBridgedTable(catalogue = loadCatalogue()): string {
  if (!catalogue) return '';
  const fams = bridgedFamilies(catalogue);
  const out = [
    `${fams.length} bridged Reasoning Gym families (${catalogue.reasoningGym}), ${catalogue.excluded.length} excluded; skill rg.<dataset>.solve each, no prerequisites`,
    '',
  ];
  for (const f of fams) {
    out.push(`${f.id} — ${f.description}`);
    f.knobs.forEach((k, i) => out.push(`  level ${i}: ${k}`));
    out.push(`  no levels above ${f.levels - 1}: ${f.finite}`);
  }
  out.push('', 'excluded (never served):');
  for (const x of catalogue.excluded) out.push(`  rg.${x.dataset}: ${x.reason}`);
  return out.join('\n');
}
