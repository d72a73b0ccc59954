// The learned preferences over the grammar's choices and the chooser that samples from them.
// A choice point is named by what it decides (`prod:int`: which production fills an int hole,
// `leaf:str`: whether a str hole stops growing, `int:k:2..9`: which range an integer literal falls
// in); an option's probability is softmax(log fixed weight + preference), so with all preferences
// at 0 the learned chooser draws from the fixed generators' distribution.
import type { Rng } from '../core/rng.js';
import { productionLabel, type Chooser, type Production } from '../generators/index.js';

/** One decision of a draft: the point, its options with their fixed weights, and the option taken. */
export interface Choice {
  point: string;
  labels: string[];
  weights: number[];
  chosen: number;
}

/** Preferences of one arm: point → option label → logit offset. */
export type Preferences = Record<string, Record<string, number>>;

/** softmax(log w + θ) over the options of a choice (weight-0 options keep probability 0). */
export function probabilities(
  prefs: Preferences,
  point: string,
  labels: readonly string[],
  weights: readonly number[],
): number[] {
  const at = prefs[point];
  const logits = labels.map((l, i) => (weights[i]! > 0 ? Math.log(weights[i]!) + (at?.[l] ?? 0) : -Infinity));
  const top = Math.max(...logits);
  const exps = logits.map((z) => (z === -Infinity ? 0 : Math.exp(z - top)));
  const total = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / total);
}

/** Draws an index from `probs` with one uniform from the rng. */
function draw(rng: Rng, probs: readonly number[]): number {
  let r = rng.next();
  let last = 0;
  for (let i = 0; i < probs.length; i++) {
    if (probs[i]! <= 0) continue;
    last = i;
    r -= probs[i]!;
    if (r < 0) return i;
  }
  return last;
}

/**
 * Up to four buckets of [lo, hi] (sizes as equal as integers allow), labelled `a..b`: integer
 * literals are learned as ranges, which transfer between the programs of an arm where single
 * values would not.
 */
export function buckets(lo: number, hi: number): { lo: number; hi: number; label: string }[] {
  const n = hi - lo + 1;
  const k = Math.max(1, Math.min(4, n));
  return Array.from({ length: k }, (_, b) => {
    const a = lo + Math.floor((b * n) / k);
    const z = lo + Math.floor(((b + 1) * n) / k) - 1;
    return { lo: a, hi: z, label: `${a}..${z}` };
  });
}

/** A chooser that samples from an arm's preferences and records the choices of the current candidate. */
export class TracingChooser implements Chooser {
  trace: Choice[] = [];
  /** Traces of candidates the kit's reference interpreter refused before the last (at most maxRefused kept). */
  readonly refused: Choice[][] = [];
  private started = false;

  constructor(
    private readonly prefs: Preferences,
    private readonly maxRefused = 0,
  ) {}

  begin(): void {
    if (this.started && this.refused.length < this.maxRefused) this.refused.push(this.trace);
    this.started = true;
    this.trace = [];
  }

  private choose(rng: Rng, point: string, labels: string[], weights: number[]): number {
    const chosen = draw(rng, probabilities(this.prefs, point, labels, weights));
    this.trace.push({ point, labels, weights, chosen });
    return chosen;
  }

  production(rng: Rng, ty: string, options: Production[]): Production {
    const labels = options.map(productionLabel);
    return options[
      this.choose(
        rng,
        `prod:${ty}`,
        labels,
        options.map((p) => p.weight ?? 1),
      )
    ]!;
  }

  leaf(rng: Rng, ty: string, p: number): boolean {
    return this.choose(rng, `leaf:${ty}`, ['leaf', 'grow'], [p, 1 - p]) === 0;
  }

  int(rng: Rng, ty: string, lo: number, hi: number): number {
    const bs = buckets(lo, hi);
    const b =
      bs[
        this.choose(
          rng,
          `int:${ty}:${lo}..${hi}`,
          bs.map((x) => x.label),
          bs.map((x) => x.hi - x.lo + 1),
        )
      ]!;
    return rng.int(b.lo, b.hi);
  }
}

/** A draft's choices as one line, `point=option` each (the learned proposer's "prompt" in exports). */
export const traceText = (trace: readonly Choice[]): string =>
  trace.map((c) => `${c.point}=${c.labels[c.chosen]}`).join(' ');
