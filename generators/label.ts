// A code program's level and skills, read from the program itself: a mutated or proposed child is
// labelled by what it is, not by the arm its parent came from. acorn parses the program, and its
// expressions are matched against the grammar's productions: each production is built with
// placeholder leaves, printed with the grammar's printer and parsed by acorn too, so that a template
// and a program differ only where a placeholder stands (parentheses are gone from both). The level
// is the lowest of the family whose table admits what was matched (levels.ts, ladder.ts).
import { parse, parseExpressionAt } from 'acorn';
import { createRng, type Rng } from '../core/rng.js';
import type { Input, Json } from '../core/task.js';
import { let_, lit, printExpr, ret, v, WORDS, type Expr, type Node, type Production } from './grammar/index.js';
import { TOP } from './growth.js';
import type { Ladder } from './ladder.js';
import type { ExprSpec, Level, Span } from './levels.js';
import { LADDER as ARITH, arithDerivedSkills } from './families/arith.js';
import { LADDER as LOGIC, logicDerivedSkills } from './families/logic.js';
import { LADDER as BITS } from './families/bits.js';
import { LADDER as STR } from './families/string.js';

export interface ProgramLabel {
  /** The lowest level of the family whose table admits the program; null when none does (see `why`). */
  level: number | null;
  /** The skills of the productions it uses and those its family derives from the whole body, sorted. */
  skills: string[];
  why?: string;
}

/** What labelling needs of a family: its levels, what its body returns (where a table does not say), its derived skills. */
interface Labelled {
  ladder: Ladder<readonly Level[]>;
  returns: readonly string[];
  derived?: (body: readonly Node[], skills: ReadonlySet<string>) => string[];
}

// The families whose levels are expression tables: one body of productions, maybe after a chain of
// definitions. The others build their programs as shapes by hand (if-chains, loops, recursion,
// lambdas), which no table describes closely enough to check.
const FAMILIES: Readonly<Record<string, Labelled>> = {
  arith: { ladder: ARITH, returns: ['int'], derived: arithDerivedSkills },
  logic: { ladder: LOGIC, returns: ['bool'], derived: logicDerivedSkills },
  bits: { ladder: BITS, returns: ['int'] },
  str: { ladder: STR, returns: [] }, // each of its tables names what its body returns
};

/** How many grown levels above the tables are searched (inputs widen, definitions lengthen there). */
const ABOVE = 16;

/** The level and skills of a code program of `family`, read from the program itself. */
export function labelProgram(family: string, program: string, inputs: readonly Input[]): ProgramLabel {
  const fam = FAMILIES[family];
  if (!fam) return unlabelled(`family '${family}' is not labelled: its levels are not expression tables`);
  const r = read(program);
  if (typeof r === 'string') return unlabelled(`the program is not an expression program: ${r}`);
  const types = paramTypes(r.params, inputs);
  if (typeof types === 'string') return unlabelled(types);
  const last = Math.min(TOP + ABOVE, fam.ladder.last ?? Infinity);
  let why = '';
  for (let d = 0; d <= last; d++) {
    const table = fam.ladder.at(d);
    for (const level of [table, ...(table.or ?? [])]) {
      const got = admit(fam, level, r, types, inputs);
      if (typeof got !== 'string') return { level: d, skills: got };
      why = `level ${d}: ${got}`;
    }
  }
  return {
    level: null,
    skills: anySkills(fam, r, types),
    why: `no level of ${family} up to ${last} admits it (${why})`,
  };
}

const unlabelled = (why: string): ProgramLabel => ({ level: null, skills: [], why });

// ---- the program as acorn reads it

/** An acorn node, read loosely: its fields vary by type. */
type AN = { type: string } & Record<string, any>;

interface Read {
  params: string[];
  /** `const name = init;` before the return, in order (the chain of the grown levels). */
  defs: { name: string; init: AN }[];
  result: AN;
  /** The names the body reads. */
  read: Set<string>;
}

