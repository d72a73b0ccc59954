// Answer grammars for constrained decoding (docs/DESIGN.md, "Solver and the GRPO family").
//
// Each grammar is a small pushdown automaton over characters; a token (tokenizer.ts: a character or a
// word) steps it by each of its characters. `allowedTokens(state, tokensLeft)` returns the tokens
// that keep the answer completable within the remaining token budget (a completion's characters
// bound its tokens: every character is a token), so every sampled answer is well-formed and at most
// maxAnswerLen tokens. A literal has one way to be written in tokens: a keyword (true, false, null)
// is its word token, never spelled (`midWord`), and a string's contents are characters (`charsOnly`),
// so that training on a given answer (`answerIds`) and sampling it take the same tokens:
//   literal: compact JSON (no whitespace, no escapes in strings) with its numbers as the solver
//            writes them (answer-view.ts: a sign always, at least two digits before an optional
//            fraction, a leading 0 only as the pad of one digit), "strings", true/false/null,
//            arrays, objects with string keys.
//   program: program text such as `a=>a*2`: a character whitelist, balanced ()[]{} outside string
//            literals, closed quotes, not starting with a space or ending on an operator.
//   typed:   the literal grammar held to an answer shape (task.ts, AnswerShape): a value type
//            (`int` allows no fraction, `bool` only true/false, …) or, for abduction's argument
//            list, a tuple such as `[int,str]` (that many elements, each of its type; deeper values
//            are free). The shape is only the answer's type (for abduction the natural rendering
//            states it too; for deduction it is f's return type): it narrows what can be written,
//            never what is right.
import type { AnswerShape } from '../../core/task.js';
import { EOS, TOKENS, VOCAB_SIZE } from './tokenizer.js';

export interface Grammar<S = unknown> {
  start(): S;
  /** The state after appending `ch`, or null when `ch` cannot follow. */
  next(state: S, ch: string): S | null;
  /** Fewest characters that complete the answer from this state. */
  minRemaining(state: S): number;
  canEnd(state: S): boolean;
  key(state: S): string;
  /** Whether the state is inside a word the tokenizer holds whole (a token may not end there). */
  midWord?(state: S): boolean;
  /** Whether only single characters may follow (inside a string literal). */
  charsOnly?(state: S): boolean;
}

// ---------------------------------------------------------------- literal (compact JSON)
type LMode = 'V' | 'K' | 'S' | 'C' | 'W' | 'N1' | 'NZ' | 'NP' | 'N0' | 'NI' | 'ND' | 'NF' | 'A';
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
  mode,
  stack,
  kw: '',
  isKey: false,
  open: false,
  ...extra,
});

function literalNext(s: LState, c: string): LState | null {
  switch (s.mode) {
    case 'V':
      if (c === '"') return L('S', s.stack);
      if (c === '-' || c === '+') return L('N1', s.stack);
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
      if (c === '0') return L('NZ', s.stack);
      if (c >= '1' && c <= '9') return L('NP', s.stack);
      return null;
    case 'NZ':
      return isDigit(c) ? L('N0', s.stack) : null;
    case 'NP':
      return isDigit(c) ? L('NI', s.stack) : null;
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
    case 'V':
      return closes + (s.open ? 0 : 1);
    case 'K':
      return closes + (s.open ? 0 : 4); // "" : 0
    case 'S':
      return closes + (s.isKey ? 3 : 1); // " : 0   or   "
    case 'C':
      return closes + 2;
    case 'W':
      return closes + s.kw.length;
    case 'N1':
      return closes + 2;
    case 'NZ':
    case 'NP':
    case 'ND':
      return closes + 1;
    default:
      return closes; // N0 NI NF A
  }
}

export const literalGrammar: Grammar<LState> = {
  start: () => L('V', ''),
  next: literalNext,
  minRemaining: literalMin,
  canEnd: (s) => s.stack === '' && (s.mode === 'A' || s.mode === 'N0' || s.mode === 'NI' || s.mode === 'NF'),
  key: (s) => `${s.mode}|${s.stack}|${s.kw}|${s.isKey ? 1 : 0}|${s.open ? 1 : 0}`,
  midWord: (s) => s.mode === 'W',
  charsOnly: (s) => s.mode === 'S',
};

