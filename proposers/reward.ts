// The proposer's reward (AZR's learnability, with novelty and validity terms), one rule for the
// learned grammar proposer and self-play alike: a refused draft earns 0; an accepted one, once its
// task has been scored, earns learnability(solve rate) + novelty (if its canonical hash was new) +
// validity. Accepted drafts whose task is not scored yet (a served run hands tasks out before the
// trainer answers) keep waiting.
import { learnability, solveRate } from '../core/rules.js';

export interface Draft {
  valid: boolean;
  novel: boolean;
  taskId: string | null;
}

/** The drafts whose reward is known (with the task's solve rate, null for a refused draft), and those still waiting. */
export function scoreDrafts<D extends Draft>(
  pending: readonly D[],
  groups: readonly { taskId: string; rewards: readonly number[] }[],
  weights: { novelty: number; validity: number },
): { ready: { d: D; r: number; p: number | null }[]; waiting: D[] } {
  const byTask = new Map(groups.map((g) => [g.taskId, g.rewards]));
  const ready: { d: D; r: number; p: number | null }[] = [];
  const waiting: D[] = [];
  for (const d of pending) {
    if (!d.valid) ready.push({ d, r: 0, p: null });
    else if (d.taskId !== null && byTask.has(d.taskId)) {
      const p = solveRate(byTask.get(d.taskId)!);
      ready.push({ d, r: learnability(p) + weights.novelty * (d.novel ? 1 : 0) + weights.validity, p });
    } else waiting.push(d);
  }
  return { ready, waiting };
}
