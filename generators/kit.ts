// What every family file shares: declaring skills, and turning a candidate program into a
// deduction / abduction / induction draft on inputs drawn as its level says (inputs.ts, levels.ts).
// The reference interpreter (grammar/interpret.ts) screens candidates so that almost every draft
// passes sandbox validation first time.
import type { Rng } from '../core/rng.js';
import type { Input, Json, Skill, TaskDraft, TaskType } from '../core/task.js';
import { evaluate, isTidy, P, printProgram, size, trimParams, withChooser, type Chooser, type Param, type Production, type Prog, type ValueBounds, DEFAULT_BOUNDS } from './grammar/index.js';
import type { Family } from './types.js';
import { drawValue, type Ranges } from './inputs.js';
import { describeLevels, type Level } from './levels.js';

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
  /** The levels, easiest first, declared once (see levels.ts). */
  levels: readonly Level[];
  candidate: (rng: Rng, level: number) => Candidate;
  bounds?: ValueBounds;
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

export function defineFamily(spec: FamilySpec): FamilyImpl {
  const levels = spec.levels.length;
  const bounds = spec.bounds ?? DEFAULT_BOUNDS;
  const draw = (rng: Rng, level: number, type: TaskType, chooser?: Chooser): Drawn => {
    if (!Number.isInteger(level) || level < 0 || level >= levels) {
      throw new RangeError(`family '${spec.id}': level ${level} is outside 0..${levels - 1}`);
    }
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
          : { ...raw, prog: trimmed, inputTypes: raw.inputTypes?.filter((_, i) => trimmed.params.includes(raw.prog.params[i]!)) };
      const r = cand.ranges ?? spec.levels[level]!.inputs;
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
    levels,
    knobs: describeLevels(spec.id, spec.levels),
    generate: (rng, level, type) => draw(rng, level, type).draft,
    draw,
  };
}

/** The induction message: the family and the skills the hidden program uses, in short form. */
export function hint(skills: string[], family: string): string {
  const names = skills.map((s) => (s.startsWith(family + '.') ? s.slice(family.length + 1) : s));
  return `${family}: ${names.join(' ')}`;
}
