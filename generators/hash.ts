// The canonical program hash (insensitive to whitespace, comments, optional semicolons and the
// names of the program's own variables) and the minified forms of a program used by the compact
// rendering. Both stand on acorn: its tokens (so regex and template literals, escapes and comments
// are read as JavaScript reads them) and its syntax tree (which words name variables, which
// operators are binary, where a semicolon was inserted automatically).
import { createHash } from 'node:crypto';
import {
  parse,
  tokenizer,
  tokTypes,
  type AnyNode,
  type Node,
  type Options,
  type Pattern,
  type Token as AcornToken,
} from 'acorn';

export type TokKind = 'id' | 'num' | 'str' | 'regex' | 'template' | 'punct';
export interface Token {
  /** 'id' is any word (identifier or keyword); 'template' is the text of a template literal between its delimiters. */
  kind: TokKind;
  text: string;
  /** Offset of the token in the source text, and of its end; equal for an automatically inserted `;`. */
  at: number;
  end: number;
  /** Names a variable (not a property, an object key or a keyword). */
  ref?: boolean;
  /** ... a variable the program declares, so that renaming it everywhere keeps the program's meaning. */
  local?: boolean;
  /** The one name of a shorthand property (`{a}`), which is both a key and a variable. */
  shorthand?: boolean;
  /** The operator of a binary, logical or assignment expression. */
  operator?: boolean;
  /** An empty statement in a statement list (a no-op). */
  empty?: boolean;
}

const OPTIONS: Options = { ecmaVersion: 'latest', sourceType: 'script' };

/**
 * The tokens of a program, comments and whitespace dropped, with a `;` wherever JavaScript inserts
 * one, annotated from the syntax tree. A program acorn cannot parse gets its plain tokens, without
 * annotations; text it cannot even tokenize ends the list as one opaque token. Never throws.
 */
export function tokenize(src: string): Token[] {
  const raw: AcornToken[] = [];
  let tree: AnyNode;
  try {
    tree = parse(src, { ...OPTIONS, onToken: raw }) as AnyNode;
  } catch {
    return tokensOnly(src);
  }
  const tokens = raw.filter((t) => t.type !== tokTypes.eof).map((t) => fromAcorn(src, t));
  return annotate(tree, tokens);
}

function tokensOnly(src: string): Token[] {
  const out: Token[] = [];
  let end = 0;
  try {
    for (const t of tokenizer(src, OPTIONS)) {
      out.push(fromAcorn(src, t));
      end = t.end;
    }
  } catch {
    const rest = src.slice(end).trim();
    if (rest) out.push({ kind: 'str', text: rest, at: src.indexOf(rest, end), end: src.length });
  }
  return out;
}

function fromAcorn(src: string, t: AcornToken): Token {
  const type = t.type;
  const kind: TokKind =
    type === tokTypes.name || type === tokTypes.privateId || type.keyword !== undefined
      ? 'id'
      : type === tokTypes.num
        ? 'num'
        : type === tokTypes.string
          ? 'str'
          : type === tokTypes.regexp
            ? 'regex'
            : type === tokTypes.template || type === tokTypes.invalidTemplate
              ? 'template'
              : 'punct';
  return { kind, text: src.slice(t.start, t.end), at: t.start, end: t.end };
}

/** Visits every node of the tree with its parent. */
function walk(node: AnyNode, parent: AnyNode | null, visit: (node: AnyNode, parent: AnyNode | null) => void): void {
  visit(node, parent);
  for (const value of Object.values(node)) {
    for (const child of Array.isArray(value) ? value : [value]) {
      if (isNode(child)) walk(child, node, visit);
    }
  }
}

const isNode = (v: unknown): v is AnyNode =>
  typeof v === 'object' && v !== null && typeof (v as Node).type === 'string';

/** The names a binding pattern declares. */
function declaredBy(p: Pattern | null | undefined): string[] {
  if (!p) return [];
  switch (p.type) {
    case 'Identifier':
      return [p.name];
    case 'ObjectPattern':
      return p.properties.flatMap((q) => declaredBy(q.type === 'RestElement' ? q.argument : q.value));
    case 'ArrayPattern':
      return p.elements.flatMap(declaredBy);
    case 'RestElement':
      return declaredBy(p.argument);
    case 'AssignmentPattern':
      return declaredBy(p.left);
    default:
      return [];
  }
}

