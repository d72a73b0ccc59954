// A small JavaScript tokenizer, the canonical program hash (whitespace- and identifier-normalised),
// and the minified "arrow-like" form of a program used by the compact rendering.
import { createHash } from 'node:crypto';

export type TokKind = 'id' | 'num' | 'str' | 'punct';
export interface Token {
  kind: TokKind;
  text: string;
  /** Offset of the token in the source text. */
  at: number;
}

const PUNCT = [
  '>>>=', '...', '===', '!==', '**=', '<<=', '>>=', '>>>', '&&=', '||=', '??=',
  '=>', '==', '!=', '<=', '>=', '&&', '||', '??', '?.', '++', '--', '+=', '-=', '*=', '/=', '%=',
  '&=', '|=', '^=', '<<', '>>', '**',
];

/** Splits source text into tokens; comments and whitespace are dropped. Never throws. */
export function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  const n = src.length;
  while (i < n) {
    const c = src[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++;
      continue;
    }
    if (c === '/' && src[i + 1] === '/') {
      while (i < n && src[i] !== '\n') i++;
      continue;
    }
    if (c === '/' && src[i + 1] === '*') {
      const end = src.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
      continue;
    }
    if (/[A-Za-z_$]/.test(c)) {
      let j = i + 1;
      while (j < n && /[\w$]/.test(src[j]!)) j++;
      out.push({ kind: 'id', text: src.slice(i, j), at: i });
      i = j;
      continue;
    }
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(src[i + 1] ?? ''))) {
      let j = i + 1;
      while (j < n && /[\w.]/.test(src[j]!)) j++;
      out.push({ kind: 'num', text: src.slice(i, j), at: i });
      i = j;
      continue;
    }
    if (c === '"' || c === "'" || c === '`') {
      let j = i + 1;
      while (j < n && src[j] !== c) j += src[j] === '\\' ? 2 : 1;
      out.push({ kind: 'str', text: src.slice(i, Math.min(j + 1, n)), at: i });
      i = j + 1;
      continue;
    }
    const p = PUNCT.find((q) => src.startsWith(q, i));
    out.push({ kind: 'punct', text: p ?? c, at: i });
    i += p ? p.length : 1;
  }
  return out;
}

const KEYWORDS = new Set([
  'function', 'return', 'let', 'const', 'var', 'if', 'else', 'for', 'while', 'do', 'of', 'in', 'new',
  'true', 'false', 'null', 'undefined', 'typeof', 'instanceof', 'break', 'continue', 'switch', 'case',
  'default', 'this', 'void', 'delete', 'throw', 'try', 'catch', 'finally', 'class', 'extends', 'super',
  'yield', 'async', 'await', 'NaN', 'Infinity', 'Math', 'String', 'Number', 'Array', 'Object', 'JSON',
  'Boolean', 'parseInt', 'parseFloat', 'isNaN', 'isFinite', 'Set', 'Map', 'BigInt', 'Symbol', 'Date',
  'RegExp', 'Error',
]);

/** Identifier tokens that name local bindings (not keywords, globals, properties or object keys). */
export function isBinding(toks: Token[], i: number): boolean {
  const t = toks[i]!;
  if (t.kind !== 'id' || KEYWORDS.has(t.text)) return false;
  const prev = toks[i - 1];
  if (prev && prev.kind === 'punct' && (prev.text === '.' || prev.text === '?.')) return false;
  const next = toks[i + 1];
  if (next && next.text === ':' && prev && (prev.text === '{' || prev.text === ',')) return false;
  return true;
}

/** The canonical token string: identifiers renamed in order of first appearance, one space apart. */
export function canonicalForm(program: string): string {
  const toks = dropOptionalSemicolons(tokenize(program));
  const names = new Map<string, string>();
  return toks
    .map((t, i) => {
      if (!isBinding(toks, i)) return t.text;
      let m = names.get(t.text);
      if (!m) names.set(t.text, (m = `v${names.size}`));
      return m;
    })
    .join(' ');
}

