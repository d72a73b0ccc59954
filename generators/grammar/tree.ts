// The syntax tree of the small pure subset of JavaScript every family writes programs in, its
// constructors, and one generic walker (`children`) that the measures and searches below share.
import type { Json } from '../../core/task.js';

/**
 * Value types of the grammar. `rec` is a record {x:int, y:int, name:str, ok:bool}; lambda types
 * are written `int=>int`, `int,int=>int`, `int=>bool`, … Pseudo-types for literal-only arguments:
 * `k` (positive divisor 2–9), `sh` (shift amount 1–3), `n3` (small count 1–3), `ch` (one letter).
 */
export type Ty = string;

export type BinOp =
  '+' | '-' | '*' | '/' | '%' | '<' | '<=' | '>' | '>=' | '===' | '!==' | '&&' | '||' | '&' | '|' | '^' | '<<' | '>>';

export type UnOp = '!' | '-' | '~';
export type AssignOp = '=' | '+=' | '-=' | '*=' | '++';

export type Expr =
  | { kind: 'lit'; value: Json }
  | { kind: 'var'; name: string }
  | { kind: 'bin'; op: BinOp; left: Expr; right: Expr }
  | { kind: 'un'; op: UnOp; arg: Expr }
  | { kind: 'cond'; test: Expr; consequent: Expr; alternate: Expr }
  /** A call of a global (Math.abs, String, Object.keys, …), of `f` itself, or of a local function. */
  | { kind: 'call'; callee: string; args: Expr[] }
  | { kind: 'meth'; object: Expr; method: string; args: Expr[] }
  | { kind: 'prop'; object: Expr; name: string }
  | { kind: 'idx'; object: Expr; index: Expr }
  | { kind: 'arr'; items: Expr[] }
  /** Object literal; a field whose key is null is a spread `...e`. */
  | { kind: 'obj'; fields: [string | null, Expr][] }
  | { kind: 'fn'; params: string[]; body: Expr }
  /** A call of a computed function: `mk(3)(a)`, `compose(g, h)(a)`. */
  | { kind: 'apply'; callee: Expr; args: Expr[] }
  | { kind: 'spread'; arg: Expr };

export type Stmt =
  | { kind: 'let'; name: string; init: Expr; constant: boolean }
  | { kind: 'set'; name: string; op: AssignOp; value?: Expr }
  /** `name[index] = value` */
  | { kind: 'seti'; name: string; index: Expr; value: Expr }
  /** `for (let name = from; name < to; name++)` */
  | { kind: 'for'; name: string; from: Expr; to: Expr; body: Stmt[] }
  | { kind: 'forof'; name: string; iterable: Expr; body: Stmt[] }
  | { kind: 'while'; test: Expr; body: Stmt[] }
  | { kind: 'if'; test: Expr; consequent: Stmt[]; alternate?: Stmt[] }
  | { kind: 'ret'; value: Expr };

export type Node = Expr | Stmt;

export interface Param {
  name: string;
  type: Ty;
  /** A derived leaf (e.g. `o.x` for a record param): used in place of the bare name by `leaf`. */
  expr?: Expr;
}

export interface Prog {
  params: Param[];
  body: Stmt[];
}

