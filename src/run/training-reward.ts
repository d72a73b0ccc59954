// Reward shaping for the policy update only (docs/DESIGN.md, "One step of the loop": reward in [0,
// 1]). The verifiers' rewards are exact and are what the run records, the curriculum sees and the
// mastery probes count. From random initialisation an exact-match reward on arithmetic rarely
// fires, so the update may give a wrong deduction answer partial credit:
//   numericPartial: r = partial / (1 + |answer − output|) for a numeric output (it tends to teach
//     the magnitude, a digit near many outputs, rather than reading the operands;
//     bench/results/learn.md).
//   prefixPartial:  r = partial · lcp(answer, reference) / max(|answer|, |reference|), the share of
//     the reference's characters the answer gets right from its start, both as the solver writes
//     them (src/solver/answer-view.ts: `+07`, the sign and the tens first). An autoregressive policy
//     writes the answer left to right, so this credits each character as it is chosen: the tens
//     digit of an answer is 1 of 10 choices, the whole answer 1 of ~200. Where the solver wrote
//     its working (docs/solver-view.md, "The working"), the share is of the right working's
//     characters: each value it copies or computes on the way is credited as it is written, and the
//     answer, written last, is credited only after every step before it.
// Every partial credit is below 1 (partial ≤ 0.9), so a right answer stays best. With both at 0 (the
// default) the update sees the verifiers' rewards unchanged.
import { z } from 'zod';
import { answerShape, referenceAnswer, type Task, type Verdict } from '../../core/task.js';
import { isSolved } from '../../core/rules.js';
import { answerInView } from '../solver/index.js';
import { taskWorking, type OperandStyle } from '../../generators/index.js';

export const rewardConfigSchema = z
  .object({
    /** Partial credit for a wrong numeric deduction answer, scaled by 1 / (1 + distance); 0 = off. */
    numericPartial: z.number().min(0).max(0.9).default(0),
    /** Partial credit for a wrong deduction answer, scaled by the share of its reference's characters it starts with, both as the solver writes them (+07); 0 = off. */
    prefixPartial: z.number().min(0).max(0.9).default(0),
  })
  .strict();
export type RewardConfig = z.infer<typeof rewardConfigSchema>;

/** A working as the solver wrote it, and the right one written alike. */
export interface WrittenWorking {
  written: string;
  reference: string;
}

/** The reward the policy update gets for one answer (with its working, where it wrote one). */
export function trainingReward(
  task: Task,
  answer: string,
  verdict: Verdict,
  cfg: RewardConfig,
  working?: WrittenWorking,
): number {
  if (isSolved(verdict.reward) || task.type !== 'deduction') return verdict.reward;
  const written = (text: string) => answerInView(answerShape(task), text);
  return Math.max(
    verdict.reward,
    numericCredit(task.output, answer, cfg.numericPartial),
    working
      ? prefixCredit(working.reference, working.written, cfg.prefixPartial)
      : prefixCredit(written(referenceAnswer(task)), written(answer), cfg.prefixPartial),
  );
}

/** The right working of a task asked in a working's shape, written as the solver writes one (null: none). */
export function referenceWorking(task: Task, shape: string | undefined, style: OperandStyle): string | null {
  if (shape === undefined) return null;
  const w = taskWorking(task, style);
  return w ? answerInView(shape, JSON.stringify(w.values)) : null;
}

function numericCredit(output: unknown, answer: string, partial: number): number {
  // the typed grammar writes plain JSON numbers; anything else earns nothing extra
  if (partial === 0 || typeof output !== 'number' || !/^-?\d+(\.\d+)?$/.test(answer)) return 0;
  const d = Math.abs(Number(answer) - output);
  return Number.isFinite(d) ? partial / (1 + d) : 0;
}

function prefixCredit(reference: string, answer: string, partial: number): number {
  if (partial === 0 || answer.length === 0) return 0;
  let n = 0;
  while (n < answer.length && n < reference.length && answer[n] === reference[n]) n++;
  return (partial * n) / Math.max(answer.length, reference.length);
}
