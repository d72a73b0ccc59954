// Level frontier (RLVE's adaptive difficulty, Zeng et al. 2025; docs/levels.md): each family × task
// type has an upper level h, starting at `start`. A pick draws a family × type uniformly and a level
// uniformly from the last `window` levels [h − window + 1, h] (from 0). Only answers at h count, and
// never a proposed child's (curricula/evolve.ts): once `minPrompts` tasks at h have been scored, h
// rises by one when their accuracy (answers solved over answers) is at least `promoteAt`; either way
// the count starts again. h never falls. It climbs as
// far as the family's ceiling (the run's maxLevel, or the family's last renderable level), past the
// arms the run lists when the family's levels are open (PickContext.ceilings).
import { z } from 'zod';
import type { Rng } from '../core/rng.js';
import { solvedCount } from '../core/rules.js';
import { isTaskArm, type Arm, type ArmResult, type Controller, type Pick, type PickContext } from './types.js';
import { checkState, jsonCopy, newPick, requireArms } from './util.js';

export const levelFrontierOptions = z.strictObject({
  /** Accuracy at h that raises h (RLVE: 0.9). */
  promoteAt: z.number().min(0).max(1).default(0.9),
  /** Tasks at h scored before their accuracy is judged (RLVE: 8 prompts, each with the group's G answers). */
  minPrompts: z.number().int().min(1).default(8),
  /** How many levels up to h a pick draws from (RLVE: 4, so [h − 3, h]). */
  window: z.number().int().min(1).default(4),
  /** Where h starts (RLVE: 0). */
  start: z.number().int().min(0).default(0),
});
export type LevelFrontierOptions = z.infer<typeof levelFrontierOptions>;

/** A mean of equal accuracies can land a rounding error below them. */
const EPS = 1e-9;

interface KeyState {
  h: number;
  /** Tasks at h scored since the last judgement, their answers and how many solved. */
  prompts: number;
  answers: number;
  solved: number;
}

interface LevelFrontierState {
  name: 'level-frontier';
  version: 1;
  keys: Record<string, KeyState>;
}

/** The frontier's key of an arm: its family and task type (or environment kind). */
export const frontierKey = (a: Omit<Arm, 'level'>): string => `${a.family}/${a.type}`;

export class LevelFrontierController implements Controller {
  readonly name = 'level-frontier';
  private readonly opts: LevelFrontierOptions;
  private keys: Record<string, KeyState> = {};
  /** Each key's ceiling as the last pick saw it (what update may raise h to). */
  private readonly ceiling = new Map<string, number>();

  constructor(opts: z.input<typeof levelFrontierOptions> = {}) {
    this.opts = levelFrontierOptions.parse(opts);
  }

  private key(k: string): KeyState {
    return (this.keys[k] ??= { h: this.opts.start, prompts: 0, answers: 0, solved: 0 });
  }

  /** Each family × type's h now (the metrics, `cogen skills` and `/v1/stats` show it). */
  frontier(): Record<string, number> {
    return Object.fromEntries(Object.entries(this.keys).map(([k, s]) => [k, s.h]));
  }

  pick(n: number, rng: Rng, ctx: PickContext): Pick[] {
    requireArms(ctx.arms, this.name);
    const byKey = new Map<string, Arm[]>();
    for (const a of ctx.arms) {
      const k = frontierKey(a);
      (byKey.get(k) ?? byKey.set(k, []).get(k)!).push(a);
    }
    const keys = [...byKey.keys()];
    const out: Pick[] = [];
    for (let i = 0; i < n; i++) {
      const k = keys[rng.int(0, keys.length - 1)]!;
      const arms = byKey.get(k)!;
      const choices = this.window(k, arms, ctx);
      out.push(
        newPick({ family: arms[0]!.family, type: arms[0]!.type, level: choices[rng.int(0, choices.length - 1)]! }),
      );
    }
    return out;
  }

  /**
   * The levels a pick of key k draws from: those of [h − window + 1, h] it may reach (its open arms'
   * levels, and for a task arm whose family is in ctx.ceilings every level above its arms up to that
   * ceiling); when gating closes them all, the highest open level below h, else the lowest open one.
   */
  private window(k: string, arms: Arm[], ctx: PickContext): number[] {
    const listed = [...new Set(arms.map((a) => a.level))].sort((x, y) => x - y);
    const highest = listed[listed.length - 1]!;
    const ceiling = isTaskArm(arms[0]!) ? (ctx.ceilings?.get(arms[0]!.family) ?? highest) : highest;
    const top = Math.max(highest, ceiling);
    this.ceiling.set(k, top);
    const h = Math.min(this.key(k).h, top);
    const lo = h - this.opts.window + 1;
    const above = range(Math.max(highest + 1, lo), h);
    const inWindow = [...listed.filter((l) => l <= h && l >= lo), ...above];
    if (inWindow.length > 0) return inWindow;
    const below = listed.filter((l) => l <= h);
    return [below.length > 0 ? below[below.length - 1]! : listed[0]!];
  }

  update(results: ArmResult[]): void {
    for (const r of results) {
      const k = frontierKey(r.arm);
      const s = this.key(k);
      // Only fresh tasks at h count: a proposed child was chosen for being half-solved (RLVE's rule).
      if (r.arm.level !== s.h || r.child) continue;
      s.prompts++;
      s.answers += r.rewards.length;
      s.solved += solvedCount(r.rewards);
      if (s.prompts < this.opts.minPrompts) continue;
      const top = this.ceiling.get(k) ?? Infinity;
      if (s.answers > 0 && s.solved / s.answers >= this.opts.promoteAt - EPS && s.h < top) s.h++;
      s.prompts = s.answers = s.solved = 0;
    }
  }

  state(): LevelFrontierState {
    return { name: 'level-frontier', version: 1, keys: jsonCopy(this.keys) };
  }
  restore(state: unknown): void {
    const s = checkState(state, this.name) as unknown as LevelFrontierState;
    this.keys = s.keys ?? {};
  }
}

/** lo, lo + 1, …, hi (empty when hi < lo). */
const range = (lo: number, hi: number): number[] => Array.from({ length: Math.max(0, hi - lo + 1) }, (_, i) => lo + i);
