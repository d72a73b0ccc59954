// A family's difficulty levels, declared once as data: the family's code reads its table, and the
// knobs text (`cogen skills --taxonomy`) is derived from the same table here, so the two cannot drift.
import { createRng, type Rng } from '../core/rng.js';
import { printExpr, v, type Production } from './grammar/index.js';
import { describeInputs, type Ranges } from './inputs.js';

export { ranges, type Ranges } from './inputs.js';

/**
 * A count or a depth: a number is fixed; a pair [lo, hi] is a range drawn per candidate. drawSpan
 * draws it with rng.int, even when lo = hi: a draw moves the random stream, so which of the two a
 * family writes is part of its programs. (A family may draw a range its own way, e.g. one optional
 * parameter on a coin; its table says so.)
 */
export type Span = number | readonly [number, number];

export function drawSpan(rng: Rng, s: Span): number {
  return typeof s === 'number' ? s : rng.int(s[0], s[1]);
}

/** What one kind of generated expression in a level is made of (the sampler's options). */
export interface ExprSpec {
  ops: Production[];
  /** The types it may have (one is drawn per candidate; a repeated type is drawn more often). */
  returns?: readonly string[];
  /** Nesting depth, where the family generates this expression at one depth. */
  depth?: Span;
  /** Chance that an inner hole becomes a leaf even when depth remains. */
  leaf?: number;
  /** Range of integer literals. */
  ints?: readonly [number, number];
  /** Words for string literals. */
  words?: readonly string[];
}

/** One level of a family. */
export interface Level {
  /** What the program looks like, for shapes the family builds by hand (loops, recursion, …). */
  shape?: string;
  /** How many parameters of each input type (`int`, `nat`, `bool`, `str`, `int[]`, `rec`, …); 0 for none. */
  params: Readonly<Partial<Record<string, Span>>>;
  /** The generated expressions, by role (`body`, `guard`, `key`, …). */
  exprs?: Readonly<Partial<Record<string, ExprSpec>>>;
  inputs: Ranges;
  /** How many of a repeated part of the shape (guarded updates, statements, …). */
  counts?: Readonly<Partial<Record<string, Span>>>;
  /** Other shapes of the same level (a candidate is one of them or the level's own). */
  or?: readonly Level[];
}

/** One line per level naming its knobs: shape, parameters, generated expressions, inputs. */
export function describeLevels(family: string, levels: readonly Level[]): string[] {
  let before = new Map<string, ExprSpec>();
  return levels.map((level) => {
    // Each expression is named in full where it first appears, and as a change after that.
    const now = new Map<string, ExprSpec>();
    const text = [level, ...(level.or ?? [])]
      .map((shape) => {
        const line = describeShape(family, shape, new Map([...before, ...now]));
        for (const [role, e] of present(shape.exprs)) if (!now.has(role)) now.set(role, e);
        return line;
      })
      .join(' | or: ');
    before = new Map([...before, ...now]);
    return text;
  });
}

function describeShape(family: string, level: Level, before: Map<string, ExprSpec>): string {
  const parts: string[] = [];
  if (level.shape) parts.push(level.shape);
  parts.push(describeParams(level.params));
  for (const [name, s] of present(level.counts)) parts.push(`${span(s)} ${name}`);
  for (const [role, e] of present(level.exprs)) parts.push(describeExpr(family, role, e, before.get(role)));
  const inputs = describeInputs(
    present(level.params).flatMap(([type, s]) => (most(s) > 0 ? [type] : [])),
    level.inputs,
  );
  if (inputs) parts.push(inputs);
  return parts.join('; ');
}

/** The entries of a table whose values are set. */
function present<T>(table: Readonly<Partial<Record<string, T>>> | undefined): [string, T][] {
  return Object.entries(table ?? {}).filter((e): e is [string, T] => e[1] !== undefined);
}

const span = (s: Span): string =>
  typeof s === 'number' ? String(s) : s[0] === s[1] ? String(s[0]) : `${s[0]}-${s[1]}`;
const most = (s: Span): number => (typeof s === 'number' ? s : s[1]);

function describeParams(params: Level['params']): string {
  const entries = present(params).filter(([, s]) => most(s) > 0);
  const total = entries.reduce((n, [, s]) => n + most(s), 0);
  return `${entries.map(([type, s]) => `${span(s)} ${type}`).join(' + ')} param${total === 1 ? '' : 's'}`;
}

/** `role of depth d over ops`, the ops named in full at first and as a change from the level below after. */
function describeExpr(family: string, role: string, e: ExprSpec, below: ExprSpec | undefined): string {
  const returns = e.returns ? ` (${[...new Set(e.returns)].join(' or ')})` : '';
  const depth = e.depth === undefined ? '' : ` of depth ${span(e.depth)}`;
  if (!below) return `${role}${returns}${depth} over ${describeOps(family, e.ops)}`;
  const added = e.ops.filter((p) => !below.ops.includes(p));
  const dropped = below.ops.filter((p) => !e.ops.includes(p));
  const change = [
    added.length > 0 ? `adds ${describeOps(family, added)}` : '',
    dropped.length > 0 ? `drops ${describeOps(family, dropped)}` : '',
  ].filter(Boolean);
  return `${role}${returns}${depth}${change.length > 0 ? `, ${change.join(', ')}` : ', same ops'}`;
}

/** Productions as the code they build (`a + b`, `xs.map(g)`), each run of another family's tagged with it. */
function describeOps(family: string, ops: readonly Production[]): string {
  const out: string[] = [];
  let run: string[] = [];
  let runFamily = '';
  const flush = (): void => {
    if (run.length > 0) out.push(run.join(', ') + (runFamily === family ? '' : ` (${runFamily})`));
    run = [];
  };
  for (const p of ops) {
    const owner = p.skill.slice(0, p.skill.indexOf('.'));
    if (owner !== runFamily) flush();
    runFamily = owner;
    run.push(label(p));
  }
  flush();
  return out.join(', ');
}

/** Placeholder names for a production's arguments, by type. */
const PLACEHOLDERS: Record<string, string[]> = {
  int: ['a', 'b', 'c'],
  bool: ['p', 'q', 'r'],
  str: ['s', 't', 'u'],
  'int[]': ['xs', 'ys'],
  rec: ['o'],
  k: ['k'],
  sh: ['k'],
  n3: ['k'],
  ch: ['c', 'd'],
  'int=>int': ['g'],
  'int=>bool': ['pred'],
  'int,int=>int': ['g'],
};

/** A stand-in for the rng a production may draw a literal with: the lowest value, always. */
const LOWEST: Rng = { ...createRng(0), int: (lo: number) => lo };

const LABELS = new WeakMap<Production, string>();

function label(p: Production): string {
  let text = LABELS.get(p);
  if (text === undefined) {
    const used: Record<string, number> = {};
    const args = p.args.map((ty) => {
      const i = used[ty] ?? 0;
      used[ty] = i + 1;
      return v(PLACEHOLDERS[ty]?.[i] ?? ty);
    });
    LABELS.set(p, (text = printExpr(p.build(args, LOWEST))));
  }
  return text;
}