function read(program: string): Read | string {
  let ast: AN;
  try {
    ast = parse(program, { ecmaVersion: 'latest' }) as unknown as AN;
  } catch (e) {
    return `it does not parse (${(e as Error).message})`;
  }
  const fn = ast.body[0] as AN | undefined;
  if (ast.body.length !== 1 || fn?.type !== 'FunctionDeclaration' || fn.id?.name !== 'f')
    return 'it is not one function f';
  if (!(fn.params as AN[]).every((p) => p.type === 'Identifier')) return 'a parameter is not a plain name';
  const stmts = fn.body.body as AN[];
  const last = stmts.at(-1);
  if (last?.type !== 'ReturnStatement' || !last.argument) return 'it does not end in a return';
  const defs: Read['defs'] = [];
  for (const s of stmts.slice(0, -1)) {
    const d = s.declarations?.[0] as AN | undefined;
    if (s.type !== 'VariableDeclaration' || s.kind !== 'const' || s.declarations.length !== 1 || !d?.init)
      return 'a statement other than const definitions before its return';
    if (d.id.type !== 'Identifier') return 'a definition is not of a plain name';
    defs.push({ name: d.id.name as string, init: d.init as AN });
  }
  const names = new Set<string>();
  walk(fn.body as AN, (n) => {
    if (n.type === 'Identifier') names.add(n.name as string);
  });
  return { params: (fn.params as AN[]).map((p) => p.name as string), defs, result: last.argument as AN, read: names };
}

/** Visits every node under `n` but a non-computed property's name (`.length` reads no variable). */
function walk(n: AN, visit: (n: AN) => void): void {
  visit(n);
  for (const [key, x] of Object.entries(n)) {
    if (key === 'property' && n.type === 'MemberExpression' && !n.computed) continue;
    for (const c of Array.isArray(x) ? x : [x]) if (c && typeof c === 'object' && 'type' in c) walk(c as AN, visit);
  }
}

/** The grammar type of each parameter, from the values the task passes it. */
function paramTypes(params: readonly string[], inputs: readonly Input[]): string[] | string {
  if (inputs.length === 0) return 'no inputs to read the parameter types from';
  if (inputs.some((input) => input.length !== params.length)) return 'an input does not match the parameters';
  const types = params.map((_, i) => typeOf(inputs[0]![i]));
  const bad = types.indexOf(null);
  return bad < 0 ? (types as string[]) : `parameter ${params[bad]} takes a value no expression table draws`;
}

function typeOf(x: Json | undefined): string | null {
  if (typeof x === 'number') return Number.isInteger(x) ? 'int' : null;
  return typeof x === 'boolean' ? 'bool' : typeof x === 'string' ? 'str' : null;
}

// ---- one level's table against the program

const most = (s: Span | undefined): number => (s === undefined ? 0 : typeof s === 'number' ? s : s[1]);
const least = (s: Span | undefined): number => (s === undefined ? 0 : typeof s === 'number' ? s : s[0]);

/** The key a table counts an input type under: integer parameters are `nat` in tables that draw naturals. */
const tableType = (level: Level, ty: string): string =>
  ty === 'int' && most(level.params.int) === 0 && most(level.params.nat) > 0 ? 'nat' : ty;

/** The program's skills when `level` admits it, else why not. */
function admit(fam: Labelled, level: Level, r: Read, types: string[], inputs: readonly Input[]): string[] | string {
  const roles = Object.keys(level.exprs ?? {});
  if (roles.join() !== 'body') return `its expressions (${roles.join(', ') || 'none'}) are not one body`;
  // The one shape checked: the chain of definitions of the grown levels (kit.ts, `chain`).
  if (level.shape && Object.keys(level.counts ?? {}).join() !== 'definitions')
    return `its shape is built by hand (${level.shape})`;
  const why = paramsFit(level, r, types) ?? inputsFit(level, types, inputs);
  if (why) return why;
  const defs = level.counts?.definitions ?? 0;
  if (r.defs.length < least(defs) || r.defs.length > most(defs)) return `${r.defs.length} definitions`;
  return parseBody(fam, level.exprs!.body!, r, types);
}

/**
 * Parameter counts per type within the table's spans; a count below a span passes when every
 * parameter is read, since the kit drops the parameters a body does not read (grammar `trimParams`).
 */
function paramsFit(level: Level, r: Read, types: string[]): string | null {
  const allRead = r.params.every((p) => r.read.has(p));
  const counts = new Map<string, number>(Object.keys(level.params).map((k) => [k, 0]));
  for (const ty of types) counts.set(tableType(level, ty), (counts.get(tableType(level, ty)) ?? 0) + 1);
  for (const [ty, n] of counts) {
    const span = level.params[ty];
    if (n > most(span) || (n < least(span) && !allRead)) return `${n} ${ty} parameters`;
  }
  return null;
}

