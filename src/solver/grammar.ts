// Answer grammars for constrained decoding (DESIGN.md, "Solver and the GRPO family").
//
// Each grammar is a small pushdown automaton over characters. `allowed(state, charsLeft)` returns
// the tokens that keep the answer completable within the remaining character budget, so every
// sampled answer is well-formed and no longer than maxAnswerLen:
//   literal: compact JSON (no whitespace, no escapes in strings): numbers (optional minus, optional
//            fraction), "strings", true/false/null, arrays, objects with string keys.
//   program: program text such as `a=>a*2`: a character whitelist, balanced ()[]{} outside string
//            literals, closed quotes, not starting with a space or ending on an operator.
import type { AnswerKind } from '../task.js';
import { EOS, VOCAB_SIZE, charId } from './tokenizer.js';

const PRINTABLE: string[] = [];
for (let c = 32; c <= 126; c++) PRINTABLE.push(String.fromCharCode(c));

export interface Grammar<S = unknown> {
  start(): S;
  /** The state after appending `ch`, or null when `ch` cannot follow. */
  next(state: S, ch: string): S | null;
  /** Fewest characters that complete the answer from this state. */
  minRemaining(state: S): number;
  canEnd(state: S): boolean;
  key(state: S): string;
}

// ---------------------------------------------------------------- literal (compact JSON)
type LMode = 'V' | 'K' | 'S' | 'C' | 'W' | 'N1' | 'N0' | 'NI' | 'ND' | 'NF' | 'A';
interface LState {
  mode: LMode;
  /** open containers, innermost last: 'a' array, 'o' object */
  stack: string;
  /** rest of a keyword being spelled (true/false/null) */
  kw: string;
  /** the string being read is an object key */
  isKey: boolean;
  /** the innermost container was just opened (it may close at once) */
  open: boolean;
}
const isDigit = (c: string): boolean => c >= '0' && c <= '9';
const top = (stack: string): string => stack.slice(-1);
const L = (mode: LMode, stack: string, extra: Partial<LState> = {}): LState => ({
  mode, stack, kw: '', isKey: false, open: false, ...extra,
});

function literalNext(s: LState, c: string): LState | null {
  switch (s.mode) {
    case 'V':
      if (c === '"') return L('S', s.stack);
      if (c === '0') return L('N0', s.stack);
      if (c >= '1' && c <= '9') return L('NI', s.stack);
      if (c === '-') return L('N1', s.stack);
      if (c === 't') return L('W', s.stack, { kw: 'rue' });
      if (c === 'f') return L('W', s.stack, { kw: 'alse' });
      if (c === 'n') return L('W', s.stack, { kw: 'ull' });
      if (c === '[') return L('V', s.stack + 'a', { open: true });
      if (c === '{') return L('K', s.stack + 'o', { open: true });
      if (c === ']' && s.open && top(s.stack) === 'a') return L('A', s.stack.slice(0, -1));
      return null;
    case 'K':
      if (c === '"') return L('S', s.stack, { isKey: true });
      if (c === '}' && s.open) return L('A', s.stack.slice(0, -1));
      return null;
    case 'S':
      if (c === '"') return s.isKey ? L('C', s.stack) : L('A', s.stack);
      if (c === '\\') return null;
      return s;
    case 'C':
      return c === ':' ? L('V', s.stack) : null;
    case 'W':
      if (c !== s.kw[0]) return null;
      return s.kw.length === 1 ? L('A', s.stack) : L('W', s.stack, { kw: s.kw.slice(1) });
    case 'N1':
      if (c === '0') return L('N0', s.stack);
      if (c >= '1' && c <= '9') return L('NI', s.stack);
      return null;
    case 'N0':
      if (c === '.') return L('ND', s.stack);
      return literalNext(L('A', s.stack), c);
    case 'NI':
      if (isDigit(c)) return s;
      if (c === '.') return L('ND', s.stack);
      return literalNext(L('A', s.stack), c);
    case 'ND':
      return isDigit(c) ? L('NF', s.stack) : null;
    case 'NF':
      if (isDigit(c)) return s;
      return literalNext(L('A', s.stack), c);
    case 'A': {
      const t = top(s.stack);
      if (t === 'a') {
        if (c === ',') return L('V', s.stack);
        if (c === ']') return L('A', s.stack.slice(0, -1));
      } else if (t === 'o') {
        if (c === ',') return L('K', s.stack);
        if (c === '}') return L('A', s.stack.slice(0, -1));
      }
      return null;
    }
  }
}

