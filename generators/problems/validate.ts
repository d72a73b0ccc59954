// Validation of a verified problem (docs/DESIGN.md, "Tasks": the verified problem). A problem draft
// becomes a task only when its verifier, run in the sandbox as f(answer, data), scores the witness
// exactly 1 and every near-miss failure below 1 — so a verifier that accepts anything is caught —
// twice in fresh contexts in two orders (determinism), within the limits. Its answers' budget comes
// from the measured cost of those calls, as for every other task. Identity: the type, the canonical
// hash of the verifier, and the question (statement + data).
import type { ProblemDraft, ProblemTask } from '../../core/task.js';
import type { Sandbox } from '../../sandbox/index.js';
import { budgetFor, nativeOverBudget, runTwiceMetered, sandboxBudget } from '../../sandbox/index.js';
import { canonicalHash } from '../hash.js';
import { isJsonValue, taskId } from '../identity.js';
import { MAX_ANSWER_CHARS } from '../../core/rules.js';
import { clip } from '../../core/text.js';

/**
 * Sizes a problem draft may have (JSON characters; the failure count): an answer must fit in a
 * served completion (core/rules.ts), and a statement and its data may grow with the level as far
 * as a prompt of some 8,000 tokens (docs/levels.md).
 */
export const PROBLEM_LIMITS = {
  programChars: 4000,
  statementChars: 32_000,
  dataChars: 64 * 1024,
  answerChars: MAX_ANSWER_CHARS,
  minFailures: 1,
  maxFailures: 8,
} as const;

export type ProblemRejection =
  | { reason: 'invalid'; detail: string }
  | { reason: 'unsound'; detail: string }
  | { reason: 'sandbox-failure'; failure: string; detail: string };

const chars = (x: unknown): number => JSON.stringify(x)?.length ?? 0;

/** Why a problem draft is malformed, or null. */
export function checkProblemDraft(d: ProblemDraft): string | null {
  if (typeof d.program !== 'string' || !/function\s+f\s*\(/.test(d.program))
    return 'the verifier must declare function f(answer, data)';
  if (d.program.length > PROBLEM_LIMITS.programChars)
    return `the verifier is longer than ${PROBLEM_LIMITS.programChars} characters`;
  if (typeof d.statement !== 'string' || d.statement.trim().length === 0) return 'a problem needs a statement';
  if (d.statement.length > PROBLEM_LIMITS.statementChars)
    return `the statement is longer than ${PROBLEM_LIMITS.statementChars} characters`;
  if (!isJsonValue(d.data)) return 'data must be JSON-like (finite numbers, no -0)';
  if (chars(d.data) > PROBLEM_LIMITS.dataChars)
    return `data is larger than ${PROBLEM_LIMITS.dataChars} JSON characters`;
  if (!isJsonValue(d.witness)) return 'the witness must be JSON-like';
  if (chars(d.witness) > PROBLEM_LIMITS.answerChars)
    return `the witness is larger than ${PROBLEM_LIMITS.answerChars} JSON characters`;
  if (!Array.isArray(d.failures)) return 'failures must be a list of answers';
  const n = d.failures.length;
  if (n < PROBLEM_LIMITS.minFailures || n > PROBLEM_LIMITS.maxFailures) {
    return `a problem needs ${PROBLEM_LIMITS.minFailures}..${PROBLEM_LIMITS.maxFailures} near-miss failures (a verifier is only trusted once it rejects some), got ${n}`;
  }
  if (!d.failures.every((x) => isJsonValue(x) && chars(x) <= PROBLEM_LIMITS.answerChars))
    return 'every failure must be a JSON-like answer';
  return null;
}

const isScore = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x) && x >= 0 && x <= 1;

/**
 * Validates a problem draft in the sandbox. `seen` (ids so far) is checked and updated on success.
 * Never throws for a bad draft.
 */
export async function validateProblem(
  sandbox: Sandbox,
  d: ProblemDraft,
  seen?: Set<string>,
): Promise<
  | { ok: true; task: ProblemTask; cost: number | null }
  | { ok: false; rejection: ProblemRejection | { reason: 'duplicate' | 'timeout' | 'sandbox'; detail: string } }
> {
  const bad = checkProblemDraft(d);
  if (bad) return { ok: false, rejection: { reason: 'invalid', detail: bad } };
  const hash = canonicalHash(d.program);
  const id = taskId('problem', hash, JSON.stringify([d.statement, d.data]));
  if (seen?.has(id)) return { ok: false, rejection: { reason: 'duplicate', detail: `task ${id} was seen before` } };
  const answers = [d.witness, ...d.failures];
  let r, cost: number | null, native: number | null;
  try {
    ({
      result: r,
      cost,
      native,
    } = await runTwiceMetered(
      sandbox,
      d.program,
      answers.map((a) => [a, d.data]),
    ));
  } catch (e) {
    return { ok: false, rejection: { reason: 'sandbox', detail: (e as Error)?.message ?? String(e) } };
  }
  if (!r.ok)
    return {
      ok: false,
      rejection: { reason: 'sandbox-failure', failure: r.reason, detail: `${r.reason}: ${r.detail}` },
    };
  const [w, ...fails] = r.outputs;
  if (!isScore(w))
    return {
      ok: false,
      rejection: {
        reason: 'unsound',
        detail: `the verifier returned ${shown(w)} for the witness, not a score in [0, 1]`,
      },
    };
  if (w !== 1)
    return { ok: false, rejection: { reason: 'unsound', detail: `the verifier scores the witness ${w}, not 1` } };
  for (let i = 0; i < fails.length; i++) {
    const s = fails[i];
    if (!isScore(s))
      return {
        ok: false,
        rejection: {
          reason: 'unsound',
          detail: `the verifier returned ${shown(s)} for failure ${i + 1}, not a score in [0, 1]`,
        },
      };
    if (s >= 1)
      return {
        ok: false,
        rejection: {
          reason: 'unsound',
          detail: `the verifier accepts failure ${i + 1} (${shown(d.failures[i])}): it must score a near miss below 1`,
        },
      };
  }
  // The answers' budget: all the checks' cost (the witness and every failure) is an upper bound on
  // what checking one answer costs the reference verifier; ten times the reference must fit the cap.
  const settings = sandboxBudget(sandbox);
  const budget = cost === null ? undefined : budgetFor(cost, settings);
  if (cost !== null && cost * 10 > budget!) {
    return {
      ok: false,
      rejection: {
        reason: 'timeout',
        detail: `the verifier takes ${cost} steps; answers may take at most ${settings.cap} (the budget cap), which must be 10× the reference`,
      },
    };
  }
  const heavy = nativeOverBudget(native, budget);
  if (heavy) return { ok: false, rejection: { reason: 'timeout', detail: heavy } };
  seen?.add(id);
  const task: ProblemTask = {
    id,
    type: 'problem',
    family: d.family,
    level: d.level,
    skills: [...d.skills],
    program: d.program,
    hash,
    parent: d.parent ?? null,
    proposer: d.proposer ?? 'generator',
    ...(budget === undefined ? {} : { budget }),
    statement: d.statement,
    data: d.data,
    witness: d.witness,
    failures: d.failures,
    verifier: 'program',
  };
  return { ok: true, task, cost };
}

const shown = (x: unknown): string => clip(x === undefined ? 'undefined' : (JSON.stringify(x) ?? String(x)), 60);