// Small constructors keep family files readable.
export const lit = (value: Json): Expr => ({ kind: 'lit', value });
export const v = (name: string): Expr => ({ kind: 'var', name });
export const bin = (op: BinOp, left: Expr, right: Expr): Expr => ({ kind: 'bin', op, left, right });
export const un = (op: UnOp, arg: Expr): Expr => ({ kind: 'un', op, arg });
export const cond = (test: Expr, consequent: Expr, alternate: Expr): Expr => ({
  kind: 'cond',
  test,
  consequent,
  alternate,
});
export const call = (callee: string, ...args: Expr[]): Expr => ({ kind: 'call', callee, args });
export const meth = (object: Expr, method: string, ...args: Expr[]): Expr => ({ kind: 'meth', object, method, args });
export const prop = (object: Expr, name: string): Expr => ({ kind: 'prop', object, name });
export const idx = (object: Expr, index: Expr): Expr => ({ kind: 'idx', object, index });
export const arr = (items: Expr[]): Expr => ({ kind: 'arr', items });
export const obj = (fields: [string | null, Expr][]): Expr => ({ kind: 'obj', fields });
export const fn = (params: string[], body: Expr): Expr => ({ kind: 'fn', params, body });
export const apply = (callee: Expr, ...args: Expr[]): Expr => ({ kind: 'apply', callee, args });
export const spread = (arg: Expr): Expr => ({ kind: 'spread', arg });
export const ret = (value: Expr): Stmt => ({ kind: 'ret', value });
export const let_ = (name: string, init: Expr, constant = false): Stmt => ({ kind: 'let', name, init, constant });
export const set = (name: string, op: AssignOp, value?: Expr): Stmt =>
  value === undefined ? { kind: 'set', name, op } : { kind: 'set', name, op, value };
export const seti = (name: string, index: Expr, value: Expr): Stmt => ({ kind: 'seti', name, index, value });
export const for_ = (name: string, from: Expr, to: Expr, body: Stmt[]): Stmt => ({ kind: 'for', name, from, to, body });
export const forOf = (name: string, iterable: Expr, body: Stmt[]): Stmt => ({ kind: 'forof', name, iterable, body });
export const while_ = (test: Expr, body: Stmt[]): Stmt => ({ kind: 'while', test, body });
export const if_ = (test: Expr, consequent: Stmt[], alternate?: Stmt[]): Stmt =>
  alternate === undefined ? { kind: 'if', test, consequent } : { kind: 'if', test, consequent, alternate };

const NONE: readonly Node[] = [];

/** The direct sub-nodes of a node, in source order: the one walker every measure and search uses. */
export function children(node: Node): readonly Node[] {
  switch (node.kind) {
    case 'lit':
    case 'var':
      return NONE;
    case 'bin':
      return [node.left, node.right];
    case 'un':
    case 'spread':
      return [node.arg];
    case 'cond':
      return [node.test, node.consequent, node.alternate];
    case 'call':
      return node.args;
    case 'arr':
      return node.items;
    case 'meth':
      return [node.object, ...node.args];
    case 'prop':
      return [node.object];
    case 'idx':
      return [node.object, node.index];
    case 'obj':
      return node.fields.map(fieldValue);
    case 'fn':
      return [node.body];
    case 'apply':
      return [node.callee, ...node.args];
    case 'let':
      return [node.init];
    case 'set':
      return node.value ? [node.value] : NONE;
    case 'seti':
      return [node.index, node.value];
    case 'for':
      return [node.from, node.to, ...node.body];
    case 'forof':
      return [node.iterable, ...node.body];
    case 'while':
      return [node.test, ...node.body];
    case 'if':
      return node.alternate ? [node.test, ...node.consequent, ...node.alternate] : [node.test, ...node.consequent];
    case 'ret':
      return [node.value];
  }
}

function fieldValue(field: [string | null, Expr]): Expr {
  return field[1];
}

// The walkers below are top-level functions rather than arrows inside their callers: tsx
// (esbuild's keepNames) calls __name on every arrow bound to a name each time it is created, which
// costs more than these small walks themselves, once per candidate.

/** How many nodes within `roots` (and their descendants) satisfy `test`. */
export function countNodes(roots: readonly Node[], test: (n: Node) => boolean): number {
  let n = 0;
  for (const root of roots) {
    if (test(root)) n++;
    n += countNodes(children(root), test);
  }
  return n;
}

/** Whether some node within `roots` (or their descendants) satisfies `test`. */
export function someNode(roots: readonly Node[], test: (n: Node) => boolean): boolean {
  for (const root of roots) if (test(root) || someNode(children(root), test)) return true;
  return false;
}

/** Counts AST nodes of a program (a `return` counts only its value): the structural complexity measure. */
export function size(p: Prog): number {
  return sizeAll(p.body);
}