/** Every input value within the table's ranges. */
function inputsFit(level: Level, types: string[], inputs: readonly Input[]): string | null {
  const { int, strLen, letters } = level.inputs;
  const nat = [Math.max(0, int[0]), Math.max(0, int[1])] as const;
  const within = (x: number, [lo, hi]: readonly [number, number]): boolean => x >= lo && x <= hi;
  for (const input of inputs)
    for (const [i, x] of input.entries()) {
      const ty = tableType(level, types[i]!);
      if (typeof x === 'number' && !within(x, ty === 'nat' ? nat : int)) return `input ${x} is outside its range`;
      if (typeof x === 'string' && (!within(x.length, strLen) || [...x].some((c) => !letters.includes(c))))
        return `input ${JSON.stringify(x)} is outside its strings`;
    }
  return null;
}

/** The skills of the body parsed under `spec` (its ops, literals and depth), or why it does not parse. */
function parseBody(fam: Labelled, spec: ExprSpec, r: Read, types: string[]): string[] | string {
  const body = parseAs(fam, spec, r, types, { ints: spec.ints ?? [0, 9], words: spec.words ?? WORDS });
  if (typeof body === 'string') return body;
  return body.depth > most(spec.depth ?? Infinity) ? `its depth ${body.depth} is past the table's` : body.skills;
}

// ---- matching expressions against productions

interface Template {
  p: Production;
  node: AN;
  size: number;
}

/** A stand-in for the rng a production may draw a literal with: the lowest value, always. */
const LOWEST: Rng = { ...createRng(0), int: (lo: number) => lo };

const TEMPLATES = new WeakMap<readonly Production[], Template[]>();

/** The productions as acorn trees with `$i` for argument i, larger first (a larger match says more). */
function templates(ops: readonly Production[]): Template[] {
  let out = TEMPLATES.get(ops);
  if (!out) {
    out = [...new Set(ops)].map(template).sort((a, b) => b.size - a.size);
    TEMPLATES.set(ops, out);
  }
  return out;
}

function template(p: Production): Template {
  const placeholders = p.args.map((_, i) => v(`$${i}`));
  const text = printExpr(p.build(placeholders, LOWEST));
  const node = parseExpressionAt(text, 0, { ecmaVersion: 'latest' }) as unknown as AN;
  let size = 0;
  walk(node, () => size++);
  return { p, node, size };
}

/** Positions and raw text aside, `t` and `n` are the same tree; a placeholder binds what stands at it. */
function unify(t: unknown, n: unknown, holes: AN[]): boolean {
  if (Array.isArray(t)) return Array.isArray(n) && t.length === n.length && t.every((x, i) => unify(x, n[i], holes));
  if (t === null || typeof t !== 'object') return t === n;
  if (n === null || typeof n !== 'object') return false;
  const tn = t as AN;
  if (tn.type === 'Identifier' && (tn.name as string).startsWith('$')) {
    holes[Number((tn.name as string).slice(1))] = n as AN;
    return true;
  }
  for (const key of Object.keys(tn)) if (!IGNORED.has(key) && !unify(tn[key], (n as AN)[key], holes)) return false;
  return true;
}

const IGNORED = new Set(['start', 'end', 'loc', 'range', 'raw']);

/** One expression matched: the grammar tree it is, its depth in productions, and the productions it uses. */
interface Parsed {
  expr: Expr;
  depth: number;
  used: Production[];
}

interface Env {
  templates: Template[];
  scope: Map<string, string>;
  ints: readonly [number, number];
  /** The words of string literals; null for any. */
  words: readonly string[] | null;
  memo: Map<AN, Map<string, Parsed | null>>;
}

