// The frontier proposer (docs/proposers.md, "At the frontier"): ACCEL's evolution made directed.
// The wrapped controller (level-frontier) keeps choosing families and h; this keeps the run's band
// tasks (0 < solve rate < 1) with their solve rates, and fills a `share` of each batch with
// children of band tasks at h (or up to `near` levels below it): a parent solved more often than
// not gets a harder child, one solved less often an easier one, one at exactly one half either
// (generators/directed.ts), or it is crossed with another band task of its family and type. Which
// operator it uses is a bandit per family × type × level, on the child's own learnability (1 − p
// for 0 < p < 1, core/rules.ts): a softmax over each operator's running mean. Children are
// reported with ArmResult.child, and level-frontier never counts them toward promotion.
import { z } from 'zod';
import type { Rng } from '../core/rng.js';
import { learnability, solvedCount } from '../core/rules.js';
import { CROSSOVER, DIRECTED_OPS, FRONTIER_OPS } from '../generators/index.js';
import { frontierKey } from './level-frontier.js';
import { isTaskArm, type Arm, type ArmResult, type Controller, type Pick, type PickContext } from './types.js';
import { checkState, jsonCopy, sampleIndex, softmax } from './util.js';

export const evolveOptions = z.strictObject({
  /** Fraction of each batch filled with children of band tasks (0: off). */
  share: z.number().min(0).max(1).default(0),
  /** How many levels below h a parent may be at (0: at h only). */
  near: z.number().int().min(0).default(0),
  /** Band tasks kept; the ones scored longest ago leave first. */
  archiveSize: z.number().int().min(1).default(256),
  /** Softmax temperature over the operators' mean learnability. */
  temperature: z.number().positive().default(0.1),
  /** Mean learnability an operator starts from (its first child moves it most). */
  prior: z.number().min(0).max(1).default(0.5),
});
export type EvolveOptions = z.infer<typeof evolveOptions>;

interface BandEntry {
  taskId: string;
  arm: Arm;
  /**
   * Answers solved and given over the task's scorings, each earlier scoring weighing half the one
   * after it: with a group of 2, one scoring of a band task always reads 1/2, and a replayed task
   * tells which side of it the solver is on.
   */
  solved: number;
  answers: number;
  step: number;
}

/** One operator's record at one family × type × level: children scored and their mean learnability. */
interface OpValue {
  n: number;
  mean: number;
}

interface EvolveState {
  name: 'evolve';
  version: 1;
  band: BandEntry[];
  values: Record<string, Record<string, OpValue>>;
  base: unknown;
}

const levelKey = (a: Arm): string => `${frontierKey(a)}/${a.level}`;

export class EvolveController implements Controller {
  readonly name = 'evolve';
  private readonly opts: EvolveOptions;
  private band: BandEntry[] = [];
  private values: Record<string, Record<string, OpValue>> = {};

  constructor(
    private readonly base: Controller,
    opts: z.input<typeof evolveOptions> = {},
  ) {
    this.opts = evolveOptions.parse(opts);
  }

  frontier(): Record<string, number> | undefined {
    return this.base.frontier?.();
  }

  /** The band tasks kept now, and each operator's record (for the metrics and the bench). */
  snapshot(): { band: readonly BandEntry[]; values: Readonly<Record<string, Record<string, OpValue>>> } {
    return { band: this.band, values: this.values };
  }

  pick(n: number, rng: Rng, ctx: PickContext): Pick[] {
    const parents = this.parents(ctx);
    const out: (Pick | null)[] = [];
    for (let i = 0; i < n; i++)
      out.push(parents.length > 0 && rng.next() < this.opts.share ? this.child(rng, parents) : null);
    const fresh = out.filter((p) => p === null).length;
    const news = fresh > 0 ? this.base.pick(fresh, rng, ctx) : [];
    let j = 0;
    return out.map((p) => p ?? news[j++]!);
  }

  /** Band tasks of open families and types at h, or up to `near` levels below it. */
  private parents(ctx: PickContext): BandEntry[] {
    const h = this.base.frontier?.() ?? {};
    const open = new Set(ctx.arms.map(frontierKey));
    return this.band.filter((e) => {
      const k = frontierKey(e.arm);
      const top = h[k];
      return open.has(k) && top !== undefined && e.arm.level <= top && e.arm.level >= top - this.opts.near;
    });
  }

  private child(rng: Rng, parents: BandEntry[]): Pick {
    const parent = rng.pick(parents);
    const p = parent.solved / parent.answers;
    const mates = parents.filter((e) => e.taskId !== parent.taskId && frontierKey(e.arm) === frontierKey(parent.arm));
    const directed: readonly string[] =
      p > 0.5 ? DIRECTED_OPS.harder : p < 0.5 ? DIRECTED_OPS.easier : [...DIRECTED_OPS.harder, ...DIRECTED_OPS.easier];
    const ops = mates.length > 0 ? [...directed, CROSSOVER] : [...directed];
    const values = this.values[levelKey(parent.arm)] ?? {};
    const means = ops.map((op) => values[op]?.mean ?? this.opts.prior);
    const op = ops[sampleIndex(softmax(means, this.opts.temperature), rng)]!;
    const pick: Pick = { kind: 'mutate', arm: { ...parent.arm }, taskId: parent.taskId, op };
    return op === CROSSOVER ? { ...pick, mate: rng.pick(mates).taskId } : pick;
  }

  update(results: ArmResult[]): void {
    this.base.update(results);
    for (const r of results) {
      if (!isTaskArm(r.arm)) continue;
      if (r.child && (FRONTIER_OPS as readonly string[]).includes(r.child.op))
        this.learn(r.arm, r.child.op, r.solveRate);
      this.keep(r);
    }
    if (this.band.length > this.opts.archiveSize) {
      this.band.sort((a, b) => b.step - a.step || (a.taskId < b.taskId ? -1 : 1));
      this.band.length = this.opts.archiveSize;
    }
  }

  private learn(arm: Arm, op: string, solveRate: number): void {
    const table = (this.values[levelKey(arm)] ??= {});
    const v = (table[op] ??= { n: 0, mean: this.opts.prior });
    v.n += 1;
    // The prior weighs as one child, so the first child moves the mean halfway.
    v.mean += (learnability(solveRate) - v.mean) / (v.n + 1);
  }

  /** A task is in the band while its latest scoring is neither all solved nor all failed. */
  private keep(r: ArmResult): void {
    const solved = solvedCount(r.rewards);
    const i = this.band.findIndex((e) => e.taskId === r.taskId);
    const e = i >= 0 ? this.band[i]! : { taskId: r.taskId, arm: { ...r.arm }, solved: 0, answers: 0, step: r.step };
    e.solved = e.solved / 2 + solved;
    e.answers = e.answers / 2 + r.rewards.length;
    e.step = r.step;
    const inBand = solved > 0 && solved < r.rewards.length;
    if (inBand && i < 0) this.band.push(e);
    if (!inBand && i >= 0) this.band.splice(i, 1);
  }

  state(): EvolveState {
    return {
      name: 'evolve',
      version: 1,
      band: jsonCopy(this.band),
      values: jsonCopy(this.values),
      base: this.base.state(),
    };
  }
  restore(state: unknown): void {
    const s = checkState(state, this.name) as unknown as EvolveState;
    this.band = s.band ?? [];
    this.values = s.values ?? {};
    if (s.base !== undefined) this.base.restore(s.base);
  }
}
