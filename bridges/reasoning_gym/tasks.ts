// Bridged tasks: a Reasoning Gym item becomes a verified problem (core/task.ts ProblemTask) scored by
// the dataset's own score_answer in the worker. Every drawn item is validated as cogen validates its
// own problems: its reference answer (the witness) must score 1 and its near misses (failures) < 1,
// on the very entry the scorer will see later; an item that does not is never served.
import { createHash } from 'node:crypto';
import type { Rng } from '../../core/rng.js';
import { BRIDGED_VERIFIER_PREFIX, type Json, type ProblemTask, type Verdict } from '../../core/task.js';
import { taskId } from '../../generators/index.js';
import { familyId, findBridgedFamily, itemVerifies, type GeneratedItem, type RgFamilyEntry } from './catalogue.js';
import { WorkerFailure, type RgWorker } from './process.js';

/** What a bridged task's `data` holds: enough for the worker to score an answer with no other state. */
export interface BridgedData {
  dataset: string;
  config: { [key: string]: Json };
  index: number;
  entry: { [key: string]: Json };
}

export type BridgedMaterialised =
  { ok: true; task: ProblemTask } | { ok: false; reason: 'unverified' | 'duplicate' | 'invalid'; detail: string };

const sha = (s: string): string => createHash('sha256').update(s).digest('hex').slice(0, 16);

/** Builds the task of one generated item, or says why it is not served. */
export function materialiseBridged(
  family: RgFamilyEntry,
  level: number,
  item: GeneratedItem,
  seen?: Set<string>,
): BridgedMaterialised {
  const config = family.levels[level]?.config;
  if (!config) return { ok: false, reason: 'invalid', detail: `rg.${family.dataset} has no level ${level}` };
  if (!itemVerifies(item)) {
    const why =
      typeof item.answer !== 'string'
        ? 'its answer is not text'
        : item.witness !== 1
          ? `its own answer scores ${item.witness}${item.witnessReason ? ` (${item.witnessReason})` : ''}`
          : 'the scorer accepts every near miss';
    return {
      ok: false,
      reason: 'unverified',
      detail: `rg.${family.dataset} level ${level} item ${item.index}: ${why}`,
    };
  }
  const hash = sha(JSON.stringify([family.dataset, config, item.entry]));
  const statement = item.question!;
  const id = taskId('problem', hash, statement);
  if (seen?.has(id)) return { ok: false, reason: 'duplicate', detail: `task ${id} was seen before` };
  seen?.add(id);
  const fam = familyId(family.dataset);
  const data: BridgedData = { dataset: family.dataset, config, index: item.index, entry: item.entry };
  return {
    ok: true,
    task: {
      id,
      type: 'problem',
      family: fam,
      level,
      skills: [`${fam}.solve`],
      program: '',
      hash,
      parent: null,
      proposer: 'reasoning-gym',
      statement,
      data: data as unknown as Json,
      witness: item.answer,
      failures: item.failures,
      verifier: `${BRIDGED_VERIFIER_PREFIX}${family.dataset}`,
    },
  };
}

export interface DrawOptions {
  family: string;
  level: number;
  rng: Rng;
  seen?: Set<string>;
  /** Items to try before giving up (default 20). */
  attempts?: number;
}

/**
 * Kill timeout of generating and checking one item. Most take milliseconds; some generators spin on
 * some seeds (arc_1d's hardest level did for minutes in bench:generators), and a run must not wait.
 */
const GENERATE_TIMEOUT_MS = 30_000;

/** The index space of a level: its config's `size` (the worker sets it), else 2^20. */
const indexSpace = (config: { [key: string]: Json }): number =>
  typeof config.size === 'number' && config.size > 0 ? config.size : 2 ** 20;

