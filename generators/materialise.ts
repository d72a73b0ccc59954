// Validation, draft → Task (docs/DESIGN.md, "Tasks"): a code draft runs in the sandbox (limits,
// determinism, JSON-like outputs, its answers' step budget); a problem draft goes to
// problems/validate.ts. A refused draft gets one of a closed set of reasons.
import {
  CODE_TASK_TYPES,
  type AnyDraft,
  type Example,
  type Json,
  type ProblemDraft,
  type Task,
  type TaskDraft,
  type TaskType,
} from '../core/task.js';
import type { FailureReason, Sandbox } from '../sandbox/index.js';
import { runTwiceMetered } from '../sandbox/index.js';
import { budgetFor, nativeOverBudget, sandboxBudget } from '../sandbox/index.js';
import { isConstantOutput, MAX_ANSWER_CHARS } from '../core/rules.js';
import { canonicalHash } from './hash.js';
import { isJsonValue, taskId } from './identity.js';
import { MAX_PROGRAM_CHARS } from './kit.js';
import { validateProblem } from './problems/validate.js';

/**
 * Why `materialise` refused a draft (a closed set):
 * - invalid: the draft is malformed (type, inputs, visibleCount, program text, non-JSON inputs)
 * - error: the program does not parse, defines no f, throws, or touches a forbidden global
 * - timeout: it ran past the CPU deadline
 * - limits: memory, stack or output-size limit
 * - nondeterministic: two runs in fresh contexts disagreed
 * - non-serialisable: a result is not JSON-like (undefined, NaN, Infinity, -0, functions, …)
 * - trivial: induction outputs are all equal, or induction inputs repeat
 * - duplicate: the same task (canonical hash + question) is already in `seen`
 * - sandbox: the executor failed (worker crashed, closed)
 * - unsound: a problem's verifier scores its witness below 1, a near-miss failure 1, or returns
 *   something other than a score in [0, 1]
 */
export const REJECT_REASONS = [
  'invalid',
  'error',
  'timeout',
  'limits',
  'nondeterministic',
  'non-serialisable',
  'trivial',
  'duplicate',
  'sandbox',
  'unsound',
] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

/** A validated task with its reference's measured cost in interpreter steps (null where the sandbox does not count), or why not. */
export type Materialised =
  { ok: true; task: Task; cost: number | null } | { ok: false; reason: RejectReason; detail: string };

const SANDBOX_REASON: Record<FailureReason, RejectReason> = {
  syntax: 'error',
  'runtime-error': 'error',
  'no-function': 'error',
  forbidden: 'error',
  timeout: 'timeout',
  memory: 'limits',
  stack: 'limits',
  'output-too-large': 'limits',
  'non-serialisable': 'non-serialisable',
  nondeterministic: 'nondeterministic',
  trivial: 'trivial',
  'worker-crashed': 'sandbox',
  closed: 'sandbox',
} as Record<FailureReason, RejectReason>;

