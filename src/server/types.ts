// What a served run hands to trainers and takes back: the shapes of tasks, scores and probe
// reports, and a task rendered as chat messages.
import { renderNatural, solverSystemPrompt } from '../../generators/index.js';
import { answerKind, answerShape, isBridgedProblem, type Task } from '../../core/task.js';

export interface ChatMessage {
  role: 'system' | 'user';
  content: string;
}

export interface ServedTask {
  id: string;
  type: Task['type'];
  family: string;
  level: number;
  skills: string[];
  prompt: ChatMessage[];
  answer_kind: 'literal' | 'program';
  answer_shape: string;
}

export interface ScoreItem {
  task_id: string;
  completion: string;
}

export interface ScoreResult {
  task_id: string;
  reward: number;
  reason: string | null;
  answer: string;
}

export interface ScoreResponse {
  step: number;
  results: ScoreResult[];
  replayed: boolean;
}

export interface ProbeReport {
  round: number;
  accepted: boolean;
  detail: string | null;
  accuracy: number | null;
  per_skill: Record<string, number>;
  events: { skill_id: string; event: 'learned' | 'forgotten'; accuracy: number }[];
}

/** The natural-language prompt of a task as chat messages: the solver's instructions, then the task. */
export function servedTask(task: Task): ServedTask {
  const kind = answerKind(task.type);
  return {
    id: task.id,
    type: task.type,
    family: task.family,
    level: task.level,
    skills: task.skills,
    prompt: [
      { role: 'system', content: solverSystemPrompt(isBridgedProblem(task) ? 'text' : kind) },
      { role: 'user', content: renderNatural(task) },
    ],
    answer_kind: kind,
    answer_shape: answerShape(task),
  };
}
