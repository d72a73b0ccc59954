// Levels above the tables (docs/levels.md): every native family tables levels 0-4, and above its
// last tabled level each of its knobs grows by a stated rule. A rule is data, so the code that grows
// a level and the text `cogen skills --taxonomy` shows (`body depth 4 + ⌊(d − 4)/4⌋`) come from the
// same declaration and cannot drift. A rule may name the largest value its knob can take and why
// (a longer answer would not fit a completion, …): the first level that would pass it is the
// family's first unrenderable level, refused in one line.

/** The last tabled level of every native family: levels above it are grown. */
export const TOP = 4;

/** How one number grows above TOP: at level d its value is v + by · steps(d), or v · times^steps(d). */
export interface Rule {
  /** Added per step (negative to fall: the low end of a widening range). */
  by?: number;
  /** Multiplied per step instead (rounded down): for numbers whose digits grow. */
  times?: number;
  /** A step every `every` levels: steps(d) = ⌊(d − TOP + offset) / every⌋ (default 1). */
  every?: number;
  /** Moves the steps earlier by this many levels (two knobs stepping in turn: sudoku's box sides). */
  offset?: number;
  /** Steps grow with the logarithm instead: steps(d) = ⌊log2(d − TOP + 1)⌋ (slower than linear). */
  log?: true;
  /** The largest value the knob may reach (by magnitude); a level past it cannot be rendered. */
  max?: number;
  /** What passing `max` would break, for the refusal (`the answers would exceed 65,536 characters`). */
  why?: string;
}

function steps(r: Rule, d: number): number {
  if (d <= TOP) return 0;
  return r.log ? Math.floor(Math.log2(d - TOP + 1)) : Math.floor((d - TOP + (r.offset ?? 0)) / (r.every ?? 1));
}

/** The value at level d of a number whose value at TOP is v. */
export function grow(v: number, r: Rule, d: number): number {
  if (r.times === undefined) return v + (r.by ?? 0) * steps(r, d);
  const x = v * r.times ** steps(r, d);
  return Number.isInteger(v) ? Math.floor(x) : x;
}

/** Whether the value at level d is within the rule's max. */
export function withinMax(v: number, r: Rule, d: number): boolean {
  return r.max === undefined || Math.abs(grow(v, r, d)) <= r.max;
}

/**
 * The last level whose value stays within the rule's max (null: none, the rule has no max). The
 * value only moves away from v as d grows, so the first level past max is found by doubling and
 * halving.
 */
export function lastWithin(v: number, r: Rule): number | null {
  if (r.max === undefined || ((r.times ?? 1) === 1 && !r.by)) return null;
  if (!withinMax(v, r, TOP + 1)) return TOP;
  let hi = TOP + 2;
  while (withinMax(v, r, hi)) hi = TOP + (hi - TOP) * 2;
  let lo = TOP + 1; // within
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (withinMax(v, r, mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}

const n = (x: number): string => (x < 0 ? `−${-x}` : String(x));

/** What the rule adds at level d, as text: `+ ⌊(d − 4)/4⌋`, `− 5(d − 4)`, `+ ⌊log2(d − 3)⌋`. */
export function growthTerm(r: Rule): string {
  const every = r.every ?? 1;
  const from = TOP - (r.offset ?? 0);
  const shifted = from === 0 ? 'd' : `(d − ${from})`;
  const term = r.log ? `⌊log2(d − ${TOP - 1})⌋` : every === 1 ? shifted : `⌊${shifted}/${every}⌋`;
  if (r.times !== undefined) return `· ${r.times}^${term}`;
  const by = r.by ?? 0;
  const k = Math.abs(by);
  const scaled = k === 1 ? term : every === 1 && !r.log && term !== 'd' ? `${k}${term}` : `${k}·${term}`; // 2(d − 4), 10·d, 3·⌊(d − 4)/2⌋
  return `${by < 0 ? '−' : '+'} ${scaled}`;
}

/** The rule's max as text (empty without one). */
export const maxText = (r: Rule): string =>
  r.max === undefined ? '' : ` (at most ${r.max}${r.why ? `: past it ${r.why}` : ''})`;

/** The rule as a formula in d (`4 + ⌊(d − 4)/4⌋`, `−20 − 5(d − 4)`, `5 + ⌊log2(d − 3)⌋`), with its max. */
export function describeRule(v: number, r: Rule): string {
  return `${n(v)} ${growthTerm(r)}${maxText(r)}`;
}
