// What every family file shares: declaring skills, and turning a candidate program into a
// deduction / abduction / induction draft on inputs drawn as its level says (inputs.ts, levels.ts).
// The reference interpreter (grammar/interpret.ts) screens candidates so that almost every draft
// passes sandbox validation first time.
import type { Rng } from '../core/rng.js';
import type { Input, Json, Skill, TaskDraft, TaskType } from '../core/task.js';
import {
  evaluate,
  gen,
  isTidy,
  let_,
  P,
  printProgram,
  size,
  trimParams,
  withChooser,
  type Chooser,
  type GenCtx,
  type Param,
  type Production,
  type Prog,
  type Stmt,
  type Ty,
} from './grammar/index.js';
import type { Family } from './types.js';
import { drawValue, type Ranges } from './inputs.js';
import { describeLevels, type Level } from './levels.js';
import type { Ladder } from './ladder.js';

export function skill(
  family: string,
  local: string,
  name: string,
  description: string,
  requires: string[],
  level: number,
): Skill {
  return { id: `${family}.${local}`, family, name, description, requires, level };
}

/** A program proposed by a family for one level, with the skills its construction exercised. */
export interface Candidate {
  prog: Prog;
  skills: Iterable<string>;
  /** Parameter types for input drawing when they differ from the grammar types (e.g. 'nat'). */
  inputTypes?: string[];
  /** Overrides the level's ranges for this candidate. */
  ranges?: Ranges;
  /**
   * Keeps the parameters the body does not read where the task shows the program (deduction,
   * abduction), so that which argument binds to which name is part of the task. Induction shows
   * only examples, where an unread argument would leave the program ambiguous: there they go.
   */
  keepParams?: boolean;
}

export interface FamilySpec {
  id: string;
  name: string;
  description: string;
  skills: Skill[];
  /** The levels, easiest first, declared once: tables for 0-4 and the rules that grow them above (ladder.ts). */
  ladder: Ladder<readonly Level[]>;
  /** A candidate of level d; its tables come from the ladder (`ladder.at(d)`, `ladder.top(d)`). */
  candidate: (rng: Rng, level: number) => Candidate;
}

/** A draft together with what the reference interpreter computed (for tests and benchmarks). */
export interface Drawn {
  draft: TaskDraft;
  outputs: Json[];
  /** AST node count of the program. */
  size: number;
}

export interface FamilyImpl extends Family {
  /** With a chooser, the grammar's choices are its (see Chooser); without, the fixed weights'. */
  draw(rng: Rng, level: number, type: TaskType, chooser?: Chooser): Drawn;
}

const PRODUCTION_NAMES = new Map<Production, string>(Object.entries(P).map(([name, p]) => [p as Production, name]));

/** A production's name in the library (productions.ts), or its skill for one a family defines itself. */
export const productionLabel = (p: Production): string => PRODUCTION_NAMES.get(p) ?? p.skill;

/** Visible and hidden pair counts of induction tasks per level. */
export const inductionCounts = (level: number): { visible: number; hidden: number } => ({
  visible: Math.min(3 + level, 6),
  hidden: 5,
});

const MAX_CANDIDATES = 400;

/** The longest program a code task may have (materialise refuses longer ones; the kit draws again). */
export const MAX_PROGRAM_CHARS = 16_000;

