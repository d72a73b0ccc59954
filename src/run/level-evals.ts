// Held-out sets above the tables (docs/levels.md). No skill enters above level 4, so the mastery
// probes (src/run/probes.ts) stop at a family's tabled levels; above them a run measures each (family, d)
// on a fixed evaluation set instead: max(minProbes, perArm × the family's task types in the config)
// tasks, drawn from a stream of their own that depends on the seed, the family and the level only,
// and balanced like the probes: a candidate that would lift the set's trivial baseline above the aim
// (learnAt − margin) is skipped for the stream's next. The set is made before the first training task
// of that level is drawn and joins `seen`, so training never repeats one; being independent of the
// run's history, a resumed run makes it again exactly. `cogen export --what eval` writes the same sets.
import { createRng } from '../../core/rng.js';
import { type Task, type TaskType } from '../../core/task.js';
import { isSolved } from '../../core/rules.js';
import { minProbes, type MasteryOptions } from '../../curricula/index.js';
import type { Sandbox } from '../../sandbox/index.js';
import type { Policy, PolicyPrompt } from '../solver/index.js';
import { drawTask, verifyTasks } from './verification.js';
import { mean } from '../../core/stats.js';
import { trivialBaseline, trivialKeys } from './trivial.js';
import type { LevelResult } from './level-sets.js';

export interface EvalSetOptions {
  family: string;
  level: number;
  /** The task types the set cycles through (the i-th task kept is of types[i mod the count]). */
  types: readonly TaskType[];
  /** How many tasks. */
  n: number;
  seed: number | string;
  /** The trivial baseline the set may reach at most (the mastery rule's learnAt − margin). */
  aim: number;
}

/** Candidates drawn per task of a set, at most, before a set that cannot be balanced is filled as it comes. */
const DRAWS_PER_TASK = 8;

/** An evaluation set and its trivial keys (src/run/trivial.ts); `balanced` is false where the draws ran out before the aim was met. */
export interface EvalSet {
  tasks: Task[];
  /** Each task's trivial keys, every argument list of the set tried as a constant. */
  trivial: string[][];
  baseline: number;
  balanced: boolean;
}

/**
 * The evaluation set of a family at a level: n validated tasks, distinct, a function of the options
 * alone. A candidate is skipped when the set with it would hold more tasks that the best
 * trivial policy solves than aim × n (every argument list of the set tried as a constant), for at
 * most DRAWS_PER_TASK × n draws; past them the set is filled as the stream comes.
 */
export async function evalSet(sandbox: Sandbox, o: EvalSetOptions): Promise<EvalSet> {
  const rng = createRng(`${o.seed}/eval/${o.family}/${o.level}`);
  const seen = new Set<string>();
  let tasks: Task[] = [];
  let trivial: string[][] = [];
  const most = Math.floor(o.aim * o.n + 1e-9);
  for (let draw = 0; tasks.length < o.n; draw++) {
    const type = o.types[tasks.length % o.types.length]!;
    const task = await drawTask(sandbox, {
      family: o.family,
      level: o.level,
      type,
      rng: rng.fork(String(draw)),
      seen,
      attempts: 20,
    });
    const trial = [...tasks, task];
    const keys = await trivialKeys(sandbox, trial);
    const solved = trivialBaseline(keys.map((k) => ({ trivial: k }))) * trial.length;
    if (solved > most + 1e-9 && draw < DRAWS_PER_TASK * o.n) continue;
    [tasks, trivial] = [trial, keys];
  }
  const baseline = trivialBaseline(trivial.map((k) => ({ trivial: k })));
  return { tasks, trivial, baseline, balanced: baseline <= o.aim + 1e-9 };
}

/** A run's evaluation sets above the tables, made as the run first reaches each level. */
export class LevelEvals {
  private readonly sets = new Map<string, { family: string; level: number; set: EvalSet; prompts: PolicyPrompt[] }>();

  constructor(
    private readonly sandbox: Sandbox,
    private readonly o: {
      seed: number;
      /** Tasks per task type in a set, at least (the config's probes.perArm). */
      perArm: number;
      /** The run's mastery rule: a set has at least its minProbes tasks, balanced to learnAt − margin. */
      mastery: MasteryOptions;
      /** Each family's tabled levels: sets are made above them only. */
      tabled: ReadonlyMap<string, number>;
      /** The config's task types a family makes. */
      types: (family: string) => TaskType[];
      /** The prompt the policy is asked a task in (src/run/prompts.ts). */
      ask: (task: Task) => PolicyPrompt;
      log: (line: string) => void;
    },
  ) {}

  /** Whether a (family, level) is above the family's table: measured here, not by the probes. */
  above(family: string, level: number): boolean {
    const tabled = this.o.tabled.get(family);
    return tabled !== undefined && level >= tabled;
  }

  /** Makes the set of (family, level) if it is above the table and not made yet; its ids join `seen`. */
  async ensure(family: string, level: number, seen: Set<string>): Promise<void> {
    const key = `${family}/${level}`;
    if (!this.above(family, level) || this.sets.has(key)) return;
    const types = this.o.types(family);
    const aim = this.o.mastery.learnAt - this.o.mastery.margin;
    const n = Math.max(minProbes(this.o.mastery), this.o.perArm * types.length);
    const set = await evalSet(this.sandbox, { family, level, types, n, seed: this.o.seed, aim });
    if (!set.balanced)
      this.o.log(
        `level set ${key}: its trivial baseline is ${set.baseline.toFixed(2)}, above the aim ${aim.toFixed(2)}, after ${DRAWS_PER_TASK * n} draws: passing the level needs ${Math.max(this.o.mastery.learnAt, set.baseline + this.o.mastery.margin).toFixed(2)}`,
      );
    for (const t of set.tasks) seen.add(t.id);
    this.sets.set(key, { family, level, set, prompts: set.tasks.map(this.o.ask) });
  }

  get size(): number {
    return this.sets.size;
  }

  /** Greedy answers on every set: each (family, level)'s accuracy beside its trivial baseline. */
  async score(policy: Policy): Promise<LevelResult[]> {
    const sets = [...this.sets.values()];
    if (sets.length === 0) return [];
    const tasks = sets.flatMap((s) => s.set.tasks);
    const answers = await policy.greedy(sets.flatMap((s) => s.prompts));
    const verdicts = await verifyTasks(
      this.sandbox,
      tasks.map((task, i) => ({ task, answer: answers[i]! })),
    );
    let next = 0;
    return sets.map((s) => ({
      family: s.family,
      level: s.level,
      probe: {
        accuracy: mean(s.set.tasks.map(() => (isSolved(verdicts[next++]!.reward) ? 1 : 0))),
        baseline: s.set.baseline,
        probes: s.set.tasks.length,
      },
    }));
  }
}
