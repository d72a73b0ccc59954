// Two renderings of a task (docs/DESIGN.md, "Tasks": rendering is separate from content).
//
// Compact — what the built-in solver reads (tokenized by src/solver/tokenizer.ts). Printable ASCII
// only, no spaces that carry no meaning, one-letter type tag:
//   deduction  `D:<args>@<program>`        e.g. `D:4@a=>a*7`          answer: the output, `28`
//   abduction  `A:<output>@<program>`      e.g. `A:28@a=>a*7`         answer: an argument list, `[4]`
//   induction  `I:<message>@<in>><out>;…`  e.g. `I:arith: mul@1>7;2>14` answer: a program, `a=>a*7`
//   problem    `P:<family>@<data>`          e.g. `P:gcd@{"a":12,"b":18}` answer: a JSON literal
// Values come before the program (docs/solver-view.md): at the start of a prompt each one sits at
// the same place whatever the program's length, and the program, read last, ends next to the answer.
// A problem's <data> is its structured instance as JSON, cut at COMPACT_DATA_CHARS (the statement
// says the same in words; the built-in solver is not expected to solve problems, only to read them).
// <program> is `compactProgram` (arrow form, or the minified declaration for recursive programs);
// <args> and <in> are the JSON arguments joined by commas (the argument list without brackets);
// values are JSON, so `@`, `>`, `;` inside strings stay unambiguous to a JSON-aware reader
// (`parseCompact` reads a deduction or abduction back).
// Non-ASCII characters (never produced by the built-in families) are written as \uXXXX escapes.
//
// Natural — for LLM solvers and exports: states the task type, the program, what to answer and the
// exact answer format.
import {
  isBridgedProblem,
  type AnswerKind,
  type Example,
  type Input,
  type Json,
  type ProblemTask,
  type Task,
} from '../core/task.js';
import { compactProgram } from './hash.js';

const ascii = (s: string): string =>
  s.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

const args = (input: Input): string => input.map((x) => JSON.stringify(x)).join(',');
const pair = (e: Example): string => `${args(e.input)}>${JSON.stringify(e.output)}`;

export function renderCompact(task: Task): string {
  switch (task.type) {
    case 'deduction':
      return ascii(`D:${args(task.input)}@${compactProgram(task.program)}`);
    case 'abduction':
      return ascii(`A:${JSON.stringify(task.output)}@${compactProgram(task.program)}`);
    case 'induction':
      return ascii(`I:${task.message}@${task.visible.map(pair).join(';')}`);
    case 'problem':
      return ascii(`P:${task.family}@${JSON.stringify(task.data)}`).slice(0, COMPACT_DATA_CHARS);
  }
}

/**
 * A deduction's or abduction's compact rendering read back: its values (the argument list, or the
 * output as a one-element list) and its compact program. The values end at the first `@` outside a
 * JSON string (no JSON value holds one elsewhere). Assumes printable ASCII values (no \u escapes).
 */
export function parseCompact(
  text: string,
): { type: 'deduction' | 'abduction'; values: Json[]; program: string } | null {
  const type = text.startsWith('D:') ? 'deduction' : text.startsWith('A:') ? 'abduction' : null;
  if (!type) return null;
  for (let at = text.indexOf('@', 2); at >= 0; at = text.indexOf('@', at + 1)) {
    let values: Json[];
    try {
      values = JSON.parse(`[${text.slice(2, at)}]`) as Json[];
    } catch {
      continue; // this `@` is inside a string
    }
    return { type, values, program: text.slice(at + 1) };
  }
  return null;
}

/** The longest compact rendering of a problem (its data can be large; the built-in solver's context is not). */
export const COMPACT_DATA_CHARS = 240;

const call = (input: Input): string => `f(${input.map((x) => JSON.stringify(x)).join(', ')})`;
const show = (x: Json): string => JSON.stringify(x);

const LITERAL_FORMAT =
  'Answer with a single JSON literal (a number, a double-quoted string, true/false, null, an array or an object), nothing else.';

export function renderNatural(task: Task): string {
  const fence = (src: string): string => '```js\n' + src + '\n```';
  switch (task.type) {
    case 'deduction':
      return [
        `Task type: deduction (predict the output of a program).`,
        `Here is a pure JavaScript function:`,
        fence(task.program),
        `What does ${call(task.input)} return?`,
        LITERAL_FORMAT,
      ].join('\n');
    case 'abduction': {
      const n = task.input.length;
      return [
        `Task type: abduction (find an input that produces a given output).`,
        `Here is a pure JavaScript function:`,
        fence(task.program),
        `Find arguments for f such that f(...) returns ${show(task.output)}. Any arguments that produce exactly this output are accepted.`,
        `Answer with a JSON array of the ${n} argument${n === 1 ? '' : 's'} (the argument list), e.g. ${show(task.input.map(sample))}, nothing else.`,
      ].join('\n');
    }
    case 'induction':
      return [
        `Task type: induction (write a program from examples).`,
        `An unknown pure JavaScript function f maps these inputs to outputs:`,
        ...task.visible.map((e) => `  ${call(e.input)} = ${show(e.output)}`),
        `Hint: ${task.message}`,
        `Write f. It will be run on these and on ${task.hidden.length} hidden inputs of the same kind; every output must match.`,
        `Answer with the program text only: a declaration \`function f(...) { ... }\` or an arrow function such as \`(a, b) => a + b\`, without explanation.`,
      ].join('\n');
    case 'problem':
      return renderProblem(task);
  }
}

function renderProblem(task: ProblemTask): string {
  if (isBridgedProblem(task)) return [task.statement, '', 'Answer with the answer text only, nothing else.'].join('\n');
  return [
    `Task type: problem (${task.family}).`,
    task.statement,
    `Answer with a single JSON literal of this shape, e.g. ${show(sample(task.witness))} (a placeholder of the same type, not the answer), nothing else. Any answer that satisfies the problem is accepted.`,
  ].join('\n');
}

/** A same-typed placeholder value (so the example never gives the answer away). */
function sample(x: Json): Json {
  if (typeof x === 'number') return 0;
  if (typeof x === 'string') return 'ab';
  if (typeof x === 'boolean') return true;
  if (Array.isArray(x)) return [1, 2];
  if (x === null) return null;
  return { key: 1 };
}

// The system prompt of the natural rendering, served with every chat-view task (src/server/types.ts)
// and used by the LLM solver: it says where the answer goes, which sandbox/reply.ts reads back.
/** Instructions for an LLM solver, by the kind of answer the task expects ('text': a bridged problem's free-text answer). */
export function solverSystemPrompt(kind: AnswerKind | 'text'): string {
  const what =
    kind === 'program'
      ? 'The answer is a JavaScript function declaration named `f` (pure, deterministic, no I/O). Put it in a fenced ```javascript block.'
      : kind === 'text'
        ? 'The answer is text, written exactly as the problem asks for it. Put it on a last line of the form `ANSWER: <answer>`.'
        : 'The answer is a JSON literal (a number, string, boolean, null, array or object; for an input, the JSON array of arguments). Put it in a fenced ```json block, or on a last line of the form `ANSWER: <json>`.';
  return `You solve programming puzzles exactly. Reason briefly if you need to, then give your final answer. ${what} Give exactly one final answer.`;
}
