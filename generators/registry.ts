// The registry of task families: the code families (families/, one file each) and the problem
// families (problems/), found by id, with what every family has (its levels, skills and task types).
import type { Rng } from '../core/rng.js';
import { CODE_TASK_TYPES, type Skill, type TaskType } from '../core/task.js';
import type { Drawn, FamilyImpl } from './kit.js';
import type { Chooser } from './grammar/index.js';
import type { Family } from './types.js';
import { arith } from './families/arith.js';
import { logic } from './families/logic.js';
import { condFamily } from './families/cond.js';
import { str } from './families/string.js';
import { array } from './families/array.js';
import { sort } from './families/sort.js';
import { loop } from './families/loop.js';
import { recursion } from './families/recursion.js';
import { bits } from './families/bits.js';
import { record } from './families/record.js';
import { hof } from './families/hof.js';
import { numtheory } from './families/numtheory.js';
import { PROBLEM_FAMILIES } from './problems/index.js';
import type { ProblemFamily } from './problems/kit.js';

const REGISTRY: FamilyImpl[] = [
  arith,
  logic,
  condFamily,
  str,
  array,
  sort,
  loop,
  recursion,
  bits,
  record,
  hof,
  numtheory,
];

/** Every family, in registry order. */
export const families: Family[] = REGISTRY;

/** Every native problem family (generators/problems/), in registry order: they make 'problem' tasks. */
export const problemFamilies: readonly ProblemFamily[] = PROBLEM_FAMILIES;

/** A code family (deduction, abduction, induction); a problem family's id says which to use instead. */
export function getFamily(id: string): Family {
  return getImpl(id);
}

function getImpl(id: string): FamilyImpl {
  const f = REGISTRY.find((x) => x.id === id);
  if (f) return f;
  if (PROBLEM_FAMILIES.some((x) => x.id === id))
    throw new Error(`task family '${id}' is a problem family: it makes only 'problem' tasks`);
  throw new Error(`unknown task family '${id}'; known families: ${knownIds()}`);
}

const knownIds = (): string => [...REGISTRY, ...PROBLEM_FAMILIES].map((x) => x.id).join(', ');

export function getProblemFamily(id: string): ProblemFamily {
  const f = PROBLEM_FAMILIES.find((x) => x.id === id);
  if (f) return f;
  if (REGISTRY.some((x) => x.id === id))
    throw new Error(`task family '${id}' makes deduction, abduction and induction tasks, not problems`);
  throw new Error(`unknown task family '${id}'; known families: ${knownIds()}`);
}

/** What every family has, native or bridged: its id, levels, skills and the task types it makes. */
export interface FamilyInfo {
  id: string;
  name: string;
  /** Tabled levels (0 … levels-1). */
  levels: number;
  /** The last level it makes: null for no limit, levels − 1 for a finite ladder (docs/levels.md). */
  lastLevel: number | null;
  skills: Skill[];
  types: readonly TaskType[];
}

/** Any native family's id, levels, skills and task types. */
export function familyInfo(id: string): FamilyInfo {
  const p = PROBLEM_FAMILIES.find((x) => x.id === id);
  if (p)
    return { id: p.id, name: p.name, levels: p.levels, lastLevel: p.lastLevel, skills: p.skills, types: ['problem'] };
  const f = getImpl(id);
  return { id: f.id, name: f.name, levels: f.levels, lastLevel: f.lastLevel, skills: f.skills, types: CODE_TASK_TYPES };
}

/**
 * A draft with the outputs the generator's reference interpreter computed and the program's AST
 * size. For tests and benchmarks; the sandbox stays the source of truth for tasks.
 */
export function drawReference(family: string, rng: Rng, level: number, type: TaskType, chooser?: Chooser): Drawn {
  return getImpl(family).draw(rng, level, type, chooser);
}

/** Every skill of every family (code families, then problem families). */
export function allSkills(): Skill[] {
  return [...REGISTRY, ...PROBLEM_FAMILIES].flatMap((f) => f.skills);
}