function checkDraft(d: TaskDraft): string | null {
  if (!d || typeof d !== 'object') return 'draft is not an object';
  if (!(CODE_TASK_TYPES as readonly string[]).includes(d.type)) return `unknown task type '${String(d.type)}'`;
  if (typeof d.family !== 'string' || d.family.length === 0) return 'family is missing';
  if (!Number.isInteger(d.level) || d.level < 0) return `level ${String(d.level)} is not a non-negative integer`;
  if (!Array.isArray(d.skills) || !d.skills.every((s) => typeof s === 'string')) return 'skills must be a list of ids';
  if (typeof d.program !== 'string' || !/function\s+f\s*\(/.test(d.program)) return 'program must declare function f';
  if (d.program.length > MAX_PROGRAM_CHARS) return `program is longer than ${MAX_PROGRAM_CHARS} characters`;
  if (!Array.isArray(d.inputs) || !d.inputs.every((i) => Array.isArray(i)))
    return 'inputs must be a list of argument lists';
  if (!d.inputs.every((i) => isJsonValue(i))) return 'inputs must be JSON-like (finite numbers, no -0)';
  if (d.type !== 'induction') {
    if (d.inputs.length !== 1) return `${d.type} needs exactly one input, got ${d.inputs.length}`;
  } else {
    const v = d.visibleCount;
    if (d.inputs.length < 2) return 'induction needs at least two inputs';
    if (!Number.isInteger(v) || v! < 1 || v! >= d.inputs.length)
      return `visibleCount must be in 1..${d.inputs.length - 1}`;
    if (d.message !== undefined && typeof d.message !== 'string') return 'message must be text';
  }
  return null;
}

/** The question part of a task's identity (what is asked, not the reference answer). */
function question(type: TaskType, inputs: Json[][], outputs: Json[], visibleCount: number, message: string): string {
  if (type === 'deduction') return JSON.stringify(inputs[0]);
  if (type === 'abduction') return JSON.stringify(outputs[0]);
  return JSON.stringify([message, visibleCount, inputs, outputs]);
}

/**
 * Validates a draft in the sandbox and builds the Task: every input runs twice in fresh contexts
 * (limits, determinism), outputs must be JSON-like, induction must be non-trivial, and the task
 * must not be in `seen` (which is updated on success). A problem draft goes to problems/validate.ts
 * (its verifier must score the witness 1 and every failure < 1). Never throws for a bad draft.
 */
export async function materialise(sandbox: Sandbox, draft: AnyDraft, seen?: Set<string>): Promise<Materialised> {
  if (draft && typeof draft === 'object' && draft.type === 'problem')
    return materialiseProblem(sandbox, draft as ProblemDraft, seen);
  return materialiseCode(sandbox, draft as TaskDraft, seen);
}

/** A problem draft through the sandbox (problems/validate.ts), its rejection in materialise's reasons. */
async function materialiseProblem(sandbox: Sandbox, draft: ProblemDraft, seen?: Set<string>): Promise<Materialised> {
  if (typeof draft.family !== 'string' || draft.family.length === 0)
    return { ok: false, reason: 'invalid', detail: 'family is missing' };
  if (!Number.isInteger(draft.level) || draft.level < 0)
    return { ok: false, reason: 'invalid', detail: `level ${String(draft.level)} is not a non-negative integer` };
  if (!Array.isArray(draft.skills) || !draft.skills.every((s) => typeof s === 'string'))
    return { ok: false, reason: 'invalid', detail: 'skills must be a list of ids' };
  const v = await validateProblem(sandbox, draft, seen);
  if (v.ok) return v;
  const r = v.rejection;
  if (r.reason === 'sandbox-failure')
    return { ok: false, reason: SANDBOX_REASON[r.failure as FailureReason] ?? 'error', detail: r.detail };
  return { ok: false, reason: r.reason, detail: r.detail };
}

function duplicate(id: string): Materialised {
  return { ok: false, reason: 'duplicate', detail: `task ${id} was seen before` };
}

async function materialiseCode(sandbox: Sandbox, draft: TaskDraft, seen?: Set<string>): Promise<Materialised> {
  const bad = checkDraft(draft);
  if (bad) return { ok: false, reason: 'invalid', detail: bad };
  if (draft.type === 'induction') {
    const keys = new Set(draft.inputs.map((i) => JSON.stringify(i)));
    if (keys.size !== draft.inputs.length) return { ok: false, reason: 'trivial', detail: 'induction inputs repeat' };
  }
  const hash = canonicalHash(draft.program);
  const visibleCount = draft.visibleCount ?? 0;
  const message = draft.message ?? '';
  // A deduction's identity needs no run (what it asks is its input): one already seen is refused
  // before the sandbox. Once a small level is exhausted, that is most of the drafts an arm draws.
  const knownId =
    draft.type === 'deduction'
      ? taskId(draft.type, hash, question(draft.type, draft.inputs, [], visibleCount, message))
      : null;
  if (knownId && seen?.has(knownId)) return duplicate(knownId);
  let r;
  let cost: number | null, native: number | null;
  try {
    ({ result: r, cost, native } = await runTwiceMetered(sandbox, draft.program, draft.inputs));
  } catch (e) {
    return { ok: false, reason: 'sandbox', detail: (e as Error)?.message ?? String(e) };
  }
  if (!r.ok) return { ok: false, reason: SANDBOX_REASON[r.reason] ?? 'error', detail: `${r.reason}: ${r.detail}` };
  // The answers' budget: the reference's cost in steps, times the factor, within floor and cap. A
  // reference that would not fit its own budget ten times over is too costly to be a task.
  const settings = sandboxBudget(sandbox);
  const budget = cost === null ? undefined : budgetFor(cost, settings);
  if (cost !== null && cost * 10 > budget!) {
    return {
      ok: false,
      reason: 'timeout',
      detail: `the reference takes ${cost} steps; answers may take at most ${settings.cap} (the budget cap), which must be 10× the reference`,
    };
  }
  const heavy = nativeOverBudget(native, budget);
  if (heavy) return { ok: false, reason: 'timeout', detail: heavy };
  const outputs = r.outputs;
  const i = outputs.findIndex((o) => !isJsonValue(o));
  if (i >= 0) return { ok: false, reason: 'non-serialisable', detail: `output ${i} is not JSON-like` };
  const answer =
    draft.type === 'deduction'
      ? JSON.stringify(outputs[0])
      : draft.type === 'abduction'
        ? JSON.stringify(draft.inputs[0])
        : draft.program;
  if (answer.length > MAX_ANSWER_CHARS)
    return {
      ok: false,
      reason: 'limits',
      detail: `the reference answer has ${answer.length} characters; a served completion holds at most ${MAX_ANSWER_CHARS}`,
    };
  if (draft.type === 'induction') {
    if (isConstantOutput(outputs))
      return { ok: false, reason: 'trivial', detail: 'the output is the same for every input' };
  }
  const id = knownId ?? taskId(draft.type, hash, question(draft.type, draft.inputs, outputs, visibleCount, message));
  if (seen?.has(id)) return duplicate(id);
  seen?.add(id);
  const base = {
    id,
    family: draft.family,
    level: draft.level,
    skills: [...draft.skills],
    program: draft.program,
    hash,
    parent: draft.parent ?? null,
    proposer: draft.proposer ?? 'generator',
    ...(budget === undefined ? {} : { budget }),
  };
  let task: Task;
  if (draft.type === 'induction') {
    const pairs: Example[] = draft.inputs.map((input, k) => ({ input, output: outputs[k]! }));
    task = {
      ...base,
      type: 'induction',
      visible: pairs.slice(0, visibleCount),
      hidden: pairs.slice(visibleCount),
      message,
    };
  } else {
    task = { ...base, type: draft.type as 'deduction' | 'abduction', input: draft.inputs[0]!, output: outputs[0]! };
  }
  return { ok: true, task, cost };
}
