// Mastery tracking: a pure state machine over probe accuracies per skill. A skill is learned when its
// accuracy reaches learnAt and forgotten when it falls below forgetBelow (hysteresis between the
// two); events are emitted only on crossings.
export interface MasteryOptions {
  learnAt: number;
  forgetBelow: number;
}
export const masteryDefaults: MasteryOptions = { learnAt: 0.8, forgetBelow: 0.5 };

export interface MasteryEvent {
  skillId: string;
  event: 'learned' | 'forgotten';
  step: number;
  accuracy: number;
}

export interface MasteryState {
  /** Mastered skills → step since which they are. */
  mastered: Record<string, number>;
  /** Last probe accuracy of each skill seen. */
  accuracy: Record<string, number>;
  /** First step each skill was ever learned (for "steps to master"). */
  firstLearned: Record<string, number>;
}

/** Probe accuracy per skill id, as a Map or a plain record. */
export type Accuracies = ReadonlyMap<string, number> | Readonly<Record<string, number>>;

export const emptyMastery = (): MasteryState => ({ mastered: {}, accuracy: {}, firstLearned: {} });

/** One probe round: new state (the input is not modified) and the crossings, in skill-id order. */
export function masteryStep(
  state: MasteryState,
  step: number,
  accuracies: Accuracies,
  opts: MasteryOptions = masteryDefaults,
): { state: MasteryState; events: MasteryEvent[] } {
  const accs: Record<string, number> = accuracies instanceof Map ? Object.fromEntries(accuracies) : { ...(accuracies as Record<string, number>) };
  const next: MasteryState = {
    mastered: { ...state.mastered },
    accuracy: { ...state.accuracy },
    firstLearned: { ...state.firstLearned },
  };
  const events: MasteryEvent[] = [];
  for (const skillId of Object.keys(accs).sort()) {
    const accuracy = accs[skillId]!;
    if (!Number.isFinite(accuracy)) continue;
    next.accuracy[skillId] = accuracy;
    const isMastered = Object.prototype.hasOwnProperty.call(next.mastered, skillId);
    if (!isMastered && accuracy >= opts.learnAt) {
      next.mastered[skillId] = step;
      if (!Object.prototype.hasOwnProperty.call(next.firstLearned, skillId)) next.firstLearned[skillId] = step;
      events.push({ skillId, event: 'learned', step, accuracy });
    } else if (isMastered && accuracy < opts.forgetBelow) {
      delete next.mastered[skillId];
      events.push({ skillId, event: 'forgotten', step, accuracy });
    }
  }
  return { state: next, events };
}

/** A stateful convenience around masteryStep. */
export class MasteryTracker {
  private s: MasteryState;
  constructor(
    readonly opts: MasteryOptions = masteryDefaults,
    state?: MasteryState,
  ) {
    if (!(opts.forgetBelow <= opts.learnAt)) throw new Error('mastery: forgetBelow must be ≤ learnAt');
    this.s = state ? (JSON.parse(JSON.stringify(state)) as MasteryState) : emptyMastery();
  }
  observe(step: number, accuracies: Accuracies): MasteryEvent[] {
    const r = masteryStep(this.s, step, accuracies, this.opts);
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
  return new MasteryTracker({ ...masteryDefaults, ...opts }, state);
}
