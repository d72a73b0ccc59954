// `cogen export --view compact`: tasks in the built-in solver's view, for supervised training of a
// model outside cogen (docs/train-your-own-model.md). A row's prompt is the task's compact rendering
// in the solver's tokens, `<sep>` before the last, and its completion the reference answer in them, `<eos>`
// last: the rule is src/solver/served-view.ts's, the same `cogen serve` uses for `view: "compact"`.
// `--exclude-probes <run>` leaves out the held-out probes of a run (drawn again from its config,
// src/run/draw-probes.ts), so that a model trained on the rows is measured on tasks it never saw.
import { compactProgram, renderCompact } from '../generators/index.js';
import { answerShape, referenceAnswer, type Task } from '../core/task.js';
import { UserError } from '../core/errors.js';
import { VIEW_RULE, viewAnswer, viewPrompt } from './solver/index.js';
import { RECORD_KINDS, writeExport, type ExportFormat, type RecordKind } from './export.js';
import type { TaskRow } from './run/index.js';

export const EXPORT_VIEWS = ['chat', 'compact'] as const;
export type ExportView = (typeof EXPORT_VIEWS)[number];

/** One task in the solver's view: what SFT trains on, and the reference answer as text. */
export interface CompactRecord {
  id: string;
  type: Task['type'];
  family: string;
  level: number;
  skills: string[];
  /** The solver's tokens of the compact rendering joined by one space (the space token written ␣), `<sep>` before the last token. */
  prompt: string;
  /** The reference answer's tokens in the same view, `<eos>` last. */
  completion: string;
  answer: string;
  /** The view's name (src/solver/tokenizer.ts VIEW). */
  view: string;
}

/**
 * The reference answer the solver writes: a program on one line (compactProgram, as the compact
 * rendering writes programs; the stored program may span lines the solver has no token for), any
 * other answer as the chat view's.
 */
export const viewReference = (task: Task): string =>
  task.type === 'induction' ? compactProgram(task.program) : referenceAnswer(task);

export function toCompactRecord(row: TaskRow): CompactRecord {
  const t = row.task;
  const prompt = viewPrompt(renderCompact(t)).text;
  const completion = viewAnswer(answerShape(t), viewReference(t));
  return {
    id: t.id,
    type: t.type,
    family: t.family,
    level: t.level,
    skills: t.skills,
    prompt,
    completion,
    answer: referenceAnswer(t),
    view: VIEW_RULE.name,
  };
}

const chatTasks = RECORD_KINDS.tasks as RecordKind<TaskRow>;

/** Tasks in the compact view: jsonl writes the record above; trl the chat view's columns with prompt and completion in the view. */
const compactTasks: RecordKind<TaskRow> = {
  rows: chatTasks.rows,
  extraInfo: chatTasks.extraInfo,
  toExported(row, index) {
    const chat = chatTasks.toExported(row, index);
    const record = toCompactRecord(row);
    return { record, trl: { ...chat.trl, prompt: record.prompt, completion: record.completion }, verl: chat.verl };
  },
};

/** Writes task rows in a view, less the tasks whose ids are in `exclude`; returns how many. */
export function exportTaskRows(
  rows: TaskRow[],
  out: string,
  format: ExportFormat,
  opts: { view?: ExportView; exclude?: ReadonlySet<string> } = {},
): Promise<number> {
  const kept = opts.exclude ? rows.filter((r) => !opts.exclude!.has(r.task.id)) : rows;
  return writeExport(opts.view === 'compact' ? compactTasks : chatTasks, kept, out, format);
}

/** Refuses, in one line, a view or probe exclusion the export cannot honour. */
export function checkViewOptions(o: { what: string; format: string; view: string; excludeProbes?: string }): void {
  const tasks = o.what === 'tasks' || o.what === 'eval';
  if (o.view === 'compact' && !tasks)
    throw new UserError(`--view compact writes tasks (--what tasks or eval), not ${o.what}`);
  if (o.view === 'compact' && o.format === 'parquet')
    throw new UserError("--view compact writes jsonl or trl rows (parquet is veRL's chat layout)");
  if (o.excludeProbes !== undefined && !tasks)
    throw new UserError(`--exclude-probes leaves a run's probes out of tasks (--what tasks or eval), not ${o.what}`);
}
