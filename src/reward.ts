// Reward shaping for the policy update only (DESIGN.md, "One step of the loop": reward in [0, 1]).
// The verifiers' rewards are exact and are what the run records, the curriculum sees and the
// mastery probes count. From random initialisation an exact-match reward on arithmetic rarely fires
// (in bench:learn a typed policy got 1.5 % of level-0 arith answers right in its first 50 steps,
// then settled on answering 0), so the update may give a wrong numeric deduction answer partial
// credit for being close:
//   r = partial / (1 + |answer − output|)         (< partial ≤ 0.9 < 1: a right answer stays best)
// With partial = 0 (the default) the update sees the verifiers' rewards unchanged. Measured in
// bench:learn (partial 0.5, 300 steps): arith level-0 held-out went from 0 to 0.1 only; the policy
// settled on answering 9, near enough to many outputs, rather than reading the operands.
import { z } from 'zod';
import type { Task, Verdict } from './task.js';

export const rewardConfigSchema = z
  .object({
    /** Partial credit for a wrong numeric deduction answer, scaled by 1 / (1 + distance); 0 = off. */
    numericPartial: z.number().min(0).max(0.9).default(0),
  })
  .strict();
export type RewardConfig = z.infer<typeof rewardConfigSchema>;

/** The reward the policy update gets for one answer. */
export function trainingReward(task: Task, answer: string, verdict: Verdict, cfg: RewardConfig): number {
  if (verdict.reward >= 1 || cfg.numericPartial === 0) return verdict.reward;
  if (task.type !== 'deduction' || typeof task.output !== 'number') return verdict.reward;
  // the typed grammar writes plain JSON numbers; anything else earns nothing extra
  if (!/^-?\d+(\.\d+)?$/.test(answer)) return verdict.reward;
  const d = Math.abs(Number(answer) - task.output);
  return Number.isFinite(d) ? Math.max(verdict.reward, cfg.numericPartial / (1 + d)) : verdict.reward;
}
