// A task's case type: what a learner must have met in training for a held-out task of that type to
// measure generalisation rather than luck. The held-out probes (src/run/probes.ts) hold a
// task out only while another task of its case type stays in training, so that no probe asks for a
// case no training task covers (`||` on false,false when training had no such task, say).
//
// The case type of a task is, in this order:
//   - its task type;
//   - where the program is one operator over its operands (at most SHAPE_TOKENS tokens in the body:
//     `return a + 9;`), its skills and its shape: the body's tokens with the parameters it reads
//     renamed by order of first read (x0, x1, …) and every number literal written K, so that
//     `a + 9`, `9 + a` and `a + a` are three shapes and `a + 9`, `a + 4` one. A longer program's shape
//     is (nearly always) its own, and so is its set of skills (array level 2: 10 tasks exercising
//     some/every in 200 drawn fall into 8 sets), so requiring a twin of either in training would hold
//     nothing out: a longer program's case is the values it reads and answers (below);
//   - for deduction, the values of the arguments the program reads (in order of first read; an
//     argument it never reads is no part of the case), and the output, each abstracted: a boolean as
//     itself, a number by its sign, a string, array or object by whether it is empty. For logic level 0
//     that is the operator and its truth-value pattern (`x0||x1 f,f => f`); for arithmetic the
//     operator, where the constant sits and the signs (a negative answer is a case of its own). An
//     abduction task gives the output only (the input is the answer); induction and problems their
//     type (and a one-operator induction program its skills and shape).
import { tokenize } from '../../generators/index.js';
import type { Json, Task } from '../../core/task.js';

/** Body tokens of a one-operator program: `return`, two operands, the operator and `;`. */
const SHAPE_TOKENS = 5;

/** The abstraction of a value that a case type keeps (see the header). */
export function valueClass(x: Json): string {
  if (typeof x === 'boolean') return x ? 't' : 'f';
  if (typeof x === 'number') return x < 0 ? '-' : x > 0 ? '+' : '0';
  if (typeof x === 'string') return x === '' ? "''" : 's';
  if (x === null) return 'null';
  if (Array.isArray(x)) return x.length === 0 ? '[]' : 'arr';
  return Object.keys(x).length === 0 ? '{}' : 'obj';
}

/** The program's parameters, the ones its body reads (in order of first read), and its body's shape. */
function readProgram(program: string): { params: string[]; read: number[]; body: string[] } {
  const tokens = tokenize(program);
  const open = tokens.findIndex((t) => t.text === '(');
  const close = tokens.findIndex((t, i) => i > open && t.text === ')');
  if (open < 0 || close < 0) return { params: [], read: [], body: tokens.map((t) => t.text) };
  const params = tokens
    .slice(open + 1, close)
    .filter((t) => t.kind === 'id')
    .map((t) => t.text);
  // The body: after the parameter list, without the braces (or the arrow) that open and close it.
  let body = tokens.slice(close + 1);
  if (body[0]?.text === '=>') body = body.slice(1);
  if (body[0]?.text === '{' && body.at(-1)?.text === '}') body = body.slice(1, -1);
  const read: number[] = [];
  const shape = body.map((t) => {
    const p = t.ref ? params.indexOf(t.text) : -1;
    if (p >= 0) {
      if (!read.includes(p)) read.push(p);
      return `x${read.indexOf(p)}`;
    }
    return t.kind === 'num' ? 'K' : t.text;
  });
  return { params, read, body: shape };
}

/** The case type of a task (see the header): equal for tasks a learner would call the same case. */
export function caseType(task: Task): string {
  if (task.type === 'problem') return task.type;
  const { read, body } = readProgram(task.program);
  const head = body.length <= SHAPE_TOKENS ? `${task.type} ${[...task.skills].sort().join(',')}` : task.type;
  const shape = body.length <= SHAPE_TOKENS ? ` ${body.join('')}` : '';
  if (task.type === 'deduction') {
    const args = read.length > 0 ? read.map((i) => task.input[i]) : task.input;
    return `${head}${shape} ${args.map((x) => valueClass(x ?? null)).join(',')} => ${valueClass(task.output)}`;
  }
  if (task.type === 'abduction') return `${head}${shape} => ${valueClass(task.output)}`;
  return `${head}${shape}`;
}
