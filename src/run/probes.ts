// The held-out mastery probes (docs/DESIGN.md, step 7), chosen so that a trivial policy (trivial.ts)
// cannot pass them.
//
// buildProbes draws a pool of candidates per arm and keeps a subset in which every skill has at
// least minProbes probes at its own level and, where the pool allows, a baseline at most
// learnAt − margin (so that the mastery threshold is learnAt itself; the pool grows while the
// balance misses that aim and its arms have more to draw). The level itself is one more target
// that every candidate of its (family, level) block exercises, chosen for after the skills: the
// block's probes are the level's held-out set (src/run/level-sets.ts), with the same quota and
// balance, and a level whose skills already give it those keeps their probes. It holds a candidate out only
// while another candidate of its case type (src/run/case-type.ts) stays with training: every case a probe
// asks for is one training covers. Candidates left out stay available to training.
import { minProbes, type MasteryOptions } from '../../curricula/index.js';
import type { TaskArm } from '../../curricula/index.js';
import type { Sandbox } from '../../sandbox/index.js';
import { drawTask } from './verification.js';
import type { Rng } from '../../core/rng.js';
import type { Skill, Task } from '../../core/task.js';
import { caseType } from './case-type.js';
import { trivialBaseline, trivialKeys, TrivialTally } from './trivial.js';
import type { Probe } from './probe-sets.js';

export interface ProbeOptions {
  /** Held-out tasks per arm, at least (where the arm's space holds them). */
  perArm: number;
  mastery: MasteryOptions;
}

interface Candidate {
  task: Task;
  arm: number;
  /** The skills of its family at its own level that it exercises. */
  targets: string[];
  trivial: string[];
  /** Its arm and case type: a probe needs a twin of this key left in training. */
  twinKey: string;
  /** Whether the pool holds its arm's whole space (the arm ran dry). */
  whole: boolean;
}

/** Rounds of drawing while a skill of the block has fewer than twice its quota in the pool, or its balance misses the aim. */
const MAX_ROUNDS = 8;

/**
 * The held-out probes of a run: per (family, level), a balanced subset of a pool drawn from each
 * arm (see the header). The chosen tasks are added to `seen`; the rest of the pool is not.
 */
export async function buildProbes(
  sandbox: Sandbox,
  arms: TaskArm[],
  skills: readonly Skill[],
  opts: ProbeOptions,
  rng: Rng,
  seen: Set<string>,
  render: (t: Task) => string,
): Promise<Probe[]> {
  const quota = minProbes(opts.mastery);
  const probes: Probe[] = [];
  const blocks = new Map<string, number[]>();
  arms.forEach((arm, i) => {
    const key = `${arm.family}/${arm.level}`;
    (blocks.get(key) ?? blocks.set(key, []).get(key)!).push(i);
  });
  for (const armIds of blocks.values()) {
    const { family, level } = arms[armIds[0]!]!;
    const targets = skills.filter((s) => s.family === family && s.level === level).map((s) => s.id);
    // The level's own target: every candidate of the block exercises it (see the header).
    const levelTarget = `level ${family}/${level}`;
    const exercises = (c: { task: Task }, s: string) => s === levelTarget || c.task.skills.includes(s);
    // A round draws enough for every skill's quota if each arm held a third of a skill's probes;
    // more rounds follow while a skill is rare in the pool (one in twenty tasks, say).
    const round = opts.perArm + Math.ceil((2 * quota * Math.max(1, targets.length)) / armIds.length);
    const pool = new Pool(sandbox, arms, armIds, rng, seen);
    const twinKey = (c: { task: Task; arm: number }) => `${c.arm} ${caseType(c.task)}`;
    const holdableFor = (s: string) =>
      holdable(
        pool.tasks.filter((c) => exercises(c, s)).map((c) => ({ twinKey: twinKey(c), whole: pool.dry.has(c.arm) })),
      );
    const choice = { quota, perArm: opts.perArm, aim: opts.mastery.learnAt - opts.mastery.margin };
    const all = [...targets, levelTarget];
    let chosen: Candidate[] = [];
    for (let r = 1; r <= MAX_ROUNDS; r++) {
      await pool.draw(r * round);
      const allDry = armIds.every((a) => pool.dry.has(a));
      // (a skill no task of the pool exercises is left alone: it is absent at this level, or too rare)
      const counts = all.map((s) => pool.tasks.filter((c) => !pool.dry.has(c.arm) && exercises(c, s)).length);
      const short =
        counts.some((n) => n > 0 && n < 2 * quota) || all.some((s, i) => counts[i]! > 0 && holdableFor(s) < quota);
      if (short && !allDry && r < MAX_ROUNDS) continue;
      const reachable = (tier: string[]) => tier.filter((s) => holdableFor(s) >= quota);
      const tiers = [reachable(targets), reachable([levelTarget])];
      const made = await chooseFromPool(sandbox, pool, armIds, tiers, levelTarget, twinKey, choice);
      chosen = made.chosen;
      // A skill whose probes a trivial policy passes more often than the aim has a bar above learnAt
      // (above 1, out of reach, past a baseline of 0.7); a larger pool gives the balance more to choose.
      if (allDry || made.balanced) break;
    }
    // The recorded keys try every argument list of the chosen probes as a constant, not only the
    // pool's most common ones.
    const keys = await trivialKeys(
      sandbox,
      chosen.map((c) => c.task),
    );
    chosen.forEach((c, i) => {
      seen.add(c.task.id);
      probes.push({ task: c.task, prompt: render(c.task), trivial: keys[i]! });
    });
  }
  return probes;
}

