// The generator interface (DESIGN.md, "Tasks" and "Skills"): one family per file behind a registry.
import type { Rng } from '../core/rng.js';
import type { Skill, TaskDraft, TaskType } from '../core/task.js';

export interface Family {
  /** Stable id, e.g. 'arith'. */
  id: string;
  name: string;
  description: string;
  /** The skills this family declares (ids prefixed with the family id, e.g. 'arith.add'). */
  skills: Skill[];
  /** Number of difficulty levels (0 … levels-1); at least 5. */
  levels: number;
  /** One line per level naming its knobs (shape, parameters, generated expressions, inputs), derived from the family's level table; for docs and `cogen skills --taxonomy`. */
  knobs: string[];
  /** Pure and synchronous: same rng state, same draft. Outputs are computed later by the sandbox. */
  generate(rng: Rng, level: number, type: TaskType): TaskDraft;
}
