// Prioritised Level Replay with ACCEL-style mutation. Scored tasks go to an archive. Each pick is a
// replay with probability `fraction` (when the archive holds an open task): an archived task is drawn
// from P = (1−ρ)·P_score + ρ·P_stale, where P_score ∝ (1/rank)^(1/temperature) and P_stale ∝ steps
// since the task was last picked; a drawn task with a positive score is mutated (ACCEL) with
// probability `mutateFraction`, otherwise replayed as is. The other picks are fresh tasks, whose arms
// a base controller chooses (uniform by default, as PLR's generator).
import { z } from 'zod';
import type { Rng } from '../core/rng.js';
import type { Arm, ArmResult, Controller, Pick, PickContext } from './types.js';
import { armKey, checkState, normalise, requireArms, sampleIndex } from './util.js';
import { learnability } from '../core/rules.js';

export const replayOptions = z.strictObject({
  fraction: z.number().min(0).max(1).default(0.5),
  temperature: z.number().positive().default(0.3),
  /** ρ: weight of staleness in the replay distribution. */
  staleness: z.number().min(0).max(1).default(0.1),
  mutateFraction: z.number().min(0).max(1).default(0.25),
  archiveSize: z.number().int().min(1).default(512),
  /** What a task's score is: its learnability (1 − p for 0 < p < 1) or its group's mean |advantage|. */
  score: z.enum(['learnability', 'advantage']).default('learnability'),
});
export type ReplayOptions = z.infer<typeof replayOptions>;

export interface ArchiveEntry {
  taskId: string;
  arm: Arm;
  score: number;
  /** Step at which the task was last picked or scored. */
  lastStep: number;
  /** Times scored. */
  count: number;
}

interface ReplayState {
  name: 'replay';
  version: 1;
  archive: ArchiveEntry[];
  base: unknown;
}

/** PLR's replay distribution over the given entries at step `step`. */
export function replayProbabilities(
  entries: readonly ArchiveEntry[],
  step: number,
  temperature: number,
  rho: number,
): number[] {
  const n = entries.length;
  if (n === 0) return [];
  const order = entries
    .map((_, i) => i)
    .sort((i, j) => entries[j]!.score - entries[i]!.score || (entries[i]!.taskId < entries[j]!.taskId ? -1 : 1));
  const rank = new Array<number>(n);
  order.forEach((idx, r) => (rank[idx] = r + 1));
  const beta = temperature > 0 ? temperature : 1e-3;
  // (1/rank)^(1/β) in log space, so tiny temperatures do not underflow to all-zero.
  const logs = rank.map((r) => -Math.log(r) / beta);
  const m = Math.max(...logs);
  const ps = normalise(logs.map((l) => Math.exp(l - m)));
  const pc = normalise(entries.map((e) => Math.max(0, step - e.lastStep)));
  return ps.map((p, i) => (1 - rho) * p + rho * pc[i]!);
}

export class ReplayController implements Controller {
  readonly name = 'replay';
  private readonly opts: ReplayOptions;
  private archive: ArchiveEntry[] = [];

  constructor(
    private readonly base: Controller,
    opts: z.input<typeof replayOptions> = {},
  ) {
    this.opts = replayOptions.parse(opts);
  }

  entries(): readonly ArchiveEntry[] {
    return this.archive;
  }

  pick(n: number, rng: Rng, ctx: PickContext): Pick[] {
    requireArms(ctx.arms, this.name);
    const open = new Set(ctx.arms.map(armKey));
    const eligible = this.archive.filter((e) => open.has(armKey(e.arm)));
    const out: (Pick | null)[] = [];
    for (let i = 0; i < n; i++) {
      if (eligible.length === 0 || !(rng.next() < this.opts.fraction)) {
        out.push(null);
        continue;
      }
      const probs = replayProbabilities(eligible, ctx.step, this.opts.temperature, this.opts.staleness);
      const e = eligible[sampleIndex(probs, rng)]!;
      const mutate = e.score > 0 && rng.next() < this.opts.mutateFraction;
      e.lastStep = Math.max(e.lastStep, ctx.step);
      out.push({ kind: mutate ? 'mutate' : 'replay', arm: { ...e.arm }, taskId: e.taskId });
    }
    const fresh = out.filter((p) => p === null).length;
    const news = fresh > 0 ? this.base.pick(fresh, rng, ctx) : [];
    let j = 0;
    return out.map((p) => p ?? news[j++]!);
  }

  private scoreOf(r: ArmResult): number {
    return this.opts.score === 'advantage' ? Math.abs(r.meanAbsAdvantage) : learnability(r.solveRate);
  }

  update(results: ArmResult[]): void {
    this.base.update(results);
    for (const r of results) {
      const score = this.scoreOf(r);
      const e = this.archive.find((x) => x.taskId === r.taskId);
      if (e) {
        e.score = score;
        e.lastStep = Math.max(e.lastStep, r.step);
        e.count += 1;
      } else if (score > 0) {
        this.archive.push({ taskId: r.taskId, arm: { ...r.arm }, score, lastStep: r.step, count: 1 });
      }
    }
    if (this.archive.length > this.opts.archiveSize) {
      // Evict the lowest scores first, the stalest among equals.
      this.archive.sort((a, b) => b.score - a.score || b.lastStep - a.lastStep || (a.taskId < b.taskId ? -1 : 1));
      this.archive.length = Math.max(0, this.opts.archiveSize);
    }
  }

  state(): ReplayState {
    return {
      name: 'replay',
      version: 1,
      archive: JSON.parse(JSON.stringify(this.archive)) as ArchiveEntry[],
      base: this.base.state(),
    };
  }
  restore(state: unknown): void {
    const s = checkState(state, this.name) as unknown as ReplayState;
    this.archive = s.archive ?? [];
    if (s.base !== undefined) this.base.restore(s.base);
  }
}