// ---------------------------------------------------------------- program text
const OPS = '+-*/%<>=!&|^~?:.,;';
const PROGRAM_CHARS = new Set('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$ ' + OPS + '()[]{}\'"');
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

// ---------------------------------------------------------------- typed literals
type ValueType = 'any' | 'int' | 'num' | 'bool' | 'str' | 'null' | 'arr' | 'obj';
const VALUE_TYPES: ValueType[] = ['any', 'int', 'num', 'bool', 'str', 'null', 'arr', 'obj'];
/** Characters a value of each type may start with ('' = any). */
const STARTS: Record<ValueType, string> = {
  any: '',
  int: '+-',
  num: '+-',
  bool: 'tf',
  str: '"',
  null: 'n',
  arr: '[',
  obj: '{',
};
/** Fewest tokens of a value of each type (true, false and null are one token each). */
const MIN_LEN: Record<ValueType, number> = { any: 1, int: 3, num: 3, bool: 1, str: 2, null: 1, arr: 2, obj: 2 };
const NUMBER_MODES = new Set<LMode>(['N1', 'NZ', 'NP', 'N0', 'NI', 'ND', 'NF']);
/** Modes in which ',' or a closing bracket ends the current value. */
const AFTER_VALUE = new Set<LMode>(['A', 'N0', 'NI', 'NF']);

interface TState {
  lit: LState;
  /** index of the tuple element being written */
  idx: number;
}

function parseShape(shape: string): { root: ValueType } | { tuple: ValueType[] } {
  const m = /^\[(.*)\]$/.exec(shape);
  const types = m ? (m[1] === '' ? [] : m[1]!.split(',')) : [shape];
  for (const t of types) if (!VALUE_TYPES.includes(t as ValueType)) throw new Error(`unknown answer shape "${shape}"`);
  return m ? { tuple: types as ValueType[] } : { root: types[0] as ValueType };
}

function typedGrammar(shape: string): Grammar<TState> {
  const p = parseShape(shape);
  const tuple = 'tuple' in p ? p.tuple : null;
  const root = 'root' in p ? p.root : 'arr';
  const tupleMin = (from: number): number => tuple!.slice(from).reduce((a, t) => a + MIN_LEN[t] + 1, 0);
  /** The type a value starting at this depth must have. */
  const typeAt = (depth: number, idx: number): ValueType =>
    depth === 0 ? root : tuple && depth === 1 ? tuple[idx]! : 'any';
  return {
    start: () => ({ lit: L('V', ''), idx: 0 }),
    next(s, c) {
      const lit = literalNext(s.lit, c);
      if (lit === null) return null;
      const depth = s.lit.stack.length;
      let idx = s.idx;
      if (s.lit.mode === 'V' && c !== ']') {
        if (tuple && depth === 1 && idx >= tuple.length) return null; // `[]`: no element may start
        const t = typeAt(depth, idx);
        if (STARTS[t] !== '' && !STARTS[t].includes(c)) return null;
      }
      // a number never opens a container, so the one being written sits at this depth and index
      if (c === '.' && NUMBER_MODES.has(s.lit.mode) && typeAt(depth, idx) === 'int') return null;
      if (tuple && depth === 1) {
        const ends = AFTER_VALUE.has(s.lit.mode);
        if (c === ',' && ends && ++idx >= tuple.length) return null;
        if (c === ']' && ((ends && idx !== tuple.length - 1) || (s.lit.mode === 'V' && tuple.length > 0))) return null;
      }
      return { lit, idx };
    },
    minRemaining(s) {
      const depth = s.lit.stack.length;
      if (s.lit.mode === 'V' && depth === 0) return tuple ? 1 + Math.max(1, tupleMin(0)) : MIN_LEN[root];
      if (!tuple || depth === 0) return literalMin(s.lit);
      const rest = tupleMin(s.idx + 1);
      // element idx not written yet: its shortest text, then the closing bracket
      if (s.lit.mode === 'V' && depth === 1) return (tuple.length === 0 ? 1 : MIN_LEN[tuple[s.idx]!] + 1) + rest;
      return literalMin(s.lit) + rest;
    },
    canEnd: (s) => literalGrammar.canEnd(s.lit),
    key: (s) => `${literalGrammar.key(s.lit)}|${s.idx}`,
    midWord: (s) => s.lit.mode === 'W',
    charsOnly: (s) => s.lit.mode === 'S',
  };
}

