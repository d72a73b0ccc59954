// The executor's interface (docs/DESIGN.md, "Sandbox"). Every program cogen runs goes through it.
import type { Json } from '../core/task.js';

export interface Limits {
  /** Deadline per call, in milliseconds counted as steps at a fixed rate (steps.mjs); the wall-clock safety net is 20× it. */
  timeoutMs: number;
  /** Memory cap of the QuickJS runtime, in bytes: under WebAssembly it bounds each allocation, not the total (docs/sandbox.md). */
  memoryBytes: number;
  /** Stack cap of the QuickJS runtime, in bytes. */
  stackBytes: number;
  /** Cap on the JSON-serialised result, in bytes. */
  maxOutputBytes: number;
}

export const FAILURE_REASONS = [
  'syntax',
  'runtime-error',
  'timeout',
  'memory',
  'stack',
  'output-too-large',
  'non-serialisable',
  'forbidden',
  'nondeterministic',
  'trivial',
  'no-function',
  'worker-crashed',
  'closed',
] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

export type RunResult = { ok: true; value: Json } | { ok: false; reason: FailureReason; detail: string };

/** One call: `program` declares `function f(...)`; the result is `f(...args)`. */
export interface Job {
  program: string;
  args: Json[];
}

/**
 * One task: the program is loaded once in a fresh context and f is called on each argument list in
 * order, in that same context. Nothing from one task is visible to another; within a task, a
 * program that keeps state between calls sees its earlier calls (runTwice rejects such programs).
 */
export interface TaskJob {
  program: string;
  inputs: Json[][];
  /**
   * A budget of interpreter steps (the unit the engine counts deterministically, see budget.ts):
   * for all the task's calls together ('task', the default: one answer verified on many inputs) or
   * for each call ('call': each call is an answer of its own). Spending it is a 'timeout'. With a
   * 'task' budget, the first limit failure (timeout, memory, stack, output size) ends the task: the
   * remaining calls fail without running. None: no budget, only the deadline per call.
   */
  budget?: number;
  budgetPer?: 'task' | 'call';
}

/** A task's results, and the interpreter steps it spent in all (0 where it never ran). */
export interface MeteredTask {
  results: RunResult[];
  steps: number;
  /** Native work it did, in sandbox/meter.mjs's units (NATIVE_PER_STEP of them a step of budget). */
  native?: number;
  /** Bytes of text it copied out of QuickJS (results, error texts): what left the engine. */
  copied?: number;
}

/**
 * How an answer's budget is derived from the reference's measured cost (in steps):
 * clamp(factor × cost, floor, cap). A task without a budget (made before budgets) gets `cap`.
 */
export interface BudgetSettings {
  factor: number;
  floor: number;
  cap: number;
}

export interface Sandbox {
  run(program: string, args: Json[], limits?: Partial<Limits>): Promise<RunResult>;
  /** Runs many jobs across the worker pool, each in a fresh context; results are in job order. */
  runMany(jobs: Job[], limits?: Partial<Limits>): Promise<RunResult[]>;
  /**
   * Runs many tasks across the worker pool, one fresh context per task (all of a task's calls in
   * it, in order); results per task, per call. createSandbox's sandboxes always have it; verifiers
   * fall back to runMany for other implementations.
   */
  runTasks?(tasks: TaskJob[], limits?: Partial<Limits>): Promise<RunResult[][]>;
  /** runTasks, with the steps each task spent (createSandbox's sandboxes have it). */
  runTasksMetered?(tasks: TaskJob[], limits?: Partial<Limits>): Promise<MeteredTask[]>;
  readonly limits: Limits;
  /** How answers' budgets are derived (createSandbox's sandboxes have it; else DEFAULT_BUDGET). */
  readonly budget?: BudgetSettings;
  close(): Promise<void>;
}

export interface SandboxOptions {
  /** Worker threads in the pool; default: number of cores. */
  workers?: number;
  limits?: Partial<Limits>;
  /** How answers' budgets are derived from the reference's cost; default DEFAULT_BUDGET. */
  budget?: Partial<BudgetSettings>;
}
