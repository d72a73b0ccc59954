// Mutation operators for evolution and replay (PLR/ACCEL-style archives mutate high-scoring tasks).
// They work on the task's program text and inputs, so they apply to any task — generated, mutated
// or written by an LLM — and the result is a draft that must pass `materialise` like any other.
//
//   perturb-constant  one integer literal moves by ±1..3 (a positive literal stays positive)
//   swap-operator     one binary operator becomes a sibling (+ ↔ -, < ↔ <=, && ↔ ||, & ↔ | …)
//   wrap              f becomes the composition w(g(...args)) of the old f (renamed) and a small
//                     wrapper chosen by the output's JSON type (r + k, !r, r.length, …)
//   change-input      the inputs move a little (numbers ±1..3, flipped booleans, edited strings
//                     and arrays); the program is unchanged
// A verified problem is not changed: its statement states its data in words, so moving the data
// would make the two disagree, and a changed verifier would be a different check. Its draft is the
// problem itself ('change-input' with nothing changed), which dedup rejects where the problem was
// seen, so the pick falls back to a fresh task of its arm.
// Every draft records `parent: {id, op}` and `proposer: 'mutation'`, and is labelled by its own
// program where label.ts can read it.
import type { Rng } from '../core/rng.js';
import {
  argumentLists,
  type AnyDraft,
  type CodeTask,
  type Input,
  type Json,
  type ProblemDraft,
  type Task,
  type TaskDraft,
} from '../core/task.js';
import { tokenize, type Token } from './hash.js';
import { labelProgram } from './label.js';

export const MUTATION_OPS = ['perturb-constant', 'swap-operator', 'wrap', 'change-input'] as const;
export type MutationOp = (typeof MUTATION_OPS)[number];

const SWAPS: Record<string, string[]> = {
  '+': ['-', '*'],
  '-': ['+', '*'],
  '*': ['+', '-'],
  '%': ['-'],
  '<': ['<=', '>'],
  '<=': ['<', '>='],
  '>': ['>=', '<'],
  '>=': ['>', '<='],
  '===': ['!=='],
  '!==': ['==='],
  '&&': ['||'],
  '||': ['&&'],
  '&': ['|', '^'],
  '|': ['&', '^'],
  '^': ['&', '|'],
  '<<': ['>>'],
  '>>': ['<<'],
  '+=': ['-=', '*='],
  '-=': ['+='],
  '*=': ['+='],
};

const isTextLiteral = (t: Token | undefined): boolean => t?.kind === 'str' || t?.text === '`';

/** The binary operators that have a sibling (the syntax tree tells a binary `-` from a unary one). */
function swappable(toks: Token[]): number[] {
  return toks.flatMap((t, i) => {
    if (!t.operator || !SWAPS[t.text]) return [];
    // String concatenation stays concatenation: swapping it only yields NaN.
    if ((t.text === '+' || t.text === '+=') && (isTextLiteral(toks[i - 1]) || isTextLiteral(toks[i + 1]))) return [];
    return [i];
  });
}

const intLiterals = (toks: Token[]): number[] =>
  toks.flatMap((t, i) => (t.kind === 'num' && /^\d+$/.test(t.text) ? [i] : []));

const splice = (src: string, t: Token, text: string): string =>
  src.slice(0, t.at) + text + src.slice(t.at + t.text.length);

function exampleOutput(task: Task): Json {
  if (task.type === 'problem') return 1;
  return task.type === 'induction' ? (task.visible[0] ?? task.hidden[0])!.output : task.output;
}

/** A problem's only "input" is its data (its verifier is called as f(answer, data)). */
function allInputs(task: Task): Input[] {
  return task.type === 'problem' ? [[task.data]] : argumentLists(task);
}

