// What every problem family file shares (docs/DESIGN.md, "Tasks": the verified problem): the family
// interface behind the registry, declaring a family once (its levels, skills and verifier), and small
// helpers the generators and verifiers use.
//
// A family's verifier is JavaScript source text, `function f(answer, data)`, that runs in the sandbox
// and returns a score in [0, 1]. It checks the answer against the data (any valid answer scores 1),
// returns 0 for an answer of the wrong shape instead of throwing, and keeps its loops bounded by the
// data (a hostile answer only costs its budget). Its source is text, not a compiled TypeScript
// function, because the sandbox runs exactly what the task records.
import type { Rng } from '../../core/rng.js';
import type { Json, ProblemDraft, Skill } from '../../core/task.js';
import { describeRule, grow, lastWithin, TOP, withinMax, type Rule } from '../growth.js';
import { checkLevel } from '../kit.js';

/** One generated instance: what the task states and the answers validation checks. */
export interface ProblemInstance {
  statement: string;
  data: Json;
  /** A correct answer, computed by the generator; the verifier scores it 1. */
  witness: Json;
  /** 2–4 near misses (one constraint broken, an off-by-one); the verifier scores each < 1. */
  failures: Json[];
}

/** A level's parameters; its knobs line is written from them. */
export type ProblemLevel = Readonly<Record<string, number | string | boolean>>;

export interface ProblemSpec<L extends ProblemLevel> {
  id: string;
  name: string;
  description: string;
  /** arithmetic | constraints | graphs | strings | planning | number-theory (see DOMAINS). */
  domain: Domain;
  skills: Skill[];
  /** The tabled levels 0-4, easiest first, declared once (complexity rises with the level). */
  levels: readonly L[];
  /** How the level-4 knobs grow above level 4 (docs/levels.md); a knob without a rule stays as at level 4. */
  growth: { readonly [K in keyof L]?: Rule };
  /** Set when the rule grows difficulty slower than tenfold by level 30: the factor it promises instead, and why. */
  slower?: Slower;
  /** Source of `function f(answer, data)` returning a score in [0, 1]. */
  verifier: string;
  draw(rng: Rng, level: L, index: number): ProblemInstance;
  /** The instance's size (cells, nodes, characters, …): non-decreasing with the level on average. */
  size(data: Json): number;
}

export const DOMAINS = ['arithmetic', 'constraints', 'graphs', 'strings', 'planning', 'number-theory'] as const;
export type Domain = (typeof DOMAINS)[number];

/** A rule whose difficulty grows slower than tenfold by level 30: the factor at level 30 over level 4 it meets instead, and why. */
export interface Slower {
  ratio: number;
  why: string;
}

export interface ProblemFamily {
  kind: 'problem';
  id: string;
  name: string;
  description: string;
  domain: Domain;
  skills: Skill[];
  /** Tabled levels (0-4); levels above are grown by `growth`. */
  levels: number;
  knobs: string[];
  /** One line per knob that grows above the tabled levels: its rule in d. */
  growth: string[];
  /** The last level the family can render within the served limits (null: every level). */
  lastLevel: number | null;
  slower?: Slower;
  verifier: string;
  /** Pure and synchronous: same rng state, same draft. The sandbox validates it (validate.ts). */
  generate(rng: Rng, level: number): ProblemDraft;
  size(data: Json): number;
}

const knobLine = (l: ProblemLevel): string =>
  Object.entries(l)
    .map(([k, v]) => `${k} ${String(v)}`)
    .join(', ');

/** Draws per generate call before a family gives up (a draw is retried when its witness or failures do not check). */
const MAX_DRAWS = 50;

/**
 * The family's own verifier, compiled in the host for screening its drafts. The source is the
 * family's (trusted, in this repository), never an answer's; the sandbox remains the judge.
 */
function hostVerifier(id: string, source: string): (answer: Json, data: Json) => unknown {
  try {
    return new Function(`${source}\nreturn f;`)() as (answer: Json, data: Json) => unknown;
  } catch (e) {
    throw new Error(`problem family '${id}': its verifier does not compile: ${(e as Error).message}`);
  }
}

