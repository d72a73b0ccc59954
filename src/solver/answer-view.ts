// How the solver writes a literal answer's numbers: the sign always, and at least two digits before
// any fraction (`+07`, `-03`, `+12`, `+00.5`). Every answer of arithmetic level 0 is then a sign, a
// tens digit and a ones digit, each at its own place, instead of one or two digits whose first may
// be either (docs/solver-view.md). Strings and program answers are written as they are.
import type { AnswerShape } from '../../core/task.js';
import { isWorkShape, workParts } from '../../core/working.js';
import { answerIds } from './answer-grammar.js';
import { grammarFor } from './grammars.js';
import { workHoles, workIds } from './work-grammar.js';

/** A JSON number (as JSON.stringify writes it, an exponent included) at the start of a text. */
const JSON_NUMBER = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/;
/** A number as the view writes it (the answer grammar writes no exponent; other text may hold one). */
const VIEW_NUMBER = /^[+-]\d\d+(\.\d+)?([eE][+-]?\d+)?/;

/** Rewrites every number outside string literals of a compact JSON text. */
function mapNumbers(text: string, at: RegExp, write: (n: string) => string): string {
  let out = '';
  for (let i = 0; i < text.length;) {
    const c = text[i]!;
    if (c === '"') {
      const stop = stringEnd(text, i);
      out += text.slice(i, stop);
      i = stop;
      continue;
    }
    const m = at.exec(text.slice(i));
    if (m) {
      out += write(m[0]);
      i += m[0].length;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** Where the string literal opened at `from` ends (past its closing quote; escapes skipped). */
function stringEnd(text: string, from: number): number {
  for (let i = from + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i + 1;
  }
  return text.length;
}

/** The integer digits of a number without its sign, and what follows them (fraction, exponent). */
const split = (unsigned: string): [string, string] => {
  const end = /^\d+/.exec(unsigned)![0].length;
  return [unsigned.slice(0, end), unsigned.slice(end)];
};

const toView = (n: string): string => {
  const [int, rest] = split(n.replace(/^-/, ''));
  return (n.startsWith('-') ? '-' : '+') + int.padStart(2, '0') + rest;
};

const fromView = (n: string): string => {
  const [int, rest] = split(n.slice(1));
  return (n.startsWith('-') ? '-' : '') + int.replace(/^0(?=\d)/, '') + rest;
};

/**
 * An answer's JSON text as the solver writes it. For a working's shape (core/working.ts) the answer
 * shown is the JSON list of its holes' values, and it is written into its template.
 */
export function answerInView(shape: AnswerShape, answer: string): string {
  if (isWorkShape(shape)) return workingInView(shape, answer);
  return shape === 'program' ? answer : mapNumbers(answer, JSON_NUMBER, toView);
}

/** The JSON text of an answer the solver wrote; of a working, its last hole's (the value it answers). */
export function answerFromView(shape: AnswerShape, written: string): string {
  if (isWorkShape(shape)) {
    const last = workHoles(shape, written)?.at(-1);
    return last === undefined ? written : mapNumbers(last, VIEW_NUMBER, fromView);
  }
  return shape === 'program' ? written : mapNumbers(written, VIEW_NUMBER, fromView);
}

/** The holes of a working shown as a JSON list of their values, each as the view writes it. */
const holesInView = (values: string): string[] =>
  (JSON.parse(values) as unknown[]).map((v) => mapNumbers(JSON.stringify(v), JSON_NUMBER, toView));

/** A working's template with its holes filled by the values of a JSON list. */
function workingInView(shape: AnswerShape, values: string): string {
  const holes = holesInView(values);
  let k = 0;
  return workParts(shape)
    .map((p) => (typeof p === 'string' ? p : holes[k++]))
    .join('');
}

/** The tokens the solver writes an answer's JSON text in, <eos> last (answerIds of its written form), or null. */
export const answerTokenIds = (shape: AnswerShape, answer: string): number[] | null =>
  isWorkShape(shape) ? workIds(shape, holesInView(answer)) : answerIds(grammarFor(shape), answerInView(shape, answer));
