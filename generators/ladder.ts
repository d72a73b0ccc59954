// A code family's levels at any d ≥ 0 (docs/levels.md): its tables for levels 0-4 (levels.ts), and
// above them the level-4 table with each knob grown by its rule (growth.ts). The family's code reads
// the table a level gets from here, so the grown table and its text come from one declaration.
import { grow, growthTerm, lastWithin, maxText, TOP, withinMax, type Rule } from './growth.js';
import type { Level, Span } from './levels.js';
import type { Ranges } from './inputs.js';
import { DEFAULT_BOUNDS, type ValueBounds } from './grammar/index.js';

/**
 * One knob of the level-4 table and its rule. `path` leads from the table to a number or a span
 * [lo, hi]: `shift` moves every number there by the rule, `upper` only the span's upper end, and
 * `widen` moves both ends outwards (lo falls as hi rises).
 */
export interface Knob {
  label: string;
  path: readonly (string | number)[];
  how: 'shift' | 'upper' | 'widen';
  rule: Rule;
}

/** The knobs a table has, by what they name (for the rules in the family files). */
export const knob = {
  /** The nesting depth of a generated expression. */
  depth: (role: string, rule: Rule, at: readonly (string | number)[] = []): Knob => ({
    label: `${role} depth`,
    path: [...at, 'exprs', role, 'depth'],
    how: 'shift',
    rule,
  }),
  /** The upper end of a generated expression's integer literals. */
  literals: (role: string, rule: Rule, at: readonly (string | number)[] = []): Knob => ({
    label: `${role} literals up to`,
    path: [...at, 'exprs', role, 'ints', 1],
    how: 'shift',
    rule,
  }),
  /** The range integer inputs are drawn from, both ends outwards (a range of naturals keeps its lower end). */
  ints: (rule: Rule, at: readonly (string | number)[] = [], how: 'widen' | 'upper' = 'widen'): Knob => ({
    label: 'int inputs',
    path: [...at, 'inputs', 'int'],
    how,
    rule,
  }),
  /** The longest array input. */
  arrays: (rule: Rule, at: readonly (string | number)[] = []): Knob => ({
    label: 'array lengths',
    path: [...at, 'inputs', 'len'],
    how: 'upper',
    rule,
  }),
  /** The longest string input. */
  strings: (rule: Rule, at: readonly (string | number)[] = []): Knob => ({
    label: 'string lengths',
    path: [...at, 'inputs', 'strLen'],
    how: 'upper',
    rule,
  }),
  /** How many keys a dictionary input may have. */
  keys: (rule: Rule): Knob => ({ label: 'dictionary keys', path: ['inputs', 'keys'], how: 'shift', rule }),
  /** How many parameters of a type. */
  params: (type: string, rule: Rule): Knob => ({ label: `${type} params`, path: ['params', type], how: 'shift', rule }),
  /** How many of a repeated part of the level's shape (its `counts`). */
  count: (name: string, rule: Rule, at: readonly (string | number)[] = []): Knob => ({
    label: name,
    path: [...at, 'counts', name],
    how: 'shift',
    rule,
  }),
};

type Last<T extends readonly unknown[]> = T extends readonly [...unknown[], infer L] ? L : T[number];

export interface Ladder<T extends readonly Level[]> {
  readonly tables: T;
  readonly knobs: readonly Knob[];
  /** The table of level d: the tabled one up to 4, the grown level-4 one above. */
  at(d: number): T[number];
  /** The level-4 table as level d (≥ 4) has it: what a family's top shape reads. */
  top(d: number): Last<T>;
  /** Value bounds of level d's inputs and outputs: the defaults, widened with the grown inputs. */
  bounds(d: number): ValueBounds;
  /** The last level every knob stays within its max (null: no knob has one). */
  readonly last: number | null;
  /** Why level d cannot be rendered (a knob past its max), or null. */
  refusal(d: number): string | null;
  /** One line per grown knob: its rule in d. */
  readonly rules: string[];
}

const numbers = (x: Span): number[] => (typeof x === 'number' ? [x] : [...x]);

function grownSpan(k: Knob, x: Span, d: number): Span {
  if (typeof x === 'number') return grow(x, k.rule, d);
  const [lo, hi] = x;
  if (k.how === 'upper') return [lo, grow(hi, k.rule, d)];
  if (k.how === 'widen') return [lo - (grow(hi, k.rule, d) - hi), grow(hi, k.rule, d)];
  return [grow(lo, k.rule, d), grow(hi, k.rule, d)];
}