/** The operators that can change this task. 'wrap' always applies; 'change-input' whenever f takes arguments. */
export function applicableOps(task: Task): MutationOp[] {
  if (task.type === 'problem') return ['change-input'];
  const toks = tokenize(task.program);
  const ops: MutationOp[] = [];
  if (intLiterals(toks).length > 0) ops.push('perturb-constant');
  if (swappable(toks).length > 0) ops.push('swap-operator');
  ops.push('wrap');
  if (allInputs(task).some((i) => i.length > 0)) ops.push('change-input');
  return ops;
}

function freshName(toks: Token[], base: string): string {
  const used = new Set(toks.filter((t) => t.kind === 'id').map((t) => t.text));
  for (let i = 0; ; i++) {
    const name = i === 0 ? base : `${base}${i}`;
    if (!used.has(name)) return name;
  }
}

function wrapper(rng: Rng, out: Json, r: string): string {
  const k = rng.int(2, 9);
  if (typeof out === 'number')
    return rng.pick([`${r} + ${k}`, `${r} * ${k}`, `${r} % ${k}`, `Math.abs(${r})`, `${r} > ${k}`, `${r} - ${k}`]);
  if (typeof out === 'boolean') return rng.pick([`!${r}`, `${r} ? ${k} : 0`]);
  if (typeof out === 'string')
    return rng.pick([`${r} + "x"`, `${r}.length`, `${r}.split("").reverse().join("")`, `${r}.toUpperCase()`]);
  if (Array.isArray(out)) return rng.pick([`${r}.length`, `${r}.slice().reverse()`, `${r}.concat([${k}])`]);
  if (out === null) return `${r} === null`;
  return rng.pick([`Object.keys(${r}).length`, `Object.keys(${r}).join("")`]);
}

/** Indents every line by two spaces, except lines that begin inside a string or template literal. */
function indent(src: string, toks: Token[]): string {
  const literals = toks.filter((t) => t.kind === 'str' || t.kind === 'template');
  let out = '';
  let lineStart = 0;
  for (const line of src.split('\n')) {
    const inLiteral = literals.some((t) => t.at < lineStart && lineStart <= t.end);
    out += (lineStart > 0 ? '\n' : '') + (inLiteral ? '' : '  ') + line;
    lineStart += line.length + 1;
  }
  return out;
}

function wrapProgram(rng: Rng, task: Task): string {
  const toks = tokenize(task.program);
  const g = freshName(toks, 'g');
  const r = freshName(toks, 'r');
  const args = freshName(toks, 'args');
  let renamed = task.program;
  // Rename every occurrence of the variable f (declaration and recursive calls), right to left;
  // a shorthand `{f}` keeps its key.
  const fs = toks.filter((t) => t.ref && t.text === 'f');
  for (const t of fs.reverse()) renamed = splice(renamed, t, t.shorthand ? `f: ${g}` : g);
  const renamedToks = fs.length > 0 ? tokenize(renamed) : toks;
  return `function f(...${args}) {\n${indent(renamed, renamedToks)}\n  const ${r} = ${g}(...${args});\n  return ${wrapper(rng, exampleOutput(task), r)};\n}`;
}

const LETTERS = 'abcde';

function nudge(rng: Rng, x: Json, depth = 0): Json {
  if (typeof x === 'number') return Number.isInteger(x) ? x + rng.pick([-3, -2, -1, 1, 2, 3]) : x + 1;
  if (typeof x === 'boolean') return !x;
  if (typeof x === 'string') {
    const i = rng.int(0, x.length);
    const c = LETTERS[rng.int(0, LETTERS.length - 1)]!;
    const op = x.length === 0 ? 0 : rng.int(0, 2);
    if (op === 0) return x.slice(0, i) + c + x.slice(i);
    if (op === 1) return x.slice(0, Math.min(i, x.length - 1)) + x.slice(Math.min(i, x.length - 1) + 1);
    const j = Math.min(i, x.length - 1);
    return x.slice(0, j) + c + x.slice(j + 1);
  }
  if (Array.isArray(x)) {
    if (x.length === 0 || depth > 3) return x.length === 0 ? [rng.int(0, 9)] : x;
    const i = rng.int(0, x.length - 1);
    const op = rng.int(0, 2);
    if (op === 0) return x.map((y, j) => (j === i ? nudge(rng, y, depth + 1) : y));
    if (op === 1 && x.length > 1) return x.filter((_, j) => j !== i);
    return [...x, x[i]!];
  }
  if (x === null) return null;
  const keys = Object.keys(x);
  if (keys.length === 0) return x;
  const key = rng.pick(keys);
  return { ...x, [key]: nudge(rng, x[key]!, depth + 1) };
}