/** `n` as an expression of type `ty`: a leaf, or the production of least depth that matches it. */
function parseNode(n: AN, ty: string, env: Env): Parsed | null {
  let byType = env.memo.get(n);
  if (!byType) env.memo.set(n, (byType = new Map()));
  if (byType.has(ty)) return byType.get(ty)!;
  const leaf = leafOf(n, ty, env);
  let best: Parsed | null = leaf ? { expr: leaf, depth: 0, used: [] } : null;
  for (const { p, node } of leaf ? [] : env.templates) {
    const holes: AN[] = [];
    if (p.out !== ty || !unify(node, n, holes)) continue;
    const args = p.args.map((a, i) => (holes[i] ? parseNode(holes[i], a, env) : null));
    if (args.some((a) => a === null)) continue;
    const ok = args as Parsed[];
    let depth = 1 + Math.max(0, ...ok.map((a) => a.depth));
    // With no boolean variable in scope the sampler grows a comparison where a boolean leaf would
    // go, one production past the depth it was given (grammar/sample.ts, gen1).
    const flat = ty === 'bool' && !p.args.includes('bool') && ![...env.scope.values()].includes('bool');
    if (flat && depth === 1) depth = 0;
    if (best && best.depth <= depth) continue;
    const exprs = ok.map((a) => a.expr);
    best = { expr: p.build(exprs, LOWEST), depth, used: [p, ...ok.flatMap((a) => a.used)] };
  }
  byType.set(ty, best);
  return best;
}

/**
 * A variable of the type in scope, or a literal a leaf of that type may be: an int within the
 * level's literals, a word for a string; the literal-only argument types (`k`, `sh`, `n3`, `ch`)
 * match any integer or one letter, their ranges being the sampler's own.
 */
function leafOf(n: AN, ty: string, env: Env): Expr | null {
  if (n.type === 'Identifier') return env.scope.get(n.name as string) === ty ? v(n.name as string) : null;
  if (n.type !== 'Literal') return null;
  const x = n.value as unknown;
  const int = typeof x === 'number' && Number.isInteger(x);
  const fits =
    ty === 'int'
      ? int && x >= env.ints[0] && x <= env.ints[1]
      : ty === 'k' || ty === 'sh' || ty === 'n3'
        ? int
        : ty === 'bool'
          ? typeof x === 'boolean'
          : ty === 'str'
            ? typeof x === 'string' && (env.words === null || env.words.includes(x))
            : ty === 'ch' && typeof x === 'string' && x.length === 1;
  return fits ? lit(x as Json) : null;
}

/** The whole body parsed as one of the types it may return: its skills and depth, or why it does not parse. */
function parseAs(
  fam: Labelled,
  spec: Pick<ExprSpec, 'ops' | 'returns'>,
  r: Read,
  types: string[],
  leaves: Pick<Env, 'ints' | 'words'>,
): { skills: string[]; depth: number } | string {
  for (const ty of new Set(spec.returns ?? fam.returns)) {
    const env: Env = { templates: templates(spec.ops), scope: new Map(), memo: new Map(), ...leaves };
    r.params.forEach((p, i) => env.scope.set(p, types[i]!));
    const defs: Parsed[] = [];
    for (const d of r.defs) {
      const got = parseNode(d.init, ty, env);
      if (!got) break;
      defs.push(got);
      env.scope.set(d.name, ty);
    }
    const result = defs.length === r.defs.length ? parseNode(r.result, ty, env) : null;
    if (!result) continue;
    const all = [...defs, result];
    const skills = new Set(all.flatMap((x) => x.used.map((p) => p.skill)));
    const body = [...r.defs.map((d, i) => let_(d.name, defs[i]!.expr, true)), ret(result.expr)];
    for (const s of fam.derived?.(body, skills) ?? []) skills.add(s);
    return { skills: [...skills].sort(), depth: Math.max(...all.map((x) => x.depth)) };
  }
  return 'its body is not made of its productions and literals';
}

/** The skills of a program no level admits: its body parsed with every production of the family, any literal. */
function anySkills(fam: Labelled, r: Read, types: string[]): string[] {
  const specs = fam.ladder.tables.flatMap((t) => [t, ...(t.or ?? [])]).flatMap((t) => Object.values(t.exprs ?? {}));
  const ops = [...new Set(specs.flatMap((s) => s?.ops ?? []))];
  const returns = [...new Set(specs.flatMap((s) => s?.returns ?? fam.returns))];
  const got = parseAs(fam, { ops, returns }, r, types, { ints: [-Infinity, Infinity], words: null });
  return typeof got === 'string' ? [] : got.skills;
}