/** Whether an identifier is a property name, an object key or a meta-property rather than a variable. */
function namesNoVariable(id: AnyNode, parent: AnyNode | null): boolean {
  switch (parent?.type) {
    case 'MemberExpression':
      return parent.property === id && !parent.computed;
    case 'Property':
    case 'MethodDefinition':
    case 'PropertyDefinition':
      return parent.key === id && !parent.computed;
    case 'MetaProperty':
      return true;
    default:
      return false;
  }
}

// Statements whose grammar ends in `;` (the only places JavaScript inserts one).
const ENDS_IN_SEMICOLON = new Set([
  'ExpressionStatement',
  'VariableDeclaration',
  'ReturnStatement',
  'ThrowStatement',
  'BreakStatement',
  'ContinueStatement',
  'DoWhileStatement',
  'DebuggerStatement',
  'PropertyDefinition',
]);

function annotate(tree: AnyNode, tokens: Token[]): Token[] {
  const byStart = new Map(tokens.map((t) => [t.at, t]));
  const byEnd = new Map(tokens.map((t) => [t.end, t]));
  const declared = new Set<string>();
  const inserted = new Set<number>();
  const mark = (at: number, flag: 'ref' | 'shorthand' | 'empty'): void => {
    const t = byStart.get(at);
    if (t) t[flag] = true;
  };
  walk(tree, null, (node, parent) => {
    switch (node.type) {
      case 'Identifier':
        if (!namesNoVariable(node, parent)) mark(node.start, 'ref');
        else if (parent?.type === 'Property' && parent.shorthand) mark(node.start, 'shorthand');
        break;
      case 'VariableDeclarator':
        declaredBy(node.id).forEach((n) => declared.add(n));
        break;
      case 'FunctionDeclaration':
      case 'FunctionExpression':
      case 'ArrowFunctionExpression':
        [node.id ?? null, ...node.params].flatMap(declaredBy).forEach((n) => declared.add(n));
        break;
      case 'ClassDeclaration':
      case 'ClassExpression':
        if (node.id) declared.add(node.id.name);
        break;
      case 'CatchClause':
        declaredBy(node.param).forEach((n) => declared.add(n));
        break;
      case 'LabeledStatement':
        declared.add(node.label.name);
        break;
      case 'BinaryExpression':
      case 'LogicalExpression':
      case 'AssignmentExpression':
        {
          const op = operatorToken(tokens, node.left.end);
          if (op) op.operator = true;
        }
        break;
      case 'EmptyStatement':
        if (parent && ['Program', 'BlockStatement', 'StaticBlock', 'SwitchCase'].includes(parent.type))
          mark(node.start, 'empty');
        break;
    }
    const inForHead =
      parent?.type === 'ForStatement'
        ? parent.init === node
        : (parent?.type === 'ForInStatement' || parent?.type === 'ForOfStatement') && parent.left === node;
    if (ENDS_IN_SEMICOLON.has(node.type) && !inForHead && byEnd.get(node.end)?.text !== ';') inserted.add(node.end);
  });
  for (const t of tokens) if (t.ref && declared.has(t.text)) t.local = true;
  if (inserted.size === 0) return tokens;
  // An inserted `;` goes before the first token at or after the end of its statement (`{a}`: before `}`).
  const out: Token[] = [];
  const ends = [...inserted].sort((a, b) => a - b);
  let k = 0;
  for (const t of tokens) {
    while (k < ends.length && ends[k]! <= t.at) out.push(semicolonAt(ends[k++]!));
    out.push(t);
  }
  while (k < ends.length) out.push(semicolonAt(ends[k++]!));
  return out;
}

const semicolonAt = (at: number): Token => ({ kind: 'punct', text: ';', at, end: at });

/** The operator token after the left operand: the first token there that is not a closing parenthesis. */
function operatorToken(tokens: Token[], leftEnd: number): Token | undefined {
  let lo = 0;
  let hi = tokens.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (tokens[mid]!.at < leftEnd) lo = mid + 1;
    else hi = mid;
  }
  while (tokens[lo]?.text === ')') lo++;
  return tokens[lo];
}

/** The tokens that carry meaning: no empty statements, no `;` directly before `}`. */
function significant(toks: Token[]): Token[] {
  const kept = toks.filter((t) => !t.empty);
  return kept.filter(
    (t, i) => !(t.kind === 'punct' && t.text === ';' && kept[i + 1]?.kind === 'punct' && kept[i + 1]!.text === '}'),
  );
}