/**
 * The balanced choice from a block's pool (chooseBalanced, its targets in tiers: the skills, then
 * the level), sorted by arm, and whether every reachable target's trivial baseline on it is within the aim.
 */
async function chooseFromPool(
  sandbox: Sandbox,
  pool: Pool,
  armIds: number[],
  tiers: string[][],
  levelTarget: string,
  twinKey: (c: { task: Task; arm: number }) => string,
  o: { quota: number; perArm: number; aim: number },
): Promise<{ chosen: Candidate[]; balanced: boolean }> {
  const trivial = await trivialKeys(
    sandbox,
    pool.tasks.map((c) => c.task),
    POOL_CONSTANTS,
  );
  const candidates: Candidate[] = pool.tasks.map((c, i) => ({
    ...c,
    targets: [...c.task.skills.filter((s) => tiers[0]!.includes(s)), levelTarget],
    trivial: trivial[i]!,
    twinKey: twinKey(c),
    whole: pool.dry.has(c.arm),
  }));
  // An arm whose space ran dry gives at most a quarter of it, so that training keeps the rest; a
  // skill the pool cannot give its quota (within each case type's holdLimit) is not chased (it
  // cannot show mastery either way).
  const caps = new Map(
    armIds.map((a) => [
      a,
      pool.dry.has(a) ? Math.max(1, Math.floor(pool.tasks.filter((c) => c.arm === a).length / 4)) : Infinity,
    ]),
  );
  const chosen = chooseBalanced(candidates, tiers, armIds, { ...o, caps }).sort((x, y) => x.arm - y.arm);
  const balanced = tiers
    .flat()
    .every((s) => trivialBaseline(chosen.filter((c) => c.targets.includes(s))) <= o.aim + 1e-9);
  return { chosen, balanced };
}

/**
 * How many of a case type's `n` candidates in the pool may be held out: at least one of two or more,
 * never the last, and where the pool is the arm's whole space (`whole`: the arm ran dry) a quarter (as
 * of the arm): training then keeps three of each case type for every one held out. Where the pool is
 * a sample of a larger space, half of it: training keeps at least as many as are held out, and more
 * from the rest of the space. (All but one would let a rare case type, `a * a` in arithmetic level 0,
 * be held out nearly whole: 7 of its 9 tasks, on seed 23.)
 */
export const holdLimit = (n: number, whole: boolean): number =>
  n < 2 ? 0 : Math.max(1, Math.floor(n / (whole ? 4 : 2)));

/** How many of these candidates may be held out, case type by case type (holdLimit). */
function holdable(candidates: readonly Pick<Candidate, 'twinKey' | 'whole'>[]): number {
  const perKey = new Map<string, { n: number; whole: boolean }>();
  for (const c of candidates) perKey.set(c.twinKey, { n: (perKey.get(c.twinKey)?.n ?? 0) + 1, whole: c.whole });
  return [...perKey.values()].reduce((n, k) => n + holdLimit(k.n, k.whole), 0);
}

/** Drafts that must all repeat drawn tasks before an arm counts as dry (Pool.fresh). */
const DRY_DRAFTS = 400;

/** Constant argument lists tried per group when keying a whole pool: its most common ones. */
const POOL_CONSTANTS = 16;

/** Distinct candidates drawn from a block's arms past `seen`; an arm whose draw finds nothing new is dry. */
class Pool {
  readonly tasks: { task: Task; arm: number }[] = [];
  readonly dry = new Set<number>();
  private readonly drawn: Set<string>;
  private readonly next = new Map<number, number>();
  constructor(
    private readonly sandbox: Sandbox,
    private readonly arms: TaskArm[],
    private readonly armIds: number[],
    private readonly rng: Rng,
    seen: Set<string>,
  ) {
    this.drawn = new Set(seen);
  }