/** Canonical hash of a program: 16 hex digits of SHA-256 over the canonical form. */
export function canonicalHash(program: string): string {
  return createHash('sha256').update(canonicalForm(program)).digest('hex').slice(0, 16);
}

const WORDISH = /[\w$]/;

/** Joins tokens with as few spaces as keep them apart. */
export function joinTokens(toks: Token[]): string {
  let out = '';
  for (const t of toks) {
    const last = out[out.length - 1];
    const first = t.text[0]!;
    const needSpace =
      last !== undefined &&
      ((WORDISH.test(last) && WORDISH.test(first)) ||
        ((last === '+' || last === '-') && first === last) ||
        (last === '/' && (first === '/' || first === '*')) ||
        (last === '.' && /[0-9]/.test(first)));
    out += (needSpace ? ' ' : '') + t.text;
  }
  return out;
}

/** Drops `;` tokens directly before `}` (optional in every statement list). */
export function dropOptionalSemicolons(toks: Token[]): Token[] {
  return toks.filter((t, i) => !(t.kind === 'punct' && t.text === ';' && toks[i + 1]?.text === '}'));
}

/** The whitespace-free source text of a program. */
export function minify(program: string): string {
  return joinTokens(dropOptionalSemicolons(tokenize(program)));
}

function matching(toks: Token[], open: number): number {
  const o = toks[open]!.text;
  const c = o === '(' ? ')' : o === '{' ? '}' : ']';
  let depth = 0;
  for (let i = open; i < toks.length; i++) {
    if (toks[i]!.kind !== 'punct') continue;
    if (toks[i]!.text === o) depth++;
    else if (toks[i]!.text === c && --depth === 0) return i;
  }
  return -1;
}

/**
 * The shortest faithful form of a `function f(...) {...}` program: `a=>a+1` or `(a,b)=>a*b` for a
 * single-return body, `(a)=>{...}` for a statement body, and the minified declaration when the
 * body calls `f` (recursion) or the text is not a lone declaration of f. Every form is accepted by
 * the induction verifier as an answer.
 */
export function compactProgram(program: string): string {
  const toks = dropOptionalSemicolons(tokenize(program));
  const fallback = joinTokens(toks);
  if (toks.length < 6 || toks[0]!.text !== 'function' || toks[1]!.text !== 'f' || toks[2]!.text !== '(') return fallback;
  const pClose = matching(toks, 2);
  if (pClose < 0 || toks[pClose + 1]?.text !== '{') return fallback;
  const bClose = matching(toks, pClose + 1);
  if (bClose !== toks.length - 1) return fallback;
  const params = toks.slice(3, pClose);
  const body = toks.slice(pClose + 2, bClose);
  if (body.some((t, i) => t.kind === 'id' && t.text === 'f' && isBinding(body, i))) return fallback;
  const simpleParam = params.length === 1 && params[0]!.kind === 'id';
  const head = simpleParam ? params[0]!.text : `(${joinTokens(params)})`;
  // A lone `return EXPR;` becomes an expression body.
  let expr = body;
  if (expr[expr.length - 1]?.text === ';') expr = expr.slice(0, -1);
  if (expr[0]?.text === 'return' && !expr.slice(1).some((t, i) => t.text === ';' && depthAt(expr, i + 1) === 0)) {
    const e = expr.slice(1);
    const text = joinTokens(e);
    return `${head}=>${e[0]?.text === '{' && matching(e, 0) === e.length - 1 ? `(${text})` : text}`;
  }
  let inner = joinTokens(body);
  if (inner.endsWith(';')) inner = inner.slice(0, -1);
  return `${head}=>{${inner}}`;
}

function depthAt(toks: Token[], at: number): number {
  let d = 0;
  for (let i = 0; i < at; i++) {
    const t = toks[i]!.text;
    if (toks[i]!.kind !== 'punct') continue;
    if (t === '(' || t === '{' || t === '[') d++;
    else if (t === ')' || t === '}' || t === ']') d--;
  }
  return d;
}
