// The rules every room reads the same way, each stated once: what counts as solved, a group's solve
// rate, a task's learnability, which groups carry no gradient, which induction task is trivial, and
// which task is made only of given skills.
import type { Json } from './task.js';

/** An answer solves its task only with the full reward; partial credit is not a solve. */
export const isSolved = (reward: number): boolean => reward >= 1;

/** How many of a group's rewards are solves. */
export const solvedCount = (rewards: readonly number[]): number => rewards.filter(isSolved).length;

/** The fraction of a group's answers that solve the task (0 for an empty group). */
export const solveRate = (rewards: readonly number[]): number =>
  rewards.length === 0 ? 0 : solvedCount(rewards) / rewards.length;

/**
 * Learnability of a task the solver solves at rate p: 1 − p while 0 < p < 1, else 0. A task always
 * or never solved teaches nothing; among the rest, the harder ones teach more (docs/DESIGN.md, step
 * 5).
 */
export const learnability = (p: number): number => (p > 0 && p < 1 ? 1 - p : 0);

/**
 * A group whose rewards are all equal has zero advantage and carries no gradient: dynamic sampling
 * (DAPO) drops it before the update, and the controllers read its advantage as 0.
 */
export function isZeroVariance(rewards: readonly number[], eps = 1e-9): boolean {
  if (rewards.length <= 1) return true;
  return Math.max(...rewards) - Math.min(...rewards) <= eps;
}

/**
 * The most characters one completion may have where a run is served (serve.maxCompletionChars's
 * default): every generated task's reference answer must fit in one (docs/levels.md).
 */
export const MAX_COMPLETION_CHARS = 64 * 1024;

/** The longest reference answer (JSON text, or a program) a generated task may have: a completion less room for its marker. */
export const MAX_ANSWER_CHARS = MAX_COMPLETION_CHARS - 1024;

/** An induction task whose outputs are all the same can be solved by a constant: it is refused. */
export function isConstantOutput(outputs: readonly Json[]): boolean {
  const first = JSON.stringify(outputs[0]);
  return outputs.every((o) => JSON.stringify(o) === first);
}

/**
 * Whether a task of these skills is made only of skills in `set` (none when the set is empty or
 * absent): a draft the generators pass over, or a task that is practice of mastered skills.
 */
export const madeOnlyOf = (skills: readonly string[], set: ReadonlySet<string> | undefined): boolean =>
  set !== undefined && set.size > 0 && skills.length > 0 && skills.every((s) => set.has(s));
