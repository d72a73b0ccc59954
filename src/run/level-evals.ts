// Held-out accuracy above the tables (docs/levels.md). No skill enters above level 4, so the mastery
// probes (src/run/probes.ts) stop at a family's tabled levels; above them a run measures each (family, d)
// on a fixed evaluation set instead: perArm tasks of each of the family's task types in the config,
// drawn from a stream of their own that depends on the seed, the family and the level only. The set
// is made before the first training task of that level is drawn and joins `seen`, so training never
// repeats one; being independent of the run's history, a resumed run makes it again exactly.
// `cogen export --what eval` writes the same sets.
import { createRng } from '../../core/rng.js';
import { answerKind, answerShape, type Task, type TaskType } from '../../core/task.js';
import { isSolved } from '../../core/rules.js';
import type { Sandbox } from '../../sandbox/index.js';
import type { Policy } from '../solver/index.js';
import { drawTask, verifyTasks } from './verification.js';
import { mean } from '../../core/stats.js';

export interface EvalSetOptions {
  family: string;
  level: number;
  /** The task types the set cycles through (task i is of types[i mod the count]). */
  types: readonly TaskType[];
  /** How many tasks. */
  n: number;
  seed: number | string;
}

/** The evaluation set of a family at a level: n validated tasks, distinct, a function of the options alone. */
export async function evalSet(sandbox: Sandbox, o: EvalSetOptions): Promise<Task[]> {
  const rng = createRng(`${o.seed}/eval/${o.family}/${o.level}`);
  const seen = new Set<string>();
  const out: Task[] = [];
  for (let i = 0; i < o.n; i++) {
    const type = o.types[i % o.types.length]!;
    out.push(
      await drawTask(sandbox, { family: o.family, level: o.level, type, rng: rng.fork(String(i)), seen, attempts: 20 }),
    );
  }
  return out;
}

/** The metric that holds a (family, level)'s held-out accuracy. */
export const evalKey = (family: string, level: number): string => `eval.${family}/${level}`;

/** A run's evaluation sets above the tables, made as the run first reaches each level. */
export class LevelEvals {
  private readonly sets = new Map<string, { family: string; level: number; tasks: Task[]; prompts: string[] }>();

  constructor(
    private readonly sandbox: Sandbox,
    private readonly o: {
      seed: number;
      /** Tasks per task type in a set (the config's probes.perArm). */
      perArm: number;
      /** Each family's tabled levels: sets are made above them only. */
      tabled: ReadonlyMap<string, number>;
      /** The config's task types a family makes. */
      types: (family: string) => TaskType[];
      render: (task: Task) => string;
    },
  ) {}

  /** Whether a (family, level) is above the family's table: measured here, not by the probes. */
  above(family: string, level: number): boolean {
    const tabled = this.o.tabled.get(family);
    return tabled !== undefined && level >= tabled;
  }

  /** Makes the set of (family, level) if it is above the table and not made yet; its ids join `seen`. */
  async ensure(family: string, level: number, seen: Set<string>): Promise<void> {
    const key = evalKey(family, level);
    if (!this.above(family, level) || this.sets.has(key)) return;
    const types = this.o.types(family);
    const tasks = await evalSet(this.sandbox, {
      family,
      level,
      types,
      n: this.o.perArm * types.length,
      seed: this.o.seed,
    });
    for (const t of tasks) seen.add(t.id);
    this.sets.set(key, { family, level, tasks, prompts: tasks.map(this.o.render) });
  }

  get size(): number {
    return this.sets.size;
  }

  /** Greedy answers on every set: each (family, level)'s accuracy, as `eval.<family>/<level>` metrics. */
  async score(policy: Policy): Promise<Record<string, number>> {
    const sets = [...this.sets.entries()];
    if (sets.length === 0) return {};
    const tasks = sets.flatMap(([, s]) => s.tasks);
    const answers = await policy.greedy(
      sets.flatMap(([, s]) =>
        s.tasks.map((t, i) => ({ text: s.prompts[i]!, kind: answerKind(t.type), shape: answerShape(t) })),
      ),
    );
    const verdicts = await verifyTasks(
      this.sandbox,
      tasks.map((task, i) => ({ task, answer: answers[i]! })),
    );
    let next = 0;
    return Object.fromEntries(
      sets.map(([key, s]) => [key, mean(s.tasks.map(() => (isSolved(verdicts[next++]!.reward) ? 1 : 0)))]),
    );
  }
}