  /** Draws until each arm that is not dry has made `perArm` draws. */
  async draw(perArm: number): Promise<void> {
    for (const a of this.armIds) {
      const arm = this.arms[a]!;
      for (let i = this.next.get(a) ?? 0; i < perArm && !this.dry.has(a); i++) {
        this.next.set(a, i + 1);
        const rng = this.rng.fork(`${arm.family}/${arm.level}/${arm.type}/${i}`);
        const task = await this.fresh(arm, rng);
        if (task) this.tasks.push({ arm: a, task });
        else this.dry.add(a);
      }
    }
  }

  /**
   * A task past the drawn ones, or null where the arm's space seems spent. Twenty drafts find one
   * while much of the space is fresh; their failing is checked with DRY_DRAFTS more before the arm
   * counts as dry, since a space drawn unevenly fails twenty drafts early (seed 585866520's arithmetic
   * level 0 went dry at 175 of its 375 tasks, and so counted as whole when it was half).
   */
  private async fresh(arm: TaskArm, rng: Rng): Promise<Task | null> {
    for (const attempts of [20, DRY_DRAFTS]) {
      try {
        return await drawTask(this.sandbox, { ...arm, rng, seen: this.drawn, attempts });
      } catch {
        // next budget, or dry
      }
    }
    return null;
  }
}

/**
 * Greedy choice from the pool (in its random order), within each case type's holdLimit, tier by tier
 * (the skills, then the level; each tier counts the targets of the tiers before it too): first, while
 * an arm lacks perArm probes or a target lacks its quota, the candidate that fills the most of those
 * needs and raises the fewest trivial baselines; then, while a target's baseline is above the aim,
 * candidates that lower it without lifting another target's above the aim (at most as many again).
 */
function chooseBalanced(
  pool: Candidate[],
  tiers: string[][],
  armIds: number[],
  o: { quota: number; perArm: number; caps: ReadonlyMap<number, number>; aim: number },
): Candidate[] {
  const tallies = new Map(tiers.flat().map((s) => [s, new TrivialTally()]));
  const perArm = new Map(armIds.map((a) => [a, 0]));
  const chosen: Candidate[] = [];
  const left = new Set(pool.map((c) => ({ ...c, targets: c.targets.filter((s) => tallies.has(s)) })));
  // Per case type, how many more may be held out (holdLimit of its candidates in the pool).
  const room = new Map<string, number>();
  for (const c of pool) room.set(c.twinKey, (room.get(c.twinKey) ?? 0) + 1);
  for (const [k, n] of room) room.set(k, holdLimit(n, pool.find((c) => c.twinKey === k)!.whole));
  const take = (c: Candidate) => {
    room.set(c.twinKey, room.get(c.twinKey)! - 1);
    for (const s of c.targets) tallies.get(s)!.add(c.trivial);
    perArm.set(c.arm, perArm.get(c.arm)! + 1);
    chosen.push(c);
    left.delete(c);
  };
  const best = (score: (c: Candidate) => number | null): Candidate | undefined => {
    let top: Candidate | undefined;
    let topScore = -Infinity;
    for (const c of left) {
      if (perArm.get(c.arm)! >= o.caps.get(c.arm)! || room.get(c.twinKey)! < 1) continue;
      const s = score(c);
      if (s !== null && s > topScore) [top, topScore] = [c, s];
    }
    return top;
  };
  const active = new Set<string>();
  for (const [i, tier] of tiers.entries()) {
    if (i > 0 && tier.length === 0) continue; // (nothing new to choose for: the tier before had its whole budget)
    for (const s of tier) active.add(s);
    const on = (c: Candidate) => c.targets.filter((s) => active.has(s));
    const raised = (c: Candidate) => on(c).reduce((n, s) => n + tallies.get(s)!.gain(c.trivial), 0);
    for (;;) {
      const c = best((c) => {
        const need =
          (perArm.get(c.arm)! < o.perArm ? 1 : 0) + on(c).filter((s) => tallies.get(s)!.size < o.quota).length;
        // Ties go to the arm with the fewest probes, so that a skill's probes spread over its types.
        return need > 0 ? need - raised(c) - perArm.get(c.arm)! / 1e3 : null;
      });
      if (!c) break;
      take(c);
    }
    const after = (s: string, c: Candidate) => {
      const t = tallies.get(s)!;
      return (t.solved + t.gain(c.trivial)) / (t.size + 1);
    };
    for (let extra = chosen.length; extra > 0; extra--) {
      const c = best((c) => {
        const lowered = on(c).filter(
          (s) => tallies.get(s)!.baseline() > o.aim && tallies.get(s)!.gain(c.trivial) === 0,
        ).length;
        const lifted = on(c).filter((s) => tallies.get(s)!.gain(c.trivial) === 1 && after(s, c) > o.aim).length;
        return lowered > 0 && lifted === 0 ? lowered : null;
      });
      if (!c) break;
      take(c);
    }
  }
  return chosen;
}

// What a probe round and the door use, from where it lives.
export * from './trivial.js';
export * from './probe-sets.js';