/** A copy of `o` with the value at `path` replaced (the objects along the path copied, the rest shared). */
function setAt(o: unknown, path: readonly (string | number)[], f: (x: Span) => Span): unknown {
  if (path.length === 0) return f(o as Span);
  const [key, ...rest] = path;
  const copy = (Array.isArray(o) ? [...o] : { ...(o as object) }) as Record<string | number, unknown>;
  copy[key!] = setAt(copy[key!], rest, f);
  return copy;
}

function getAt(o: unknown, path: readonly (string | number)[]): Span {
  let x = o;
  for (const key of path) x = (x as Record<string | number, unknown>)[key];
  if (typeof x !== 'number' && !Array.isArray(x)) throw new Error(`ladder: no number at ${path.join('.')}`);
  return x as Span;
}

const spanText = (x: Span): string => (typeof x === 'number' ? String(x) : `${x[0]}-${x[1]}`);

function describeKnob(k: Knob, x: Span): string {
  const term = growthTerm(k.rule);
  const lowTerm = term.startsWith('+') ? `−${term.slice(1)}` : `+${term.slice(1)}`;
  if (typeof x === 'number') return `${k.label} ${x} ${term}${maxText(k.rule)}`;
  if (k.how === 'upper') return `${k.label} ${x[0]} to ${x[1]} ${term}${maxText(k.rule)}`;
  if (k.how === 'widen') return `${k.label} ${x[0]} ${lowTerm} to ${x[1]} ${term}${maxText(k.rule)}`;
  return `${k.label} ${spanText(x)} ${term}${maxText(k.rule)}`;
}

/** Bounds that let level d's inputs through: arrays and strings up to four times the longest input. */
function boundsFor(table: Level): ValueBounds {
  const ranges: Ranges[] = [table.inputs, ...(table.or ?? []).map((l) => l.inputs)];
  const longest = Math.max(...ranges.map((r) => Math.max(r.len[1], r.strLen[1])));
  const widest = Math.max(...ranges.map((r) => Math.max(Math.abs(r.int[0]), Math.abs(r.int[1]))));
  const keys = Math.max(...ranges.map((r) => r.keys ?? 0));
  return {
    maxLen: Math.max(DEFAULT_BOUNDS.maxLen, 4 * longest),
    maxAbs: Math.max(DEFAULT_BOUNDS.maxAbs, 1000 * widest),
    maxKeys: Math.max(16, keys),
  };
}

export function ladder<const T extends readonly Level[]>(tables: T, knobs: readonly Knob[]): Ladder<T> {
  if (tables.length !== TOP + 1) throw new Error(`ladder: a family tables levels 0-${TOP}, got ${tables.length}`);
  const top = tables[TOP]!;
  const grown = new Map<number, Level>();
  const at = (d: number): Level => {
    if (d <= TOP) return tables[d]!;
    let t = grown.get(d);
    if (!t) {
      t = knobs.reduce<Level>((table, k) => setAt(table, k.path, (x) => grownSpan(k, x, d)) as Level, top);
      grown.set(d, t);
    }
    return t;
  };
  const lasts = knobs.flatMap((k) =>
    numbers(getAt(top, k.path))
      .map((v) => lastWithin(v, k.rule))
      .filter((l): l is number => l !== null),
  );
  const last = lasts.length > 0 ? Math.min(...lasts) : null;
  return {
    tables,
    knobs,
    at: at as (d: number) => T[number],
    top: (d) => at(Math.max(d, TOP)) as Last<T>,
    bounds: (d) => (d <= TOP ? DEFAULT_BOUNDS : boundsFor(at(d))),
    last,
    refusal(d) {
      const past = knobs.find((k) => numbers(getAt(top, k.path)).some((v) => !withinMax(v, k.rule, d)));
      if (!past) return null;
      return `its ${past.label} would be ${spanText(getAt(at(d), past.path))}, past ${past.rule.max}${past.rule.why ? ` (${past.rule.why})` : ''}`;
    },
    rules: knobs.map((k) => describeKnob(k, getAt(top, k.path))),
  };
}