function literalMin(s: LState): number {
  const closes = s.stack.length;
  switch (s.mode) {
    case 'V': return closes + (s.open ? 0 : 1);
    case 'K': return closes + (s.open ? 0 : 4); // "" : 0
    case 'S': return closes + (s.isKey ? 3 : 1); // " : 0   or   "
    case 'C': return closes + 2;
    case 'W': return closes + s.kw.length;
    case 'N1': case 'ND': return closes + 1;
    default: return closes; // N0 NI NF A
  }
}

export const literalGrammar: Grammar<LState> = {
  start: () => L('V', ''),
  next: literalNext,
  minRemaining: literalMin,
  canEnd: (s) => s.stack === '' && (s.mode === 'A' || s.mode === 'N0' || s.mode === 'NI' || s.mode === 'NF'),
  key: (s) => `${s.mode}|${s.stack}|${s.kw}|${s.isKey ? 1 : 0}|${s.open ? 1 : 0}`,
};

// ---------------------------------------------------------------- program text
const OPS = '+-*/%<>=!&|^~?:.,;';
const PROGRAM_CHARS = new Set(
  'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$ ' + OPS + '()[]{}\'"',
);
const CLOSE_OF: Record<string, string> = { '(': ')', '[': ']', '{': '}' };
interface PState {
  stack: string;
  /** the quote character of an open string literal, or '' */
  q: string;
  last: string;
}

function programNext(s: PState, c: string): PState | null {
  if (s.q !== '') {
    if (c === s.q) return { stack: s.stack, q: '', last: c };
    if (c === '\\') return null;
    return { stack: s.stack, q: s.q, last: c };
  }
  if (!PROGRAM_CHARS.has(c)) return null;
  if (c === ' ' && (s.last === '' || s.last === ' ')) return null;
  if (c === "'" || c === '"') return { stack: s.stack, q: c, last: c };
  if (c in CLOSE_OF) return { stack: s.stack + c, q: '', last: c };
  if (c === ')' || c === ']' || c === '}') {
    const t = top(s.stack);
    if (t === '' || CLOSE_OF[t] !== c) return null;
    if (OPS.includes(s.last) && s.last !== ',') return null;
    return { stack: s.stack.slice(0, -1), q: '', last: c };
  }
  return { stack: s.stack, q: '', last: c };
}

const dangling = (last: string): boolean => last === '' || last === ' ' || OPS.includes(last);

export const programGrammar: Grammar<PState> = {
  start: () => ({ stack: '', q: '', last: '' }),
  next: programNext,
  minRemaining: (s) => s.stack.length + (s.q !== '' ? 1 : dangling(s.last) ? 1 : 0),
  canEnd: (s) => s.q === '' && s.stack === '' && !dangling(s.last),
  key: (s) => `${s.stack}|${s.q}|${s.last}`,
};

export function grammarFor(kind: AnswerKind): Grammar {
  return (kind === 'program' ? programGrammar : literalGrammar) as Grammar;
}

// ---------------------------------------------------------------- token masks
const maskCache = new Map<string, Uint8Array>();

/**
 * Allowed next tokens (1 = allowed) of length VOCAB_SIZE: characters that leave the answer
 * completable in `charsLeft - 1` more characters, and <eos> when the answer is complete.
 */
export function allowedTokens(kind: AnswerKind, state: unknown, charsLeft: number): Uint8Array {
  const g = grammarFor(kind);
  const k = `${kind}|${charsLeft}|${g.key(state)}`;
  let m = maskCache.get(k);
  if (m) return m;
  m = new Uint8Array(VOCAB_SIZE);
  if (g.canEnd(state)) m[EOS] = 1;
  if (charsLeft > 0) {
    for (const ch of PRINTABLE) {
      const n = g.next(state, ch);
      if (n !== null && g.minRemaining(n) <= charsLeft - 1) m[charId(ch)] = 1;
    }
  }
  if (maskCache.size > 200_000) maskCache.clear();
  maskCache.set(k, m);
  return m;
}

/** Whether `text` is a complete answer of this kind within maxLen characters. */
export function isWellFormed(kind: AnswerKind, text: string, maxLen: number): boolean {
  if (text.length > maxLen) return false;
  const g = grammarFor(kind);
  let s: unknown = g.start();
  for (const ch of text) {
    const n = g.next(s, ch);
    if (n === null) return false;
    s = n;
  }
  return g.canEnd(s);
}