export function defineFamily(spec: FamilySpec): FamilyImpl {
  const { ladder } = spec;
  const draw = (rng: Rng, level: number, type: TaskType, chooser?: Chooser): Drawn => {
    checkLevel(spec.id, level, ladder.last, ladder.refusal(level));
    const bounds = ladder.bounds(level);
    const want = type === 'induction' ? inductionCounts(level).visible + inductionCounts(level).hidden : 4;
    for (let attempt = 0; attempt < MAX_CANDIDATES; attempt++) {
      let raw: Candidate;
      if (chooser) {
        chooser.begin?.();
        raw = withChooser(chooser, () => spec.candidate(rng, level));
      } else raw = spec.candidate(rng, level);
      const trimmed = raw.keepParams && type !== 'induction' ? raw.prog : trimParams(raw.prog);
      const cand: Candidate =
        trimmed === raw.prog
          ? raw
          : {
              ...raw,
              prog: trimmed,
              inputTypes: raw.inputTypes?.filter((_, i) => trimmed.params.includes(raw.prog.params[i]!)),
            };
      const r = cand.ranges ?? ladder.at(level).inputs;
      const types = cand.inputTypes ?? cand.prog.params.map((p: Param) => p.type);
      const inputs: Input[] = [];
      const keys = new Set<string>();
      for (let t = 0; t < want * 3 && inputs.length < want; t++) {
        const input = types.map((ty) => drawValue(rng, ty, r));
        const key = JSON.stringify(input);
        if (keys.has(key)) continue;
        keys.add(key);
        inputs.push(input);
      }
      if (type === 'induction' && inputs.length < 3) continue;
      if (type !== 'induction' && inputs.length < 2) continue;
      const outputs: Json[] = [];
      try {
        for (const input of inputs) outputs.push(evaluate(cand.prog, input, bounds));
      } catch {
        continue;
      }
      if (!inputs.every((i) => isTidy(i, bounds))) continue;
      const distinct = new Set(outputs.map((o) => JSON.stringify(o)));
      if (distinct.size < 2) continue; // constant on the probes: trivial
      const skills = [...new Set(cand.skills)].sort();
      const program = printProgram(cand.prog);
      if (program.length > MAX_PROGRAM_CHARS) continue;
      const base = { family: spec.id, level, skills, program, parent: null, proposer: 'generator' };
      if (type === 'induction') {
        const visible = Math.min(inductionCounts(level).visible, inputs.length - 1);
        return {
          draft: { ...base, type, inputs, visibleCount: visible, message: hint(skills, spec.id) },
          outputs,
          size: size(cand.prog),
        };
      }
      return { draft: { ...base, type, inputs: [inputs[0]!] }, outputs: [outputs[0]!], size: size(cand.prog) };
    }
    throw new Error(`family '${spec.id}': no valid ${type} candidate at level ${level} after ${MAX_CANDIDATES} tries`);
  };
  return {
    id: spec.id,
    name: spec.name,
    description: spec.description,
    skills: spec.skills,
    levels: ladder.tables.length,
    knobs: describeLevels(spec.id, ladder.tables),
    growth: ladder.rules,
    lastLevel: ladder.last,
    generate: (rng, level, type) => draw(rng, level, type).draft,
    draw,
  };
}

/**
 * Refuses a level that is not a natural number, or one past the family's last renderable level, in
 * one line naming why (docs/levels.md).
 */
export function checkLevel(family: string, level: number, last: number | null, refusal: string | null): void {
  if (!Number.isInteger(level) || level < 0)
    throw new RangeError(`family '${family}': level ${level} is not a natural number (levels are 0, 1, 2, …)`);
  if (refusal !== null)
    throw new RangeError(
      `family '${family}': level ${level} cannot be rendered within the served limits: ${refusal}; its last level is ${last}`,
    );
}

/**
 * k definitions `const t1 = E1; …; const tk = Ek` of type `ty` and the given depth, each reading the
 * one before it (t1 one of `first`), added to ctx's scope: the grown levels of the expression
 * families chain them before their return (docs/levels.md). The return must read the last name,
 * so that every definition is live. Without definitions, the names to read are `first`.
 */
export function chain(
  ctx: GenCtx,
  ty: Ty,
  k: number,
  depth: number,
  first: string[],
): { stmts: Stmt[]; read: string[] } {
  const stmts: Stmt[] = [];
  let read = first;
  for (let i = 1; i <= k; i++) {
    const name = `t${i}`;
    stmts.push(let_(name, gen(ctx, ty, depth, true, read), true));
    ctx.scope.push({ name, type: ty });
    read = [name];
  }
  return { stmts, read };
}

/** The induction message: the family and the skills the hidden program uses, in short form. */
export function hint(skills: string[], family: string): string {
  const names = skills.map((s) => (s.startsWith(family + '.') ? s.slice(family.length + 1) : s));
  return `${family}: ${names.join(' ')}`;
}