const typedGrammars = new Map<string, Grammar>();

/** The grammar of an answer shape other than a working's: 'program', 'literal' (any JSON literal) or a typed literal. */
export function shapeGrammar(kind: AnswerShape): Grammar {
  if (kind === 'program') return programGrammar as Grammar;
  if (kind === 'literal' || kind === 'any') return literalGrammar as Grammar;
  let g = typedGrammars.get(kind);
  if (!g) typedGrammars.set(kind, (g = typedGrammar(kind) as Grammar));
  return g;
}

// ---------------------------------------------------------------- token masks
/** The state after a token's characters, or null when one of them cannot follow. */
export function stepToken<S>(g: Grammar<S>, state: S, text: string): S | null {
  let s: S | null = state;
  for (const ch of text) {
    s = g.next(s, ch);
    if (s === null) return null;
  }
  return s;
}

/** Whether a token may follow `state` at all (the budget aside), and the state after it. */
function stepAllowed<S>(g: Grammar<S>, state: S, id: number): S | null {
  const text = TOKENS[id]!;
  if (text.length > 1 && g.charsOnly?.(state)) return null;
  const n = stepToken(g, state, text);
  return n === null || g.midWord?.(n) ? null : n;
}

/**
 * Allowed next tokens (1 = allowed) of length VOCAB_SIZE: tokens after which the answer can still be
 * completed in `tokensLeft - 1` more tokens and that do not end inside a word, and <eos> when the
 * answer is complete.
 */
export function tokenMask<S>(g: Grammar<S>, state: S, tokensLeft: number): Uint8Array {
  const m = new Uint8Array(VOCAB_SIZE);
  if (g.canEnd(state)) m[EOS] = 1;
  if (tokensLeft <= 0) return m;
  for (let id = 4; id < VOCAB_SIZE; id++) {
    const n = stepAllowed(g, state, id);
    if (n !== null && g.minRemaining(n) <= tokensLeft - 1) m[id] = 1;
  }
  return m;
}

const maskCache = new Map<string, Uint8Array>();

/** tokenMask of an answer shape's grammar (not a working's), cached by its state. */
export function shapeTokens(kind: AnswerShape, state: unknown, tokensLeft: number): Uint8Array {
  const g = shapeGrammar(kind);
  const k = `${kind}|${tokensLeft}|${g.key(state)}`;
  let m = maskCache.get(k);
  if (m) return m;
  m = tokenMask(g, state, tokensLeft);
  if (maskCache.size > 200_000) maskCache.clear();
  maskCache.set(k, m);
  return m;
}

/**
 * The tokens a grammar writes `text` in, <eos> last, or null when it is not a complete answer: at
 * each place the longest token the grammar allows there (for a literal the only one; program text
 * may also be written in shorter pieces). What supervised training and shown answers train on.
 */
export function answerIds<S>(g: Grammar<S>, text: string): number[] | null {
  const ids: number[] = [];
  let s = g.start();
  for (let i = 0; i < text.length;) {
    let best: { id: number; n: S; len: number } | null = null;
    for (let id = 4; id < VOCAB_SIZE; id++) {
      const t = TOKENS[id]!;
      if (t.length <= (best?.len ?? 0) || !text.startsWith(t, i)) continue;
      const n = stepAllowed(g, s, id);
      if (n !== null) best = { id, n, len: t.length };
    }
    if (!best) return null;
    ids.push(best.id);
    s = best.n;
    i += best.len;
  }
  return g.canEnd(s) ? [...ids, EOS] : null;
}
