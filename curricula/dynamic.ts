// Dynamic sampling (DAPO): groups whose answers all scored the same have zero advantage and carry no
// gradient; they are dropped before the update. Plus the per-group statistics the controllers read.

/** True when the group's rewards have (numerically) zero variance. */
export function isZeroVariance(rewards: readonly number[], eps = 1e-9): boolean {
  if (rewards.length <= 1) return true;
  const lo = Math.min(...rewards);
  const hi = Math.max(...rewards);
  return hi - lo <= eps;
}

/** Indices of the groups with zero reward variance (to drop). */
export function zeroVarianceGroups(rewards: readonly (readonly number[])[], eps = 1e-9): number[] {
  const out: number[] = [];
  rewards.forEach((g, i) => {
    if (isZeroVariance(g, eps)) out.push(i);
  });
  return out;
}

/** Indices of the groups to keep for the update. */
export function keptGroups(rewards: readonly (readonly number[])[], eps = 1e-9): number[] {
  const out: number[] = [];
  rewards.forEach((g, i) => {
    if (!isZeroVariance(g, eps)) out.push(i);
  });
  return out;
}

/** Solve rate: the fraction of answers with reward ≥ 1 (fully correct). */
export const solveRate = (rewards: readonly number[]): number =>
  rewards.length === 0 ? 0 : rewards.filter((r) => r >= 1).length / rewards.length;

/**
 * Mean |advantage| of a group: |r − mean| averaged, divided by the group's std when `normalise`
 * (GRPO's advantage); 0 for zero-variance groups.
 */
export function meanAbsAdvantage(rewards: readonly number[], normalise = false): number {
  const n = rewards.length;
  if (n === 0 || isZeroVariance(rewards)) return 0;
  const m = rewards.reduce((a, b) => a + b, 0) / n;
  const dev = rewards.map((r) => Math.abs(r - m));
  const mad = dev.reduce((a, b) => a + b, 0) / n;
  if (!normalise) return mad;
  const sd = Math.sqrt(rewards.reduce((a, r) => a + (r - m) * (r - m), 0) / n);
  return sd > 0 ? mad / sd : 0;
}
