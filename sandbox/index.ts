// The sandbox for untrusted programs (docs/DESIGN.md, "Sandbox"): QuickJS compiled to WebAssembly,
// one runtime per worker thread, a fresh context per task, limits on time, memory, stack and
// output.
//
// A task (runTasks) is a program and the argument lists of its calls: the program is loaded once
// in a fresh context and every call runs there, in order (run and runMany: a task of one call).
// Each call has its own deadline, counted in interpreter steps like budgets (timeoutMs × a fixed
// rate, steps.mjs; the wall clock is only a safety net 20× longer), so no verdict depends on the
// machine's load; a task may also carry a budget of interpreter steps, shared by its calls or given
// to each (budget.ts; verify.ts gives every answer one), which bounds its native work and its
// allocations too (docs/sandbox.md, "What an answer's budget bounds"). Without a budget, a call
// that meets a limit after others ran in its context is retried alone in a fresh context, so limits
// apply as if each call ran alone. Text that comes out of a context (results, error names and
// messages, thrown values) is measured inside it first, and over its cap is not copied at all
// (docs/sandbox.md, "What leaves the sandbox"). The plumbing inside the context (argument parsing,
// the call, the result check and serialisation) uses builtins captured before the program runs,
// so a program that replaces them cannot tamper with it.
//
// Result rule: a call's value must be a JSON value. null, booleans, finite numbers, strings, dense
// arrays and plain objects (prototype Object.prototype or null; own enumerable string keys) come
// back deep-copied; -0 comes back as 0. undefined, NaN, ±Infinity, functions, symbols, bigints,
// Map/Set/Date/class instances, sparse arrays, cycles and nesting deeper than 1000 fail with
// 'non-serialisable'. A result longer than maxOutputBytes (UTF-8) fails with 'output-too-large'.
//
// Environment inside: the ECMAScript builtins (no TypedArrays, SharedArrayBuffer or Atomics), a
// fixed-seed Math.random, Date frozen at 2025-01-01T00:00:00Z and in UTC, a console that prints
// nothing, and nothing of the host: no I/O, no clock, no modules, no timers.
import type { Job, Limits, MeteredTask, RunResult, Sandbox, SandboxOptions, TaskJob } from './types.js';
import { Pool, defaultWorkerCount } from './pool.js';
import { resolveBudget } from './budget.js';
import { sandboxDefaults } from './config.js';

export * from './types.js';
export { parseLiteral, formatLiteral } from './answer.js';
export { extractAnswer } from './reply.js';
export { verifyAnswer, verifyMany, verifyManyMetered } from './verify.js';
export type { MeteredVerdict } from './verify.js';
export { runTwice, runTwiceMetered } from './validate.js';
export { DEFAULT_BUDGET, budgetFor, nativeOverBudget, resolveBudget, sandboxBudget, taskBudget } from './budget.js';
export type { ValidationResult } from './validate.js';
export { normaliseProgram, problemAnswerText } from './verify.js';
export type { DetailedVerdict } from './verify.js';
export { deepEqual } from './answer.js';

export { sandboxConfigSchema, type SandboxConfig } from './config.js';

export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  timeoutMs: sandboxDefaults.timeoutMs,
  memoryBytes: sandboxDefaults.memoryBytes,
  stackBytes: 256 * 1024,
  maxOutputBytes: 64 * 1024,
});

/** Floors below which QuickJS cannot even create a context. */
const FLOOR: Limits = { timeoutMs: 1, memoryBytes: 2 * 1024 * 1024, stackBytes: 16 * 1024, maxOutputBytes: 16 };
const CEIL: Limits = {
  timeoutMs: 60_000,
  memoryBytes: 1024 * 1024 * 1024,
  stackBytes: 4 * 1024 * 1024,
  maxOutputBytes: 64 * 1024 * 1024,
};

export interface CreateSandboxOptions extends SandboxOptions {
  /** Extra time past a job's deadline before its worker is declared wedged and replaced (ms). */
  graceMs?: number;
  /** Most jobs per worker message. */
  maxChunk?: number;
  /** Tests only: simulated starvation, the workers' wall clock jumps forward by the next of these (ms) at every read. */
  clockJumpsMs?: number[];
}

