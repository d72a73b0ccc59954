// The per-group statistic the advantage-scored controllers read. What a solve, a solve rate and a
// zero-variance group are is core/rules.ts's to say.
import { isZeroVariance } from '../core/rules.js';

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