function sizeAll(nodes: readonly Node[]): number {
  let n = 0;
  for (const node of nodes) n += (node.kind === 'ret' ? 0 : 1) + sizeAll(children(node));
  return n;
}

/** Whether `e` reads one of the variables `names`. */
export function mentions(e: Node, names: readonly string[]): boolean {
  if (e.kind === 'var') return names.includes(e.name);
  for (const c of children(e)) if (mentions(c, names)) return true;
  return false;
}

/** Names of variables (and called functions) a program reads or assigns anywhere. */
export function usedNames(p: Prog): Set<string> {
  const out = new Set<string>();
  for (const s of p.body) addUsedNames(s, out);
  return out;
}

function addUsedNames(node: Node, out: Set<string>): void {
  if (node.kind === 'var' || node.kind === 'set' || node.kind === 'seti') out.add(node.name);
  else if (node.kind === 'call') out.add(node.callee);
  for (const c of children(node)) addUsedNames(c, out);
}

/** Drops parameters the body never mentions (not for recursive programs, whose calls are positional). */
export function trimParams(p: Prog): Prog {
  const used = usedNames(p);
  if (used.has('f')) return p;
  const params = p.params.filter((q) => used.has(q.name));
  return params.length === p.params.length || params.length === 0 ? p : { ...p, params };
}

/** `e` with every read of variable `name` replaced by `by` (the recursive call, the head of a list, …). */
export function substitute(e: Expr, name: string, by: Expr): Expr {
  switch (e.kind) {
    case 'var':
      return e.name === name ? by : e;
    case 'lit':
      return e;
    case 'bin':
      return { ...e, left: substitute(e.left, name, by), right: substitute(e.right, name, by) };
    case 'un':
    case 'spread':
      return { ...e, arg: substitute(e.arg, name, by) };
    case 'cond':
      return {
        ...e,
        test: substitute(e.test, name, by),
        consequent: substitute(e.consequent, name, by),
        alternate: substitute(e.alternate, name, by),
      };
    case 'call':
      return { ...e, args: substituteAll(e.args, name, by) };
    case 'apply':
      return { ...e, callee: substitute(e.callee, name, by), args: substituteAll(e.args, name, by) };
    case 'meth':
      return { ...e, object: substitute(e.object, name, by), args: substituteAll(e.args, name, by) };
    case 'prop':
      return { ...e, object: substitute(e.object, name, by) };
    case 'idx':
      return { ...e, object: substitute(e.object, name, by), index: substitute(e.index, name, by) };
    case 'arr':
      return { ...e, items: substituteAll(e.items, name, by) };
    case 'obj':
      return { ...e, fields: e.fields.map(([k, x]) => [k, substitute(x, name, by)] as [string | null, Expr]) };
    case 'fn':
      return { ...e, body: substitute(e.body, name, by) };
  }
}

function substituteAll(xs: Expr[], name: string, by: Expr): Expr[] {
  const out: Expr[] = new Array(xs.length);
  for (let i = 0; i < xs.length; i++) out[i] = substitute(xs[i]!, name, by);
  return out;
}

/**
 * Whether JSON.stringify(a) === JSON.stringify(b) for plain data such as trees, without printing
 * either: operands are compared at every node the sampler builds, and most differ within a node or two.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null)
    return JSON.stringify(a) === JSON.stringify(b);
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(inArray(a[i]), inArray(b[i]))) return false;
    return true;
  }
  const ka = printedKeys(a as Record<string, unknown>);
  const kb = printedKeys(b as Record<string, unknown>);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const k = ka[i]!;
    if (k !== kb[i] || !sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  }
  return true;
}

/** What JSON.stringify prints for an array element: undefined, functions and symbols print as null. */
const inArray = (x: unknown): unknown =>
  x === undefined || typeof x === 'function' || typeof x === 'symbol' ? null : x;

/** The keys JSON.stringify prints, in its order (it skips undefined, functions and symbols). */
function printedKeys(o: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const k of Object.keys(o)) {
    const x = o[k];
    if (x !== undefined && typeof x !== 'function' && typeof x !== 'symbol') out.push(k);
  }
  return out;
}
