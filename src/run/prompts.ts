// The prompt the solver is asked a task in: its rendering, its answer's kind and type, and, for a
// solver that writes its working (solver.working), the working's template (generators/working.ts).
// Training, the probes and the level sets all ask through here, so that a task is asked alike.
import { answerKind, answerShape, type Task } from '../../core/task.js';
import { workingShape } from '../../generators/index.js';
import type { PolicyPrompt, SolverConfig } from '../solver/index.js';

export function taskPrompt(task: Task, text: string, working: SolverConfig['working'] = 'off'): PolicyPrompt {
  const work = working === 'off' ? undefined : workingShape(task, working);
  return { text, kind: answerKind(task.type), shape: answerShape(task), ...(work ? { work } : {}) };
}