/** A problem family's level d: its table up to 4, the level-4 table grown by its rules above. */
function problemLadder<L extends ProblemLevel>(spec: ProblemSpec<L>) {
  const top = spec.levels[TOP]!;
  const rules = Object.entries(spec.growth).filter((e): e is [string, Rule] => e[1] !== undefined);
  for (const [k] of rules)
    if (typeof top[k] !== 'number')
      throw new Error(`problem family '${spec.id}': knob ${k} is not a number, so it cannot grow`);
  const base = (k: string): number => top[k] as number;
  const grown = new Map<number, L>();
  const lasts = rules.map(([k, r]) => lastWithin(base(k), r)).filter((l): l is number => l !== null);
  return {
    at(d: number): L {
      if (d <= TOP) return spec.levels[d]!;
      let l = grown.get(d);
      if (!l) grown.set(d, (l = { ...top, ...Object.fromEntries(rules.map(([k, r]) => [k, grow(base(k), r, d)])) }));
      return l;
    },
    last: lasts.length > 0 ? Math.min(...lasts) : null,
    refusal(d: number): string | null {
      const past = rules.find(([k, r]) => !withinMax(base(k), r, d));
      return past
        ? `its ${past[0]} would be ${grow(base(past[0]), past[1], d)}, past ${past[1].max}${past[1].why ? ` (${past[1].why})` : ''}`
        : null;
    },
    lines: rules.map(([k, r]) => `${k} ${describeRule(base(k), r)}`),
  };
}

export function defineProblemFamily<L extends ProblemLevel>(spec: ProblemSpec<L>): ProblemFamily {
  const levels = spec.levels.length;
  if (levels !== TOP + 1)
    throw new Error(`problem family '${spec.id}' tables ${levels} levels; levels 0-${TOP} are tabled, the rest grown`);
  const ladder = problemLadder(spec);
  const check = hostVerifier(spec.id, spec.verifier);
  const score = (a: Json, d: Json): number => {
    try {
      const s = check(structuredClone(a), structuredClone(d));
      return typeof s === 'number' ? s : -1;
    } catch {
      return -1;
    }
  };
  /** A draw whose witness scores 1, keeping the failures that score in [0, 1) (at least two). */
  const screened = (rng: Rng, level: number): ProblemInstance => {
    for (let i = 0; i < MAX_DRAWS; i++) {
      // Through JSON once: what the task stores is what the family checked (-0 reads as 0).
      const inst = JSON.parse(JSON.stringify(spec.draw(rng, ladder.at(level), level))) as ProblemInstance;
      if (score(inst.witness, inst.data) !== 1) continue;
      const failures = inst.failures.filter((f) => {
        const s = score(f, inst.data);
        return s >= 0 && s < 1;
      });
      if (failures.length >= 2) return { ...inst, failures };
    }
    throw new Error(`problem family '${spec.id}': no draw at level ${level} checked out in ${MAX_DRAWS} tries`);
  };
  return {
    kind: 'problem',
    id: spec.id,
    name: spec.name,
    description: spec.description,
    domain: spec.domain,
    skills: spec.skills,
    levels,
    knobs: spec.levels.map(knobLine),
    growth: ladder.lines,
    lastLevel: ladder.last,
    ...(spec.slower ? { slower: spec.slower } : {}),
    verifier: spec.verifier,
    size: spec.size,
    generate(rng: Rng, level: number): ProblemDraft {
      checkLevel(spec.id, level, ladder.last, Number.isInteger(level) && level >= 0 ? ladder.refusal(level) : null);
      const inst = screened(rng, level);
      return {
        type: 'problem',
        family: spec.id,
        level,
        skills: spec.skills.filter((s) => s.level <= level).map((s) => s.id),
        program: spec.verifier,
        statement: inst.statement,
        data: inst.data,
        witness: inst.witness,
        failures: inst.failures,
      };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Helpers for generators.

/** A uniformly shuffled copy. */
export function shuffled<T>(rng: Rng, xs: readonly T[]): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** `n` distinct integers from lo..hi (inclusive), in drawing order. */
export function distinctInts(rng: Rng, n: number, lo: number, hi: number): number[] {
  if (hi - lo + 1 < n) throw new RangeError(`distinctInts: ${n} values do not fit in ${lo}..${hi}`);
  const seen = new Set<number>();
  const out: number[] = [];
  while (out.length < n) {
    const x = rng.int(lo, hi);
    if (!seen.has(x)) {
      seen.add(x);
      out.push(x);
    }
  }
  return out;
}

/** A copy of `xs` with the element at i replaced. */
export const replaceAt = <T>(xs: readonly T[], i: number, x: T): T[] => xs.map((y, k) => (k === i ? x : y));

/** Lines of a grid of small values, for statements. */
export const gridText = (g: readonly (readonly (number | string)[])[]): string => g.map((r) => r.join(' ')).join('\n');

/** Distinct failures, none equal to the witness (a near miss equal to the answer would be no miss). */
export function nearMisses(witness: Json, candidates: Json[], max = 4): Json[] {
  const key = (x: Json): string => JSON.stringify(x);
  const seen = new Set([key(witness)]);
  const out: Json[] = [];
  for (const c of candidates) {
    const k = key(c);
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(c);
    if (out.length === max) break;
  }
  return out;
}

/** Skill helper: ids are prefixed with the family id. */
export function problemSkill(
  family: string,
  local: string,
  name: string,
  description: string,
  requires: string[],
  level: number,
): Skill {
  return { id: `${family}.${local}`, family, name, description, requires, level };
}
