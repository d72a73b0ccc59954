// Mastery tracking: a pure state machine over each skill's probe result (its accuracy on the skill's
// held-out probe set, that set's trivial baseline and its size). A skill is learned when its accuracy
// reaches learnAt *and* beats the best trivial policy on the same probes (a constant answer, the most
// common output, …; src/run/probes.ts) by `margin`, on a probe set large enough for that to mean
// something (minProbes). It is forgotten when its accuracy falls below forgetBelow, or to the
// trivial baseline. Events are emitted only on crossings.
import { z } from 'zod';

const unit = () => z.number().min(0).max(1);

/** The `curriculum.mastery` options; the defaults live here and nowhere else. */
export const masteryConfigSchema = z
  .strictObject({
    /** Probe accuracy at which a skill counts as learned. */
    learnAt: unit().default(0.8),
    /** Probe accuracy below which a learned skill counts as forgotten. */
    forgetBelow: unit().default(0.5),
    /**
     * How far the accuracy must be above the probe set's trivial baseline. 0.3 = learnAt − 0.5, the
     * baseline the probe builder aims at, so that on a balanced set the threshold is learnAt itself;
     * it keeps minProbes at 17 (a smaller margin needs many more probes per skill, see minProbes).
     */
    margin: z.number().min(0.1).max(1).default(0.3),
  })
  .refine((o) => o.forgetBelow <= o.learnAt, { message: 'forgetBelow must not exceed learnAt', path: ['forgetBelow'] })
  .prefault({});

export type MasteryOptions = z.infer<typeof masteryConfigSchema>;

/** What one probe round says of one skill. */
export interface SkillProbe {
  /** Fraction of the skill's probes solved. */
  accuracy: number;
  /** Best accuracy of any trivial policy on the same probes (src/run/probes.ts). */
  baseline: number;
  /** How many probes the skill has. */
  probes: number;
}

export interface MasteryEvent {
  skillId: string;
  event: 'learned' | 'forgotten';
  step: number;
  accuracy: number;
  /** The trivial baseline of the skill's probe set. */
  baseline: number;
}

export interface MasteryState {
  /** Mastered skills → step since which they are. */
  mastered: Record<string, number>;
  /** Last probe accuracy of each skill seen. */
  accuracy: Record<string, number>;
  /** First step each skill was ever learned (for "steps to master"). */
  firstLearned: Record<string, number>;
}

/** Probe results per skill id, as a Map or a plain record. */
export type SkillProbes = ReadonlyMap<string, SkillProbe> | Readonly<Record<string, SkillProbe>>;

export const emptyMastery = (): MasteryState => ({ mastered: {}, accuracy: {}, firstLearned: {} });

/** The learning rule's test on one probe result (rounding aside: 14/17 − 9/17 is not above 0.3 by luck of floats). */
export function passes(accuracy: number, baseline: number, opts: MasteryOptions): boolean {
  return accuracy >= opts.learnAt && accuracy - baseline >= opts.margin - 1e-9;
}

/** The probe accuracy a skill must reach to be learned: learnAt, and `margin` above its trivial baseline. */
export const masteryBar = (baseline: number, opts: Pick<MasteryOptions, 'learnAt' | 'margin'>): number =>
  Math.max(opts.learnAt, baseline + opts.margin);

/** P(X ≥ k) for X ~ Binomial(n, p), summed in log space (no underflow for n in the hundreds). */
export function binomialTail(n: number, p: number, k: number): number {
  if (k <= 0) return 1;
  if (k > n) return 0;
  if (p <= 0) return 0;
  if (p >= 1) return 1;
  let logPmf = n * Math.log1p(-p); // log P(X = 0), then log P(X = i) by the ratio of consecutive terms
  const logOdds = Math.log(p) - Math.log1p(-p);
  let tail = 0;
  for (let i = 1; i <= n; i++) {
    logPmf += Math.log((n - i + 1) / i) + logOdds;
    if (i >= k) tail += Math.exp(logPmf);
  }
  return Math.min(1, tail);
}

const minProbesCache = new Map<string, number>();
/** Beyond this many probes per skill the bound is refused (margin's lower limit keeps it far away). */
const MAX_PROBES = 500;

/**
 * The fewest probes per skill for which a guesser cannot pass the learning rule by luck: for every
 * rate b (a policy that solves each probe with probability b, e.g. one that is right as often as the
 * trivial baseline b of the set), P(Binomial(n, b) / n passes the rule against baseline b) < alpha.
 * With the defaults (learnAt 0.8, margin 0.3, alpha 1 %) the worst rate is b = 0.5 and n = 17:
 * P(X ≥ 14 of 17) = 0.0064, where 16 probes would give P(X ≥ 13 of 16) = 0.0106.
 */
