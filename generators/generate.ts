// Drawing a task: a family's drafts until one materialises (materialise.ts), the same task for the
// same rng state and seen set.
import type { Rng } from '../core/rng.js';
import { madeOnlyOf } from '../core/rules.js';
import type { AnyDraft, Task, TaskType } from '../core/task.js';
import type { Sandbox } from '../sandbox/index.js';
import { materialise } from './materialise.js';
import { getFamily, getProblemFamily } from './registry.js';

export interface GenerateOptions {
  family: string;
  level: number;
  type: TaskType;
  rng: Rng;
  seen?: Set<string>;
  /** Drafts to try before giving up (default 50). */
  attempts?: number;
  /**
   * Skills the task should not be made of alone: up to AVOID_DRAFTS drafts whose every skill is
   * here are passed over before they are run (they count against no attempt); then any will do.
   */
  avoid?: ReadonlySet<string>;
}

/** Drafts passed over for `avoid` before any is taken: drafts cost no sandbox run, and an arm with one other skill in three is missed once in 10^11. */
export const AVOID_DRAFTS = 64;

/** Draws drafts until one materialises. Same rng state (and seen set) → same task. */
export async function generateTask(sandbox: Sandbox, opts: GenerateOptions): Promise<Task> {
  const draw: () => AnyDraft =
    opts.type === 'problem'
      ? (
          (p) => () =>
            p.generate(opts.rng, opts.level)
        )(getProblemFamily(opts.family))
      : (
          (f) => () =>
            f.generate(opts.rng, opts.level, opts.type)
        )(getFamily(opts.family));
  const attempts = opts.attempts ?? 50;
  const reasons = new Map<string, number>();
  let last = '';
  let passedOver = 0;
  for (let i = 0; i < attempts; i++) {
    const draft = draw();
    if (passedOver < AVOID_DRAFTS && madeOnlyOf(draft.skills, opts.avoid)) {
      passedOver++;
      i--;
      continue;
    }
    const m = await materialise(sandbox, draft, opts.seen);
    if (m.ok) return m.task;
    reasons.set(m.reason, (reasons.get(m.reason) ?? 0) + 1);
    last = `${m.reason}: ${m.detail}`;
  }
  const summary = [...reasons].map(([k, n]) => `${k} ×${n}`).join(', ');
  throw new Error(
    `generateTask: no ${opts.type} task for family '${opts.family}' at level ${opts.level} after ${attempts} drafts (${summary}; last ${last})`,
  );
}
