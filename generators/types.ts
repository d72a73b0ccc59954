// The generator interface (docs/DESIGN.md, "Tasks" and "Skills and the skill graph"): one family
// per file behind a registry.
import type { Rng } from '../core/rng.js';
import type { Skill, TaskDraft, TaskType } from '../core/task.js';

export interface Family {
  /** Stable id, e.g. 'arith'. */
  id: string;
  name: string;
  description: string;
  /** The skills this family declares (ids prefixed with the family id, e.g. 'arith.add'). */
  skills: Skill[];
  /** Number of tabled difficulty levels (0 … levels-1, 5 for every native family); above them levels are grown (`growth`). */
  levels: number;
  /** One line per tabled level naming its knobs (shape, parameters, generated expressions, inputs), derived from the family's level table; for docs and `cogen skills --taxonomy`. */
  knobs: string[];
  /** One line per knob that grows above the tabled levels: its rule in d (docs/levels.md). */
  growth: string[];
  /** The last level the family can render within the served limits (null: every level). */
  lastLevel: number | null;
  /** Pure and synchronous: same rng state, same draft. Outputs are computed later by the sandbox. */
  generate(rng: Rng, level: number, type: TaskType): TaskDraft;
}