/** Merges limits over a base and clamps them to sane ranges (non-numbers fall back to the base). */
export function resolveLimits(base: Limits, over?: Partial<Limits>): Limits {
  const out = { ...base };
  if (over) {
    for (const k of Object.keys(FLOOR) as (keyof Limits)[]) {
      const v = over[k];
      if (typeof v === 'number' && Number.isFinite(v)) out[k] = Math.min(CEIL[k], Math.max(FLOOR[k], Math.floor(v)));
    }
  }
  return out;
}

const limitsKey = (l: Limits): string => `${l.timeoutMs}/${l.memoryBytes}/${l.stackBytes}/${l.maxOutputBytes}`;

export async function createSandbox(opts: CreateSandboxOptions = {}): Promise<Sandbox> {
  const limits = Object.freeze(resolveLimits(DEFAULT_LIMITS, opts.limits));
  const budget = Object.freeze(resolveBudget(opts.budget));
  const workers = Math.max(1, Math.floor(opts.workers ?? defaultWorkerCount()));
  const pool = new Pool({
    workers,
    graceMs: opts.graceMs ?? 1000,
    maxChunk: opts.maxChunk ?? 128,
    clockJumpsMs: opts.clockJumpsMs,
  });
  await pool.ready();
  const baseKey = limitsKey(limits);

  /** One task: bad argument lists fail alone (before the pool); the rest run in one context. */
  const submitTask = async (
    program: string,
    inputs: Json[][],
    l: Limits,
    key: string,
    b?: number,
    per?: 'task' | 'call',
  ): Promise<MeteredTask> => {
    if (!Array.isArray(inputs)) return { results: [], steps: 0 };
    const results: RunResult[] = new Array(inputs.length);
    const argsList: string[] = [];
    const where: number[] = [];
    inputs.forEach((args, i) => {
      try {
        if (!Array.isArray(args)) throw new TypeError('args must be an array');
        argsList.push(JSON.stringify(args));
        where.push(i);
      } catch (e) {
        results[i] = { ok: false, reason: 'non-serialisable', detail: `arguments: ${(e as Error).message}` };
      }
    });
    if (typeof program !== 'string') {
      for (const i of where) results[i] = { ok: false, reason: 'syntax', detail: 'program is not a string' };
      return { results, steps: 0 };
    }
    const steps = typeof b === 'number' && Number.isFinite(b) && b >= 1 ? Math.floor(b) : undefined;
    const rs = await pool.submit(program, argsList, l, key, steps, per === 'call' ? 'call' : 'task');
    where.forEach((i, j) => (results[i] = rs.results[j]!));
    return { results, steps: rs.steps, native: rs.native, copied: rs.copied };
  };
  const submit = async (program: string, args: Json[], l: Limits, key: string): Promise<RunResult> =>
    (await submitTask(program, [args], l, key)).results[0]!;
  const metered = (tasks: TaskJob[], over?: Partial<Limits>): Promise<MeteredTask[]> => {
    const [l, key] = pick(over);
    return Promise.all(tasks.map((t) => submitTask(t.program, t.inputs, l, key, t.budget, t.budgetPer)));
  };
  const pick = (over?: Partial<Limits>): [Limits, string] => {
    if (!over) return [limits, baseKey];
    const l = resolveLimits(limits, over);
    return [l, limitsKey(l)];
  };

  return {
    limits,
    budget,
    run(program, args, over) {
      const [l, key] = pick(over);
      return submit(program, args, l, key);
    },
    runMany(jobs: Job[], over) {
      const [l, key] = pick(over);
      return Promise.all(jobs.map((j) => submit(j.program, j.args, l, key)));
    },
    async runTasks(tasks: TaskJob[], over) {
      return (await metered(tasks, over)).map((m) => m.results);
    },
    runTasksMetered: metered,
    close: () => pool.close(),
  };
}

type Json = import('../core/task.js').Json;
