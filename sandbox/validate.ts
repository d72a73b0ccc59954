// Validation helpers for the proposer: a program is kept only if it parses, runs inside the limits
// on every input, and gives the same results however its calls are ordered. Verification runs all
// calls of a task in one context (verify.ts), so a program that keeps state between calls (a
// counter, a memo of seen inputs, Math.random) would make one answer's reward depend on the others;
// runTwice rejects such programs as 'nondeterministic'.
import type { Json } from '../core/task.js';
import type { FailureReason, Limits, RunResult, Sandbox } from './types.js';
import { deepEqual } from './answer.js';
import { runTasks } from './verify.js';
import { clip } from '../core/text.js';

export type ValidationResult = { ok: true; outputs: Json[] } | { ok: false; reason: FailureReason; detail: string };

/**
 * Runs f on every input in two fresh contexts: first in order, then in reverse order with each
 * input twice in a row (x[n-1], x[n-1], …, x[0], x[0]). Every result must match the first pass, so
 * state kept between calls (which verification, one context per task, would expose) shows up as
 * 'nondeterministic'. Fails on the first error or disagreement.
 */
export async function runTwice(
  sandbox: Sandbox,
  program: string,
  inputs: Json[][],
  limits?: Partial<Limits>,
): Promise<ValidationResult> {
  return (await runTwiceMetered(sandbox, program, inputs, limits)).result;
}

/**
 * runTwice, and the program's cost in interpreter steps: what its first pass spent (the program
 * loaded in a fresh context, then called on every input in order, as verification runs an
 * induction answer), with its native work (steps.mjs's units). null when the sandbox cannot count
 * steps, or when the program failed. Steps are counted exactly; native units vary by about 1 % from
 * run to run (the engine's allocations), so a budget is made of steps alone (budget.ts).
 */
export async function runTwiceMetered(
  sandbox: Sandbox,
  program: string,
  inputs: Json[][],
  limits?: Partial<Limits>,
): Promise<{ result: ValidationResult; cost: number | null; native: number | null }> {
  if (inputs.length === 0) return { result: { ok: true, outputs: [] }, cost: null, native: null };
  const n = inputs.length;
  const again: Json[][] = [];
  for (let i = n - 1; i >= 0; i--) again.push(inputs[i]!, inputs[i]!);
  const jobs = [
    { program, inputs },
    { program, inputs: again },
  ];
  let first: RunResult[], second: RunResult[];
  let cost: number | null = null;
  let native: number | null = null;
  if (sandbox.runTasksMetered) {
    const [a, b] = await sandbox.runTasksMetered(jobs, limits);
    [first, second, cost, native] = [a!.results, b!.results, a!.steps, a!.native ?? null];
  } else [first, second] = (await runTasks(sandbox, jobs, limits)) as [RunResult[], RunResult[]];
  const result = compare(inputs, first, second);
  const ok = result.ok && Number.isFinite(cost);
  return { result, cost: ok ? cost : null, native: ok ? native : null };
}

function compare(inputs: Json[][], first: RunResult[], second: RunResult[]): ValidationResult {
  const n = inputs.length;
  const outputs: Json[] = [];
  for (let i = 0; i < n; i++) {
    const a = first![i]!;
    if (!a.ok) return { ok: false, reason: a.reason, detail: `input ${i}: ${a.detail}` };
    outputs.push(a.value);
  }
  for (let i = 0; i < n; i++) {
    const a = outputs[i]!;
    for (const b of [second![2 * (n - 1 - i)]!, second![2 * (n - 1 - i) + 1]!]) {
      if (!b.ok) {
        // Hitting a limit on a later run only is still that limit (a program near its deadline),
        // anything else means the program behaves differently from one run to the next.
        const limit =
          b.reason === 'timeout' ||
          b.reason === 'memory' ||
          b.reason === 'stack' ||
          b.reason === 'worker-crashed' ||
          b.reason === 'closed';
        return {
          ok: false,
          reason: limit ? b.reason : 'nondeterministic',
          detail: `input ${i}: ran once, then failed with ${b.reason}: ${b.detail}`,
        };
      }
      if (!deepEqual(a, b.value)) {
        return {
          ok: false,
          reason: 'nondeterministic',
          detail: `input ${i}: ${clip(JSON.stringify(a) ?? 'undefined', 80)} then ${clip(JSON.stringify(b.value) ?? 'undefined', 80)} (state kept between calls?)`,
        };
      }
    }
  }
  return { ok: true, outputs };
}
