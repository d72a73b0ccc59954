// `cogen export --what eval`: a fixed evaluation set of one family at one level, for a user's own
// evaluation (docs/levels.md). It is the set a run of seed S makes for that (family, level) above
// the tables (src/run/level-evals.ts): the same stream, so `--seed` and `--n` reproduce a run's set.
// No run is read; the tasks are written as `--what tasks` writes a run's (solve rates left empty).
import { renderCompact, renderNatural } from '../generators/index.js';
import { TASK_TYPES, type TaskType } from '../core/task.js';
import { UserError } from '../core/errors.js';
import { createSandbox } from '../sandbox/index.js';
import { EXPORT_KINDS, type ExportFormat } from './export.js';
import { exportTaskRows, type ExportView } from './export-view.js';
import { evalSet, spaceFamily } from './run/index.js';
import { masteryConfigSchema } from '../curricula/index.js';

/** What `cogen export --what` takes: a run's records of a kind, or an evaluation set (no run). */
export const EXPORT_WHAT = [...EXPORT_KINDS, 'eval'] as const;

export interface EvalExportOptions {
  family: string;
  level: number;
  n: number;
  seed: number;
  /** The task types the set cycles through; default every type the family makes. */
  types?: string[];
  out: string;
  format: ExportFormat;
  /** The view the tasks are written in (default chat), and ids of tasks to leave out (a run's probes). */
  view?: ExportView;
  exclude?: ReadonlySet<string>;
}

/** Writes the evaluation set; returns how many tasks. Bad options are refused in one line. */
export async function exportEval(o: EvalExportOptions): Promise<number> {
  if (o.n < 1) throw new UserError(`--n must be at least 1, got ${o.n}`);
  let made: readonly TaskType[];
  try {
    made = spaceFamily(o.family).types;
  } catch (e) {
    throw new UserError(`--family: ${(e as Error).message}`);
  }
  const types = (o.types ?? [...made]) as TaskType[];
  const bad = types.find((t) => !(TASK_TYPES as readonly string[]).includes(t) || !made.includes(t));
  if (bad !== undefined) throw new UserError(`--types: family '${o.family}' makes ${made.join(', ')}, not '${bad}'`);
  const sandbox = await createSandbox();
  try {
    // Balanced to the default mastery rule's aim, as a run with the default rule balances its sets.
    const mastery = masteryConfigSchema.parse({});
    const aim = mastery.learnAt - mastery.margin;
    const { tasks } = await evalSet(sandbox, {
      family: o.family,
      level: o.level,
      types,
      n: o.n,
      seed: o.seed,
      aim,
    }).catch((e: Error) => {
      throw new UserError(e.message.split('\n')[0]!);
    });
    const rows = tasks.map((task) => ({
      task,
      step: 0,
      compact: renderCompact(task),
      natural: renderNatural(task),
      attempts: 0,
      solved: 0,
    }));
    return await exportTaskRows(rows, o.out, o.format, { view: o.view, exclude: o.exclude });
  } finally {
    await sandbox.close();
  }
}

/** `cogen export --what eval` from the command line's options: writes the set and says so on stderr. */
export async function exportEvalCommand(
  o: Omit<EvalExportOptions, 'family' | 'level'> & { family?: string; level?: number; shown: string },
): Promise<void> {
  if (o.family === undefined || o.level === undefined) throw new UserError('--what eval needs --family and --level');
  const n = await exportEval({
    family: o.family,
    level: o.level,
    n: o.n,
    seed: o.seed,
    types: o.types,
    out: o.out,
    format: o.format,
    view: o.view,
    exclude: o.exclude,
  });
  process.stderr.write(
    `wrote ${n} eval tasks of ${o.family} at level ${o.level} (seed ${o.seed}) to ${o.shown} (${o.format})\n`,
  );
}

/** The run a run's export (`--what` other than eval) reads; eval's options are refused in one line. */
export function exportedRun(o: {
  what: string;
  run?: string;
  family?: string;
  level?: number;
  types?: string[];
}): string {
  if (o.run === undefined) throw new UserError(`--what ${o.what} needs --run <id>`);
  if (o.family !== undefined || o.level !== undefined || o.types !== undefined)
    throw new UserError('--family, --level and --types go with --what eval');
  return o.run;
}
