// The three verifiers (docs/DESIGN.md, "Tasks"). A malformed answer scores 0 with a reason; nothing
// here throws on an answer.
//
//   deduction  the answer is a literal; reward 1 iff it deep-equals task.output (no sandbox run).
//   abduction  the answer is a literal argument list x'; reward 1 iff f(...x') deep-equals task.output.
//   induction  the answer is program text: a declaration of f, or a function / arrow expression
//              (`(a, b) => a + b`, `function (x) { … }`), which becomes f. It runs on every visible
//              and hidden input; reward 1 iff all outputs match (passed / total are reported too).
//   problem    the answer is a literal; the task's verifier runs as f(answer, task.data) and its
//              score, clamped to [0, 1], is the reward (a non-number, a throw or a limit: 0 with the
//              reason). A bridged problem (verifier 'reasoning-gym:…') is scored by the bridge, not
//              here; its answer is free text (problemAnswerText).
//
// verifyMany sends all the sandbox work of a batch through one runTasks, which is the hot path. The
// unit of isolation is the task: all answers to one abduction task (each only an argument list for
// the task's own program) run in one fresh context, in answer order, and so do all answers to one
// problem task (each an answer for the task's own verifier); each induction answer (a
// program of its own) runs all its examples in one fresh context of its own.
//
// Budgets (budget.ts): every answer gets the task's budget of interpreter steps. An induction
// answer's calls share it, and its first limit failure (budget, memory, stack, output size, or an
// error whose text is over the sandbox's cap) ends its verification: the examples after it are not
// run and count as not passed (a wrong output or an ordinary error does not end it: the rest still
// count towards passed). An abduction answer is one call with the budget to itself.
import { isBridgedProblem, type Json, type Task, type Verdict } from '../core/task.js';
import type { MeteredTask, RunResult, Sandbox, TaskJob } from './types.js';
import { deepEqual, parseLiteral } from './answer.js';
import { sandboxBudget, taskBudget } from './budget.js';

export interface DetailedVerdict extends Verdict {
  /** Induction: how many of the checked examples matched, out of total. */
  passed?: number;
  total?: number;
}

export type NormalisedProgram = { ok: true; program: string } | { ok: false; reason: string };