/** Draws items of a bridged family's level until one is served. Same rng state (and seen set) → same task. */
export async function drawBridged(worker: RgWorker, opts: DrawOptions): Promise<ProblemTask> {
  const family = findBridgedFamily(opts.family);
  if (!family)
    throw new Error(
      `unknown bridged family '${opts.family}' (not in the Reasoning Gym catalogue; run \`cogen setup reasoning-gym\`)`,
    );
  const config = family.levels[opts.level]?.config;
  if (!config)
    throw new Error(`bridged family '${opts.family}' has ${family.levels.length} levels, not level ${opts.level}`);
  const attempts = opts.attempts ?? 20;
  const reasons = new Map<string, number>();
  let last = '';
  for (let i = 0; i < attempts; i++) {
    const index = opts.rng.int(0, indexSpace(config) - 1);
    let items: GeneratedItem[];
    try {
      ({ items } = await worker.request<{ items: GeneratedItem[] }>(
        'generate',
        { dataset: family.dataset, config, indices: [index] },
        GENERATE_TIMEOUT_MS,
      ));
    } catch (e) {
      // An item that does not generate in time is skipped like one that does not verify (the
      // worker was killed and restarts); other failures (no Python, a crash) end the draw.
      if (!(e instanceof WorkerFailure && e.reason === 'timeout')) throw e;
      reasons.set('timeout', (reasons.get('timeout') ?? 0) + 1);
      last = e.message;
      continue;
    }
    const m = materialiseBridged(family, opts.level, items[0]!, opts.seen);
    if (m.ok) return m.task;
    reasons.set(m.reason, (reasons.get(m.reason) ?? 0) + 1);
    last = m.detail;
  }
  const summary = [...reasons].map(([k, n]) => `${k} ×${n}`).join(', ');
  throw new Error(
    `drawBridged: no served item of '${opts.family}' at level ${opts.level} after ${attempts} draws (${summary}; last ${last})`,
  );
}

const isData = (d: Json | undefined): d is { [key: string]: Json } => !!d && typeof d === 'object' && !Array.isArray(d);

/**
 * Scores one answer with the dataset's score_answer in the worker. Never throws: a malformed task, an
 * answer too long, a timeout (the worker is killed and restarts) or a crash scores 0 with a reason.
 */
export async function scoreBridged(worker: RgWorker, task: ProblemTask, answer: string): Promise<Verdict> {
  const d = task.data;
  if (!isData(d) || typeof d.dataset !== 'string' || !isData(d.config) || !isData(d.entry))
    return { reward: 0, reason: 'invalid: the task carries no Reasoning Gym entry' };
  if (task.verifier !== `${BRIDGED_VERIFIER_PREFIX}${d.dataset}`)
    return {
      reward: 0,
      reason: `invalid: the verifier ${task.verifier} does not name the entry's dataset ${d.dataset}`,
    };
  // Only the catalogue's datasets are scored: an excluded one (its own answers do not verify) is never a verifier.
  if (!findBridgedFamily(familyId(d.dataset)))
    return {
      reward: 0,
      reason: `unavailable: rg.${d.dataset} is not a bridged family here (cogen setup reasoning-gym --list)`,
    };
  if (typeof answer !== 'string') return { reward: 0, reason: 'invalid: the answer is not text' };
  if (answer.length > worker.maxAnswerChars)
    return { reward: 0, reason: `too-long: the answer is longer than ${worker.maxAnswerChars} characters` };
  try {
    const r = await worker.request<{ score: number; reason?: string }>('score', {
      dataset: d.dataset,
      config: d.config,
      entry: d.entry,
      answer,
    });
    const reward = Number.isFinite(r.score) ? Math.min(1, Math.max(0, r.score)) : 0;
    return reward === 1 ? { reward } : { reward, reason: r.reason ? `scorer: ${r.reason}` : 'wrong' };
  } catch (e) {
    if (e instanceof WorkerFailure) return { reward: 0, reason: `${e.reason}: ${e.message}` };
    return { reward: 0, reason: `error: ${(e as Error).message}` };
  }
}