function changeInputs(rng: Rng, inputs: Input[]): Input[] {
  const before = JSON.stringify(inputs);
  for (let attempt = 0; attempt < 10; attempt++) {
    const pickOne = rng.int(0, inputs.length - 1);
    const out = inputs.map((input, i) => {
      if (input.length === 0 || (i !== pickOne && !rng.bool(0.5))) return input;
      const a = rng.int(0, input.length - 1);
      return input.map((x, j) => (j === a ? nudge(rng, x) : x));
    });
    if (JSON.stringify(out) !== before) return out;
  }
  return inputs;
}

/**
 * A mutated draft of `task`. With no `op`, one applicable operator is drawn. Throws when the
 * requested operator cannot change this task (e.g. 'perturb-constant' on a program without
 * integer literals); `applicableOps` says which can.
 */
export function mutate(rng: Rng, task: CodeTask, op?: MutationOp): TaskDraft;
export function mutate(rng: Rng, task: Task, op?: MutationOp): AnyDraft;
export function mutate(rng: Rng, task: Task, op?: MutationOp): AnyDraft {
  const ops = applicableOps(task);
  const chosen = op ?? rng.pick(ops);
  if (!MUTATION_OPS.includes(chosen))
    throw new Error(`mutate: unknown operator '${String(chosen)}'; known: ${MUTATION_OPS.join(', ')}`);
  if (!ops.includes(chosen))
    throw new Error(`mutate: '${chosen}' does not apply to task ${task.id} (applicable: ${ops.join(', ')})`);
  if (task.type === 'problem') {
    const draft: ProblemDraft = {
      type: 'problem',
      family: task.family,
      level: task.level,
      skills: [...task.skills],
      program: task.program,
      statement: task.statement,
      data: task.data,
      witness: task.witness,
      failures: task.failures,
      parent: { id: task.id, op: chosen },
      proposer: 'mutation',
    };
    return draft;
  }
  const toks = tokenize(task.program);
  let program = task.program;
  let inputs = allInputs(task);
  let skills = task.skills;
  switch (chosen) {
    case 'perturb-constant': {
      const t = toks[rng.pick(intLiterals(toks))]!;
      const old = Number(t.text);
      let next = old + rng.pick([-3, -2, -1, 1, 2, 3]);
      if (old > 0 && next <= 0) next = old + rng.int(1, 3);
      program = splice(program, t, String(next));
      break;
    }
    case 'swap-operator': {
      const t = toks[rng.pick(swappable(toks))]!;
      program = splice(program, t, rng.pick(SWAPS[t.text]!));
      break;
    }
    case 'wrap':
      program = wrapProgram(rng, task);
      if (!skills.includes('hof.compose')) skills = [...skills, 'hof.compose'].sort();
      break;
    case 'change-input':
      inputs = changeInputs(rng, inputs);
      break;
  }
  // The child's level and skills are read from its own program where its family's tables can
  // (label.ts); elsewhere (shapes, lambdas, a wrapped f) it keeps its parent's.
  const label = labelProgram(task.family, program, inputs);
  const draft: TaskDraft = {
    type: task.type,
    family: task.family,
    level: label.level ?? task.level,
    skills: label.level === null ? [...skills] : label.skills,
    program,
    inputs,
    parent: { id: task.id, op: chosen },
    proposer: 'mutation',
  };
  if (task.type === 'induction') {
    draft.visibleCount = task.visible.length;
    draft.message = task.message;
  }
  return draft;
}