const DECLARES_F = /(?:^|[^\w$.])(?:function\s*\*?\s*f\s*\(|(?:const|let|var)\s+f\s*=)/;
const FENCE = /^```[\w-]*\s*\n?([\s\S]*?)\n?```$/;

/** Turns an induction answer into a program that defines f. */
export function normaliseProgram(answer: string): NormalisedProgram {
  if (typeof answer !== 'string') return { ok: false, reason: 'malformed: answer is not text' };
  let text = answer.trim();
  const fenced = FENCE.exec(text);
  if (fenced) text = fenced[1]!.trim();
  if (text.length === 0) return { ok: false, reason: 'malformed: empty program' };
  if (DECLARES_F.test(text)) return { ok: true, program: text };
  // An expression (arrow or function): bind it to f. If it is not one, the sandbox says why.
  return { ok: true, program: `var f = (\n${text}\n);` };
}

/** A plan for one answer: which calls of which program it needs and how to judge their results. */
interface Plan {
  /** Answers to the same task with the same key get the same verdict, computed once. */
  key: string;
  program: string;
  inputs: Json[][];
  /** Plans with the same group (the same task) share one context; none: a context of its own. */
  group?: object;
  /** Steps for the answer: all its calls together (no group) or its one call (group). */
  budget: number;
  judge: (results: RunResult[]) => DetailedVerdict;
}

const zero = (reason: string): DetailedVerdict => ({ reward: 0, reason });
const failed = (r: RunResult & { ok: false }): DetailedVerdict => zero(`${r.reason}: ${r.detail}`);

function plan(task: Task, answer: string, budget: number): Plan | DetailedVerdict {
  if (typeof answer !== 'string') return zero('malformed: answer is not text');
  switch (task.type) {
    case 'deduction': {
      const p = parseLiteral(answer);
      if (!p.ok) return zero(`malformed: ${p.reason}`);
      return deepEqual(p.value, task.output) ? { reward: 1 } : zero('wrong: output differs');
    }
    case 'abduction': {
      const p = parseLiteral(answer);
      if (!p.ok) return zero(`malformed: ${p.reason}`);
      if (!Array.isArray(p.value)) return zero('malformed: an abduction answer is an argument list, e.g. [3, "a"]');
      const expected = task.output;
      return {
        key: JSON.stringify(p.value),
        program: task.program,
        inputs: [p.value],
        group: task,
        budget,
        judge: ([r]) => {
          if (!r!.ok) return failed(r!);
          return deepEqual(r!.value, expected) ? { reward: 1 } : zero('wrong: f(answer) differs from the output');
        },
      };
    }
    case 'induction': {
      const n = normaliseProgram(answer);
      if (!n.ok) return zero(n.reason);
      const examples = [...task.visible, ...task.hidden];
      if (examples.length === 0) return zero('malformed: task has no examples');
      return {
        key: n.program,
        program: n.program,
        inputs: examples.map((e) => e.input),
        budget,
        judge: (results) => {
          let passed = 0;
          let first: DetailedVerdict | null = null;
          results.forEach((r, i) => {
            if (r.ok && deepEqual(r.value, examples[i]!.output)) passed++;
            else if (!first) first = r.ok ? zero(`wrong: example ${i + 1} differs`) : failed(r);
          });
          const total = examples.length;
          if (passed === total) return { reward: 1, passed, total };
          return { ...(first ?? zero('wrong')), passed, total };
        },
      };
    }
    case 'problem': {
      if (isBridgedProblem(task))
        return zero(`malformed: a ${task.verifier} problem is scored by the Reasoning Gym bridge, not the sandbox`);
      if (task.verifier !== 'program') return zero(`malformed: unknown verifier '${String(task.verifier)}'`);
      const p = parseLiteral(answer);
      if (!p.ok) return zero(`malformed: ${p.reason}`);
      return {
        key: JSON.stringify(p.value),
        program: task.program,
        inputs: [[p.value, task.data]],
        group: task,
        budget,
        judge: ([r]) => {
          if (!r!.ok) return failed(r!);
          const s = r!.value;
          if (typeof s !== 'number' || Number.isNaN(s))
            return zero(
              `wrong: the verifier returned ${typeof s === 'number' ? 'NaN' : (JSON.stringify(s)?.slice(0, 40) ?? 'undefined')}, not a score`,
            );
          const reward = Math.min(1, Math.max(0, s));
          return reward === 1 ? { reward } : { reward, reason: 'wrong: the verifier scores the answer below 1' };
        },
      };
    }
    default:
      return zero(`malformed: unknown task type ${(task as { type: unknown }).type as string}`);
  }
}

/**
 * A bridged problem's answer as text: free text as it is (trimmed), or the string inside a JSON
 * string literal (the form a deduction answer takes), so both ways of writing it are accepted.
 */
export function problemAnswerText(answer: string): string {
  if (typeof answer !== 'string') return '';
  const t = answer.trim();
  if (t.startsWith('"') || t.startsWith("'")) {
    const p = parseLiteral(t);
    if (p.ok && typeof p.value === 'string') return p.value;
  }
  return t;
}

export async function verifyAnswer(sandbox: Sandbox, task: Task, answer: string): Promise<DetailedVerdict> {
  const [v] = await verifyMany(sandbox, [{ task, answer }]);
  return v!;
}

export async function verifyMany(
  sandbox: Sandbox,
  items: { task: Task; answer: string }[],
): Promise<DetailedVerdict[]> {
  return (await verifyManyMetered(sandbox, items)).map((m) => m.verdict);
}

/** A verdict, the answer's budget, and the steps its verification spent (where it ran alone). */
export interface MeteredVerdict {
  verdict: DetailedVerdict;
  /** Steps the answer may spend (absent: no sandbox run, e.g. deduction or a malformed answer). */
  budget?: number;
  /** Steps spent verifying it, in all the contexts it used (induction answers only). */
  steps?: number;
}

/** verifyMany, with each answer's budget and (for induction answers) the steps it spent. */
export async function verifyManyMetered(
  sandbox: Sandbox,
  items: { task: Task; answer: string }[],
): Promise<MeteredVerdict[]> {
  const settings = sandboxBudget(sandbox);
  const verdicts: DetailedVerdict[] = new Array(items.length);
  const meta: { budget?: number; steps?: number }[] = items.map(() => ({}));
  const tasks: TaskJob[] = [];
  const byGroup = new Map<object, number>();
  const pending: { i: number; plan: Plan; task: number; start: number }[] = [];
  // Identical answers to one task (common among G samples) are verified once: same program, same
  // inputs, same verdict, so nothing is lost, and a repeat never runs after its twin in a context.
  const seen = new Map<Task, Map<string, number>>();
  const twins: [number, number][] = [];
  items.forEach(({ task, answer }, i) => {
    let p: Plan | DetailedVerdict;
    try {
      p = plan(task, answer, taskBudget(task, settings));
    } catch (e) {
      p = zero(`malformed: ${(e as Error)?.message ?? String(e)}`);
    }
    if (!('judge' in p)) {
      verdicts[i] = p;
      return;
    }
    let byKey = seen.get(task);
    if (!byKey) seen.set(task, (byKey = new Map()));
    const first = byKey.get(p.key);
    if (first !== undefined) {
      twins.push([i, first]);
      return;
    }
    byKey.set(p.key, i);
    let t = p.group ? byGroup.get(p.group) : undefined;
    if (t === undefined || tasks[t]!.program !== p.program || tasks[t]!.budget !== p.budget) {
      t = tasks.push({ program: p.program, inputs: [], budget: p.budget, budgetPer: p.group ? 'call' : 'task' }) - 1;
      if (p.group) byGroup.set(p.group, t);
    }
    meta[i]!.budget = p.budget;
    const inputs = tasks[t]!.inputs;
    pending.push({ i, plan: p, task: t, start: inputs.length });
    for (const x of p.inputs) inputs.push(x);
  });
  if (tasks.length > 0) {
    const metered = await runTasksMetered(sandbox, tasks);
    for (const { i, plan: p, task, start } of pending) {
      if (!p.group) meta[i]!.steps = metered[task]!.steps;
      try {
        verdicts[i] = p.judge(metered[task]!.results.slice(start, start + p.inputs.length));
      } catch (e) {
        verdicts[i] = zero(`malformed: ${(e as Error)?.message ?? String(e)}`);
      }
    }
  }
  for (const [i, first] of twins) {
    verdicts[i] = { ...verdicts[first]! };
    meta[i] = { ...meta[first]! };
  }
  return verdicts.map((verdict, i) => ({ verdict, ...meta[i] }));
}

/** sandbox.runTasksMetered, or runTasks (steps unknown: NaN). */
async function runTasksMetered(sandbox: Sandbox, tasks: TaskJob[]): Promise<MeteredTask[]> {
  if (sandbox.runTasksMetered) return sandbox.runTasksMetered(tasks);
  return (await runTasks(sandbox, tasks)).map((results) => ({ results, steps: NaN }));
}

/** sandbox.runTasks, or (for a Sandbox without it) every call through runMany in its own context. */
export async function runTasks(
  sandbox: Sandbox,
  tasks: TaskJob[],
  limits?: Parameters<Sandbox['run']>[2],
): Promise<RunResult[][]> {
  if (sandbox.runTasks) return sandbox.runTasks(tasks, limits);
  const flat = await sandbox.runMany(
    tasks.flatMap((t) => t.inputs.map((args) => ({ program: t.program, args }))),
    limits,
  );
  let at = 0;
  return tasks.map((t) => flat.slice(at, (at += t.inputs.length)));
}

export type { Json };
