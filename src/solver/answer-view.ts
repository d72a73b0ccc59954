// How the solver writes a literal answer's numbers: the sign always, and at least two digits before
// any fraction (`+07`, `-03`, `+12`, `+00.5`). Every answer of arithmetic level 0 is then a sign, a
// tens digit and a ones digit, each at its own place, instead of one or two digits whose first may
// be either (docs/solver-view.md). Strings and program answers are written as they are.
import type { AnswerShape } from '../../core/task.js';
import { answerIds, grammarFor } from './answer-grammar.js';

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

/** An answer's JSON text as the solver writes it. */
export function answerInView(shape: AnswerShape, answer: string): string {
  return shape === 'program' ? answer : mapNumbers(answer, JSON_NUMBER, toView);
}

/** The JSON text of an answer the solver wrote. */
export function answerFromView(shape: AnswerShape, written: string): string {
  return shape === 'program' ? written : mapNumbers(written, VIEW_NUMBER, fromView);
}

/** The tokens the solver writes an answer's JSON text in, <eos> last (answerIds of its written form), or null. */
export const answerTokenIds = (shape: AnswerShape, answer: string): number[] | null =>
  answerIds(grammarFor(shape), answerInView(shape, answer));
