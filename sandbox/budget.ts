// Budgets (docs/DESIGN.md, "Sandbox"): one answer has one budget, shared by all the calls that
// verify it, in interpreter steps, a unit the engine counts deterministically (QuickJS's interrupt
// counter: one step per loop back-edge, call, regexp backtrack, …), so a verdict never depends on
// the machine's load. Validation measures the reference's cost in steps (runTwice's first pass: the
// program loaded in a fresh context and called on every input in order, as an induction answer is
// verified); the task carries budget = clamp(factor × cost, floor, cap). Each call also has a
// deadline, counted in steps as well (steps.mjs), and a wall-clock safety net for work the counter
// does not see (long native calls).
//
// Scale, measured on this engine (2 cores): a busy loop takes ~7 ns a step, string building ~100 ns;
// the generated induction tasks' references take 14 to ~57,000 steps (median 65, 99th percentile
// ~1,900), so nearly every task gets the floor, 20,000 steps, and the largest ~1.1 million.
import type { Task } from '../core/task.js';
import { sandboxDefaults } from './config.js';
import type { BudgetSettings, Sandbox } from './types.js';
import { NATIVE_PER_STEP } from './steps.mjs';

export const DEFAULT_BUDGET: Readonly<BudgetSettings> = Object.freeze({ ...sandboxDefaults.budget });

/** Settings over the defaults, sanitised (positive integers, floor ≤ cap, factor ≥ 1). */
export function resolveBudget(over?: Partial<BudgetSettings>): BudgetSettings {
  const pick = (v: unknown, d: number) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : d);
  const factor = Math.max(1, pick(over?.factor, DEFAULT_BUDGET.factor));
  const cap = Math.max(1, Math.floor(pick(over?.cap, DEFAULT_BUDGET.cap)));
  const floor = Math.min(cap, Math.max(1, Math.floor(pick(over?.floor, DEFAULT_BUDGET.floor))));
  return { factor, floor, cap };
}

/**
 * Why a reference is too costly in native work for the budget its steps give it, or null. It must
 * keep half its budget's native work (budget × NATIVE_PER_STEP) in hand: a program whose few steps
 * start long native operations (a string reversed at every turn of a loop) would otherwise fail its
 * own budget. Half, not a tenth as for steps: native units vary ~1 % from run to run, and generated
 * references do at most ~1.3 units a budget step (bench/results/sandbox-hostile.md), so the line
 * (8 units) is far from every ordinary task and a task's fate does not depend on the run.
 */
export function nativeOverBudget(native: number | null, budget: number | undefined): string | null {
  if (native === null || budget === undefined || native * 2 <= budget * NATIVE_PER_STEP) return null;
  return `the reference does ${native} units of native work; its budget of ${budget} steps allows ${budget * NATIVE_PER_STEP}, which must be twice the reference`;
}

/** The budget for a reference that cost `cost` steps: clamp(factor × cost, floor, cap). */
export function budgetFor(cost: number, settings: BudgetSettings = DEFAULT_BUDGET): number {
  return Math.min(settings.cap, Math.max(settings.floor, Math.ceil(settings.factor * cost)));
}

/**
 * The budget that verifying an answer to `task` gets: the task's own, never above the cap (a task
 * from outside cannot ask for more), or the cap for a task made before budgets existed.
 */
export function taskBudget(task: Task, settings: BudgetSettings = DEFAULT_BUDGET): number {
  const b = (task as { budget?: unknown }).budget;
  return typeof b === 'number' && Number.isFinite(b) && b >= 1 ? Math.min(settings.cap, Math.floor(b)) : settings.cap;
}

export const sandboxBudget = (sandbox: Sandbox): BudgetSettings => sandbox.budget ?? DEFAULT_BUDGET;
