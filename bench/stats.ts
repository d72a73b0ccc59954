// The statistics the benchmarks report (docs/DESIGN.md, "Benchmarks"): seeds drawn at random, means
// with a 95 % percentile-bootstrap interval, and paired comparisons (a bootstrap interval of the
// mean paired difference, and an exact sign-flip permutation test). Written here rather than taken
// from a package because these are a few lines each and must be deterministic given a seed (the
// reports are re-rendered from their JSON); no well-kept JS package offers them over a seedable
// rng.
import { randomInt } from 'node:crypto';
import { createRng, type Rng } from '../core/rng.js';

/** `n` distinct seeds in [1, 999999], drawn from the OS's randomness: nobody picks them. */
export function drawSeeds(n: number): number[] {
  const out = new Set<number>();
  while (out.size < n) out.add(randomInt(1, 1_000_000));
  return [...out];
}

/** A bench's `--seeds`: `random:N` draws N (drawSeeds), else a comma-separated list of integers ≥ 0. */
export function seedsArg(arg: string): { seeds: number[]; drawn: boolean } {
  const random = /^random:(\d+)$/.exec(arg);
  if (!random && !/^\d+(,\d+)*$/.test(arg))
    throw new Error(`--seeds: expected random:N or a list of integers, got "${arg}"`);
  return { seeds: random ? drawSeeds(Number(random[1])) : arg.split(',').map(Number), drawn: random !== null };
}

/** The mean, NaN for no values: not core/stats.ts's `mean` (0), since a benchmark cell without samples must not read as 0. */
export const mean = (xs: readonly number[]): number => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);

/** The median (NaN for no values). */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length === 0 ? NaN : s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The q-quantile (0 ≤ q ≤ 1) of sorted values, by linear interpolation. */
function quantile(sorted: readonly number[], q: number): number {
  const i = (sorted.length - 1) * q;
  const lo = Math.floor(i),
    hi = Math.ceil(i);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (i - lo);
}

export interface Interval {
  mean: number;
  lo: number;
  hi: number;
  n: number;
}

/** The mean of `xs` with a percentile-bootstrap interval at `level` (resampling `reps` times). */
export function bootstrapMean(
  xs: readonly number[],
  opts: { level?: number; reps?: number; rng?: Rng } = {},
): Interval {
  const { level = 0.95, reps = 10_000 } = opts;
  const rng = opts.rng ?? createRng('bootstrap');
  if (xs.length === 0) return { mean: NaN, lo: NaN, hi: NaN, n: 0 };
  const means = new Float64Array(reps);
  for (let r = 0; r < reps; r++) {
    let s = 0;
    for (let i = 0; i < xs.length; i++) s += xs[Math.floor(rng.next() * xs.length)]!;
    means[r] = s / xs.length;
  }
  const sorted = Array.from(means).sort((a, b) => a - b);
  const m = mean(xs);
  // Resampled means of equal values can differ in the last bit; the interval always holds the mean.
  return {
    mean: m,
    lo: Math.min(m, quantile(sorted, (1 - level) / 2)),
    hi: Math.max(m, quantile(sorted, 1 - (1 - level) / 2)),
    n: xs.length,
  };
}

/**
 * Two-sided p-value of the sign-flip permutation test of "the paired differences are centred on 0":
 * the share of sign assignments whose |sum| is at least the observed |sum|. Exact (all 2^n) up to
 * n = 20, else `reps` random assignments (with the observed one counted, so p > 0).
 */
export function signFlipTest(diffs: readonly number[], opts: { reps?: number; rng?: Rng } = {}): number {
  const n = diffs.length;
  if (n === 0) return 1;
  // A relative tolerance, so that sums equal up to rounding count as "at least as extreme".
  const observed = Math.abs(diffs.reduce((a, b) => a + b, 0));
  const tol = 1e-9 * diffs.reduce((a, b) => a + Math.abs(b), 0);
  const extreme = (signs: (i: number) => number): boolean => {
    let s = 0;
    for (let i = 0; i < n; i++) s += signs(i) * diffs[i]!;
    return Math.abs(s) >= observed - tol;
  };
  if (n <= 20) {
    let hits = 0;
    for (let mask = 0; mask < 2 ** n; mask++) if (extreme((i) => ((mask >> i) & 1 ? -1 : 1))) hits++;
    return hits / 2 ** n;
  }
  const { reps = 100_000 } = opts;
  const rng = opts.rng ?? createRng('sign-flip');
  let hits = 1;
  for (let r = 0; r < reps; r++) if (extreme(() => (rng.next() < 0.5 ? -1 : 1))) hits++;
  return hits / (reps + 1);
}

export interface Paired extends Interval {
  /** Sign-flip p-value of the mean difference. */
  p: number;
}

/** `a − b` over paired observations (same seeds, same order): the mean difference, its bootstrap interval and p. */
export function pairedDifference(
  a: readonly number[],
  b: readonly number[],
  opts: { level?: number; reps?: number; rng?: Rng } = {},
): Paired {
  if (a.length !== b.length) throw new Error(`paired samples differ in length: ${a.length} and ${b.length}`);
  const diffs = a.map((x, i) => x - b[i]!);
  return { ...bootstrapMean(diffs, opts), p: signFlipTest(diffs, { rng: opts.rng }) };
}

/** `0.42 [0.31, 0.55]` */
export const formatInterval = (x: Interval, digits = 3): string =>
  Number.isNaN(x.mean) ? '—' : `${x.mean.toFixed(digits)} [${x.lo.toFixed(digits)}, ${x.hi.toFixed(digits)}]`;
