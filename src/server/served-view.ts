// Which view a served task is written in (docs/train-your-own-model.md, "The solver's view over
// HTTP"): `chat`, the default, as chat messages for an LLM (types.ts `servedTask`); `compact`, the
// built-in solver's own tokens written as text, for a model trained on them (the rule's one home is
// src/solver/served-view.ts). A completion sent in the compact view is mapped back to its answer
// text here (its numbers by its task's answer shape), before anything else sees it; from there it is
// scored as any other.
import { HTTPException } from 'hono/http-exception';
import { renderCompact } from '../../generators/index.js';
import { answerKind, answerShape, type Task } from '../../core/task.js';
import { VIEW_RULE, answerFromView, viewAnswerText, viewPrompt } from '../solver/index.js';
import { servedTask, type ScoreItem, type ServedTask } from './types.js';

export const TASK_VIEWS = ['chat', 'compact'] as const;
export type TaskView = (typeof TASK_VIEWS)[number];

/** A task in the solver's view: its prompt as view text (`<sep>` before its last token), and the ids a tokenizer from GET /v1/tokenizer reads it as. */
export interface CompactTask extends Omit<ServedTask, 'prompt'> {
  prompt: string;
  prompt_ids: number[];
}

export function compactTask(task: Task): CompactTask {
  const { text, ids } = viewPrompt(renderCompact(task));
  return {
    id: task.id,
    type: task.type,
    family: task.family,
    level: task.level,
    skills: task.skills,
    prompt: text,
    prompt_ids: ids,
    answer_kind: answerKind(task.type),
    answer_shape: answerShape(task),
  };
}

/** A task as the view writes it. */
export type TaskIn<V extends TaskView> = V extends 'compact' ? CompactTask : ServedTask;
export const taskIn = <V extends TaskView>(view: V, task: Task): TaskIn<V> =>
  (view === 'compact' ? compactTask(task) : servedTask(task)) as TaskIn<V>;

/** The rule a response in the compact view states (nothing in the chat view, whose responses stay as they were). */
export const viewField = (view: TaskView): { view?: typeof VIEW_RULE } =>
  view === 'compact' ? { view: VIEW_RULE } : {};

/**
 * Items as the run scores them: in the chat view as sent; in the compact view each completion mapped
 * back to its answer text (its task's answer shape says how its numbers are written). A completion
 * with a word that is no token is refused: 400, naming the item.
 */
export async function itemsIn(
  view: TaskView,
  items: ScoreItem[],
  field: string,
  taskOf: (id: string) => Promise<Task | undefined>,
): Promise<ScoreItem[]> {
  if (view === 'chat') return items;
  return Promise.all(
    items.map(async (it, i) => ({
      task_id: it.task_id,
      completion: answerIn(view, it.completion, `${field}.${i}.completion`, await taskOf(it.task_id)),
    })),
  );
}

/**
 * One completion as answer text (see itemsIn). For a task the run does not know the text is left as
 * the tokens spell it: scoring refuses the id.
 */
export function answerIn(view: TaskView, completion: string, field: string, task: Task | undefined): string {
  if (view === 'chat') return completion;
  const text = viewAnswerText(completion);
  if (typeof text !== 'string') throw new HTTPException(400, { message: `${field}: ${text.error}` });
  return task ? answerFromView(answerShape(task), text) : text;
}
