// The small statistics every room reports alike: the mean of a batch's values and a share written
// as a whole percentage. One home, so that a metric means the same in the loop (src/), the
// curricula, the proposers and the skill graph's views. The benchmarks' statistics (seeds,
// bootstrap intervals, paired tests) live in bench/stats.ts.

/**
 * The arithmetic mean; 0 for no values (an empty batch's metric reads 0, not NaN, which the run
 * store's JSON would turn into null). bench/stats.ts's `mean` gives NaN instead.
 */
export const mean = (xs: readonly number[]): number =>
  xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;

/** A share in [0, 1] as a whole percentage, "42%"; null (nothing measured yet) stays null. */
export function pct(x: number): string;
export function pct(x: number | null): string | null;
export function pct(x: number | null): string | null {
  return x === null ? null : `${(x * 100).toFixed(0)}%`;
}
