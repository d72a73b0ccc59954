// Validation helpers for the proposer: a program is kept only if it parses, runs inside the limits
// on every input, and gives the same result twice (each run in a fresh context).
import type { Json, TaskDraft } from '../src/task.js';
import type { FailureReason, Job, Limits, Sandbox } from './types.js';
import { deepEqual } from './answer.js';

export type ValidationResult =
  | { ok: true; outputs: Json[] }
  | { ok: false; reason: FailureReason; detail: string };

/** Runs f on each input twice, in fresh contexts; fails on the first error or disagreement. */
export async function runTwice(
  sandbox: Sandbox,
  program: string,
  inputs: Json[][],
  limits?: Partial<Limits>,
): Promise<ValidationResult> {
  if (inputs.length === 0) return { ok: true, outputs: [] };
  const jobs: Job[] = [];
  for (let pass = 0; pass < 2; pass++) for (const args of inputs) jobs.push({ program, args });
  const results = await sandbox.runMany(jobs, limits);
  const n = inputs.length;
  const outputs: Json[] = [];
  for (let i = 0; i < n; i++) {
    const a = results[i]!;
    const b = results[i + n]!;
    if (!a.ok) return { ok: false, reason: a.reason, detail: `input ${i}: ${a.detail}` };
    if (!b.ok) {
      // Hitting a limit on the second run only is still that limit (a program near its deadline),
      // anything else means the program behaves differently from one run to the next.
      const limit = b.reason === 'timeout' || b.reason === 'memory' || b.reason === 'stack' || b.reason === 'worker-crashed' || b.reason === 'closed';
      return { ok: false, reason: limit ? b.reason : 'nondeterministic', detail: `input ${i}: ran once, then failed with ${b.reason}: ${b.detail}` };
    }
    if (!deepEqual(a.value, b.value)) {
      return { ok: false, reason: 'nondeterministic', detail: `input ${i}: ${clip(JSON.stringify(a.value))} then ${clip(JSON.stringify(b.value))}` };
    }
    outputs.push(a.value);
  }
  return { ok: true, outputs };
}

/**
 * Validates a proposer's draft: runTwice on its inputs, plus for induction the output must not be
 * the same for all inputs (reason 'trivial').
 */
export async function validateDraft(sandbox: Sandbox, draft: TaskDraft, limits?: Partial<Limits>): Promise<ValidationResult> {
  if (draft.inputs.length === 0) return { ok: false, reason: 'no-function', detail: 'the draft has no inputs' };
  const r = await runTwice(sandbox, draft.program, draft.inputs, limits);
  if (!r.ok) return r;
  if (draft.type === 'induction' && r.outputs.length > 1 && r.outputs.every((o) => deepEqual(o, r.outputs[0]!))) {
    return { ok: false, reason: 'trivial', detail: 'the output is the same for every input' };
  }
  return r;
}

const clip = (s: string | undefined): string => (s === undefined ? 'undefined' : s.length > 80 ? `${s.slice(0, 80)}…` : s);