/**
 * The canonical token string: the program's own variables renamed v0, v1, … in order of first
 * appearance (globals such as `Math` keep their names), tokens one space apart, template text
 * quoted so that it cannot run into the tokens around it.
 */
export function canonicalForm(program: string): string {
  const names = new Map<string, string>();
  return significant(tokenize(program))
    .map((t) => {
      if (t.kind === 'template') return JSON.stringify(t.text);
      if (!t.local) return t.text;
      let v = names.get(t.text);
      if (!v) names.set(t.text, (v = `v${names.size}`));
      return t.shorthand ? `${t.text} : ${v}` : v;
    })
    .join(' ');
}

/** Canonical hash of a program: 16 hex digits of SHA-256 over the canonical form. */
export function canonicalHash(program: string): string {
  let hash = hashes.get(program);
  if (hash === undefined) {
    hash = createHash('sha256').update(canonicalForm(program)).digest('hex').slice(0, 16);
    if (hashes.size >= MEMO_SIZE) hashes.clear();
    hashes.set(program, hash);
  }
  return hash;
}

// An exhausted level-0 arm draws the same few thousand programs again and again, 20 drafts a pick,
// and tokenizing each for its hash was a tenth of a 128-task step. A Map cleared when full bounds
// the memory without an LRU dependency: a miss only costs the hash again.
const MEMO_SIZE = 50_000;
const hashes = new Map<string, string>();

const WORDISH = /[\w$]/;

/** Joins tokens with as few spaces as keep them apart (tokens adjacent in the source stay so). */
function joinTokens(toks: Token[]): string {
  let out = '';
  let prev: Token | undefined;
  for (const t of toks) {
    const last = out[out.length - 1] ?? '';
    const first = t.text[0] ?? '';
    const needSpace =
      prev !== undefined &&
      prev.end !== t.at &&
      ((WORDISH.test(last) && WORDISH.test(first)) ||
        (prev.kind === 'regex' && WORDISH.test(first)) ||
        (prev.kind === 'num' && /^\d+$/.test(prev.text) && first === '.') ||
        ((last === '+' || last === '-') && first === last) ||
        (last === '/' && (first === '/' || first === '*')) ||
        (last === '<' && first === '!') ||
        (last === '.' && /[0-9]/.test(first)));
    out += (needSpace ? ' ' : '') + t.text;
    prev = t;
  }
  return out;
}

/** The whitespace-free source text of a program (a `;` wherever one was inserted automatically). */
export function minify(program: string): string {
  return joinTokens(significant(tokenize(program)));
}

const OPENERS = new Set(['(', '[', '{', '${']);
const CLOSERS = new Set([')', ']', '}']);

/** Index of the bracket that closes the one at `open` (`${` closes with `}`), or -1. */
function matching(toks: Token[], open: number): number {
  let depth = 0;
  for (let i = open; i < toks.length; i++) {
    if (toks[i]!.kind !== 'punct') continue;
    if (OPENERS.has(toks[i]!.text)) depth++;
    else if (CLOSERS.has(toks[i]!.text) && --depth === 0) return i;
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
  const toks = significant(tokenize(program));
  const fallback = joinTokens(toks);
  if (toks.length < 6 || toks[0]!.text !== 'function' || toks[1]!.text !== 'f' || toks[2]!.text !== '(')
    return fallback;
  const pClose = matching(toks, 2);
  if (pClose < 0 || toks[pClose + 1]?.text !== '{') return fallback;
  const bClose = matching(toks, pClose + 1);
  if (bClose !== toks.length - 1) return fallback;
  const params = toks.slice(3, pClose);
  const body = toks.slice(pClose + 2, bClose);
  if (body.some((t) => t.ref && t.text === 'f')) return fallback;
  const simpleParam = params.length === 1 && params[0]!.kind === 'id';
  const head = simpleParam ? params[0]!.text : `(${joinTokens(params)})`;
  // A lone `return EXPR;` becomes an expression body.
  let expr = body;
  const isSemicolon = (t: Token | undefined): boolean => t?.kind === 'punct' && t.text === ';';
  if (isSemicolon(expr[expr.length - 1])) expr = expr.slice(0, -1);
  if (expr[0]?.text === 'return' && !expr.slice(1).some((t, i) => isSemicolon(t) && depthAt(expr, i + 1) === 0)) {
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
    if (toks[i]!.kind !== 'punct') continue;
    if (OPENERS.has(toks[i]!.text)) d++;
    else if (CLOSERS.has(toks[i]!.text)) d--;
  }
  return d;
}