export function minProbes(opts: Pick<MasteryOptions, 'learnAt' | 'margin'>, alpha = 0.01): number {
  const key = `${opts.learnAt}/${opts.margin}/${alpha}`;
  const cached = minProbesCache.get(key);
  if (cached !== undefined) return cached;
  const rule = { ...opts, forgetBelow: 0 };
  for (let n = 1; n <= MAX_PROBES; n++) {
    // The smallest number of solved probes that passes against baseline b, per b on a 1 % grid.
    let worst = 0;
    for (let step = 0; step <= 100; step++) {
      const b = step / 100;
      let k = 0;
      while (k <= n && !passes(k / n, b, rule)) k++;
      worst = Math.max(worst, binomialTail(n, b, k));
    }
    if (worst < alpha) {
      minProbesCache.set(key, n);
      return n;
    }
  }
  throw new Error(`mastery: a margin of ${opts.margin} needs more than ${MAX_PROBES} probes per skill`);
}

/** Whether a probe set can ever show mastery: enough probes, and room above its baseline for the margin. */
export function masterable(probe: Pick<SkillProbe, 'baseline' | 'probes'>, opts: MasteryOptions): boolean {
  return probe.probes >= minProbes(opts) && passes(1, probe.baseline, opts);
}

/** The learning test on one probe result: a set that can show mastery, passed at this round. */
const learns = (probe: SkillProbe | undefined, opts: MasteryOptions): boolean =>
  probe !== undefined &&
  Number.isFinite(probe.accuracy) &&
  masterable(probe, opts) &&
  passes(probe.accuracy, probe.baseline, opts);

/** What one probe round says of one level of a family: its own held-out set, and the skills it requires. */
export interface LevelProbe {
  level: number;
  /** The level's own held-out set (src/run/level-sets.ts). */
  set: SkillProbe;
  /** The family's skills at this level and below, each measured on its own probe set (undefined: not measured at this round). */
  skills: readonly (SkillProbe | undefined)[];
}

/**
 * A family's highest level passed at one probe round, −1 if none. A family passes level d when the
 * learning test holds at that round on level d's own set and on every skill of the family at levels
 * ≤ d (docs/levels.md): the mastery rule, with nothing added or loosened, on each required set.
 */
export function levelPassed(levels: readonly LevelProbe[], opts: MasteryOptions): number {
  let passed = -1;
  for (const l of levels)
    if (l.level > passed && learns(l.set, opts) && l.skills.every((s) => learns(s, opts))) passed = l.level;
  return passed;
}

/** One probe round: new state (the input is not modified) and the crossings, in skill-id order. */
export function masteryStep(
  state: MasteryState,
  step: number,
  probes: SkillProbes,
  opts: MasteryOptions = masteryConfigSchema.parse({}),
): { state: MasteryState; events: MasteryEvent[] } {
  const bySkill: Record<string, SkillProbe> =
    probes instanceof Map ? Object.fromEntries(probes) : { ...(probes as Record<string, SkillProbe>) };
  const next: MasteryState = {
    mastered: { ...state.mastered },
    accuracy: { ...state.accuracy },
    firstLearned: { ...state.firstLearned },
  };
  const events: MasteryEvent[] = [];
  for (const skillId of Object.keys(bySkill).sort()) {
    const probe = bySkill[skillId]!;
    const { accuracy, baseline } = probe;
    if (!Number.isFinite(accuracy)) continue;
    next.accuracy[skillId] = accuracy;
    const isMastered = Object.prototype.hasOwnProperty.call(next.mastered, skillId);
    if (!isMastered && masterable(probe, opts) && passes(accuracy, baseline, opts)) {
      next.mastered[skillId] = step;
      if (!Object.prototype.hasOwnProperty.call(next.firstLearned, skillId)) next.firstLearned[skillId] = step;
      events.push({ skillId, event: 'learned', step, accuracy, baseline });
    } else if (isMastered && (accuracy < opts.forgetBelow || accuracy <= baseline)) {
      delete next.mastered[skillId];
      events.push({ skillId, event: 'forgotten', step, accuracy, baseline });
    }
  }
  return { state: next, events };
}

/** A stateful convenience around masteryStep. */
export class MasteryTracker {
  private s: MasteryState;
  readonly opts: MasteryOptions;
  constructor(opts: Partial<MasteryOptions> = {}, state?: MasteryState) {
    this.opts = masteryConfigSchema.parse(opts);
    this.s = state ? (JSON.parse(JSON.stringify(state)) as MasteryState) : emptyMastery();
  }
  observe(step: number, probes: SkillProbes): MasteryEvent[] {
    const r = masteryStep(this.s, step, probes, this.opts);
    this.s = r.state;
    return r.events;
  }
  mastered(): Set<string> {
    return new Set(Object.keys(this.s.mastered));
  }
  isMastered(skillId: string): boolean {
    return Object.prototype.hasOwnProperty.call(this.s.mastered, skillId);
  }
  state(): MasteryState {
    return JSON.parse(JSON.stringify(this.s)) as MasteryState;
  }
  restore(state: unknown): void {
    const s = state as Partial<MasteryState> | null;
    if (typeof s !== 'object' || s === null || typeof s.mastered !== 'object' || s.mastered === null) {
      throw new Error('mastery.restore: not a mastery state');
    }
    this.s = JSON.parse(JSON.stringify({ ...emptyMastery(), ...s })) as MasteryState;
  }
}

export function createMasteryTracker(opts: Partial<MasteryOptions> = {}, state?: MasteryState): MasteryTracker {
  return new MasteryTracker(opts, state);
}
