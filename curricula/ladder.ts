// Ladder (as Reasoning Gym's curriculum trainer): each family sits at one level; after k attempts at
// that level, promote when their mean accuracy is ≥ promoteAt, demote when it is ≤ demoteAt.
import { z } from 'zod';
import type { Rng } from '../core/rng.js';
import type { Arm, ArmResult, Controller, Pick, PickContext } from './types.js';
import { checkState, jsonCopy, newPick, pushWindow, requireArms } from './util.js';
import { mean } from '../core/stats.js';

export const ladderOptions = z
  .strictObject({
    /** Attempts (tasks) at the current level before a decision. */
    k: z.number().int().min(1).default(8),
    promoteAt: z.number().min(0).max(1).default(0.7),
    demoteAt: z.number().min(0).max(1).default(0.3),
  })
  .refine((o) => o.demoteAt < o.promoteAt, { message: 'demoteAt must be below promoteAt', path: ['demoteAt'] });
export type LadderOptions = z.infer<typeof ladderOptions>;
/** A mean of k equal accuracies can land a rounding error below them (3 × 0.7 / 3 = 0.6999…). */
const EPS = 1e-9;

interface FamilyState {
  level: number;
  /** Solve rates of the last attempts at `level`. */
  window: number[];
}
interface LadderState {
  name: 'ladder';
  version: 1;
  families: Record<string, FamilyState>;
}

export class LadderController implements Controller {
  readonly name = 'ladder';
  private readonly opts: LadderOptions;
  /** Levels each family offers, ascending (from the constructor's arms and any seen later). */
  private readonly levels = new Map<string, number[]>();
  private families: Record<string, FamilyState> = {};

  constructor(arms: readonly Arm[], opts: z.input<typeof ladderOptions> = {}) {
    this.opts = ladderOptions.parse(opts);
    this.learnLevels(arms);
  }

  private learnLevels(arms: readonly Arm[]): void {
    for (const a of arms) {
      const ls = this.levels.get(a.family) ?? [];
      if (!ls.includes(a.level)) {
        ls.push(a.level);
        ls.sort((x, y) => x - y);
      }
      this.levels.set(a.family, ls);
    }
  }

  private fam(family: string): FamilyState {
    let f = this.families[family];
    if (!f) {
      f = { level: this.levels.get(family)?.[0] ?? 0, window: [] };
      this.families[family] = f;
    }
    return f;
  }

  /** The current level of each family (for progress bars and tests). */
  levelOf(family: string): number {
    return this.fam(family).level;
  }

  pick(n: number, rng: Rng, ctx: PickContext): Pick[] {
    requireArms(ctx.arms, this.name);
    this.learnLevels(ctx.arms);
    const byFamily = new Map<string, Arm[]>();
    for (const a of ctx.arms) {
      const xs = byFamily.get(a.family) ?? [];
      xs.push(a);
      byFamily.set(a.family, xs);
    }
    const families = [...byFamily.keys()];
    const out: Pick[] = [];
    for (let i = 0; i < n; i++) {
      const family = rng.pick(families);
      const open = byFamily.get(family)!;
      const cur = this.fam(family).level;
      // The current level when open; else the highest open level below it; else the lowest open one.
      let level = -Infinity;
      for (const a of open) if (a.level <= cur && a.level > level) level = a.level;
      if (level === -Infinity) level = Math.min(...open.map((a) => a.level));
      out.push(newPick(rng.pick(open.filter((a) => a.level === level))));
    }
    return out;
  }

  update(results: ArmResult[]): void {
    for (const r of results) {
      const f = this.fam(r.arm.family);
      if (r.arm.level !== f.level) continue; // only attempts at the family's current level count
      pushWindow(f.window, r.solveRate, this.opts.k);
      if (f.window.length < this.opts.k) continue;
      const acc = mean(f.window);
      const ls = this.levels.get(r.arm.family) ?? [f.level];
      const i = ls.indexOf(f.level);
      if (acc >= this.opts.promoteAt - EPS && i >= 0 && i < ls.length - 1) {
        f.level = ls[i + 1]!;
        f.window = [];
      } else if (acc <= this.opts.demoteAt + EPS && i > 0) {
        f.level = ls[i - 1]!;
        f.window = [];
      }
    }
  }

  state(): LadderState {
    return { name: 'ladder', version: 1, families: jsonCopy(this.families) };
  }
  restore(state: unknown): void {
    const s = checkState(state, this.name) as unknown as LadderState;
    this.families = s.families ?? {};
  }
}
