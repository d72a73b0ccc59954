// The task model shared by every room (docs/DESIGN.md, "Tasks"). Plain data: no behaviour lives
// here.

/** A JSON-like value: what programs take and return, and what literal answers are. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The three questions about a program (Absolute Zero's task types); what "all task types" defaults to. */
export const CODE_TASK_TYPES = ['deduction', 'abduction', 'induction'] as const;
export type CodeTaskType = (typeof CODE_TASK_TYPES)[number];
export const TASK_TYPES = [...CODE_TASK_TYPES, 'problem'] as const;
export type TaskType = (typeof TASK_TYPES)[number];

/** The kinds of agentic environment (envs/): on the ground floor because a curriculum arm is a task type or one of them. */
export const ENV_KINDS = ['probe', 'repair', 'search'] as const;
export type EnvKind = (typeof ENV_KINDS)[number];

/** An input is the list of arguments passed to `f`: `f(...input)`. */
export type Input = Json[];
export interface Example {
  input: Input;
  output: Json;
}

/** Where a mutated or replayed task came from (lineage → DERIVED_FROM in the skill graph). */
export interface Parent {
  id: string;
  op: string;
  /** The second parent of a crossover. */
  mate?: string;
}

interface TaskBase {
  /** Stable id: derived from the canonical hash and the question, so equal tasks have equal ids. */
  id: string;
  family: string;
  level: number;
  skills: string[];
  /** Source text of a pure JavaScript function declaration named `f`. */
  program: string;
  /** Canonical hash of the program (whitespace- and identifier-normalised), for dedup. */
  hash: string;
  parent: Parent | null;
  /** Who proposed it: 'generator', 'mutation', 'llm:<model>'. */
  proposer: string;
  /**
   * Interpreter steps an answer's verification may spend (sandbox/budget.ts): clamp(factor × the
   * reference's measured cost, floor, cap), set by validation. Absent on tasks made before budgets
   * (they get the cap).
   */
  budget?: number;
}

/** Given f and an input x, answer f(x). Reference answer: `output`. */
export interface DeductionTask extends TaskBase {
  type: 'deduction';
  input: Input;
  output: Json;
}

/** Given f and an output y, answer some x' (an argument list) with f(...x') ≡ y. Reference: `input`. */
export interface AbductionTask extends TaskBase {
  type: 'abduction';
  input: Input;
  output: Json;
}

/** Given visible pairs and a message, answer a program g; checked on hidden pairs. Reference: `program`. */
export interface InductionTask extends TaskBase {
  type: 'induction';
  visible: Example[];
  hidden: Example[];
  message: string;
}

/** A verified problem: a statement, a verifier, a reference witness and near misses it must reject. */
export interface ProblemTask extends TaskBase {
  type: 'problem';
  /** The problem in words (for LLMs and exports). */
  statement: string;
  /** The structured instance the verifier reads. */
  data: Json;
  /** The reference answer; the verifier scores it 1. */
  witness: Json;
  /** Near-miss answers the verifier must score < 1 (validation checks each). */
  failures: Json[];
  /**
   * 'program': the task's `program` is `function f(answer, data) -> score in [0,1]`, run in the
   * sandbox; 'reasoning-gym:<dataset>': scored by the Reasoning Gym bridge's worker.
   */
  verifier: string;
}

/** A question about a program (the three code task types). */
export type CodeTask = DeductionTask | AbductionTask | InductionTask;
export type Task = CodeTask | ProblemTask;

/** The verifier prefix of problems scored by the Reasoning Gym bridge (their answers are free text). */
export const BRIDGED_VERIFIER_PREFIX = 'reasoning-gym:';
export const isBridgedProblem = (task: Task): boolean =>
  task.type === 'problem' && task.verifier.startsWith(BRIDGED_VERIFIER_PREFIX);

/** What the proposer hands to validation before outputs are known (outputs come from the sandbox). */
export interface TaskDraft {
  type: TaskType;
  family: string;
  level: number;
  skills: string[];
  program: string;
  /** deduction/abduction: exactly one input; induction: visible inputs then hidden inputs. */
  inputs: Input[];
  /** induction only: how many of `inputs` are shown. */
  visibleCount?: number;
  /** induction only: the short hint shown with the pairs. */
  message?: string;
  parent?: Parent | null;
  proposer?: string;
}

/**
 * A problem draft (validation: the verifier `program`, f(answer, data), must score the witness 1
 * and every failure < 1, deterministically, within limits).
 */
export interface ProblemDraft {
  type: 'problem';
  family: string;
  level: number;
  skills: string[];
  /** Source of `function f(answer, data)` returning a score in [0, 1]. */
  program: string;
  statement: string;
  data: Json;
  witness: Json;
  failures: Json[];
  parent?: Parent | null;
  proposer?: string;
}

/** Any draft validation accepts. */
export type AnyDraft = TaskDraft | ProblemDraft;

/** The shape the answer must take, which the solver's constrained decoding follows. */
export type AnswerKind = 'literal' | 'program';
/** Every argument list a code task calls f with: its input, or an induction's examples, shown and hidden. */
export const argumentLists = (task: CodeTask): Input[] =>
  task.type === 'induction' ? [...task.visible, ...task.hidden].map((e) => e.input) : [task.input];

export const answerKind = (type: TaskType): AnswerKind => (type === 'induction' ? 'program' : 'literal');

/**
 * The answer's type, for the built-in solver's typed decoding (abduction's natural rendering states
 * it too; deduction's is f's return type): 'program', 'literal' (any JSON literal), a value type
 * (int | num | bool | str | null | arr | obj), or a tuple of value types such as `[int,str]` for an
 * argument list. Deduction: the type of f's output; abduction: the types of f's arguments.
 */
export type AnswerShape = string;

export function valueType(x: Json): string {
  if (typeof x === 'number') return Number.isInteger(x) ? 'int' : 'num';
  if (typeof x === 'boolean') return 'bool';
  if (typeof x === 'string') return 'str';
  if (x === null) return 'null';
  return Array.isArray(x) ? 'arr' : 'obj';
}

export function answerShape(task: Task): AnswerShape {
  switch (task.type) {
    case 'deduction':
      return valueType(task.output);
    case 'abduction':
      return `[${task.input.map(valueType).join(',')}]`;
    case 'induction':
      return 'program';
    case 'problem':
      return isBridgedProblem(task) ? 'str' : valueType(task.witness);
  }
}

/** The reference answer as the solver would write it. */
export function referenceAnswer(task: Task): string {
  switch (task.type) {
    case 'deduction':
      return JSON.stringify(task.output);
    case 'abduction':
      return JSON.stringify(task.input);
    case 'induction':
      return task.program;
    case 'problem':
      // A bridged problem's answer is free text: its witness string as it is.
      return isBridgedProblem(task) && typeof task.witness === 'string' ? task.witness : JSON.stringify(task.witness);
  }
}

/** The result of checking one answer: reward in [0, 1], and why when it is not 1. */
export interface Verdict {
  reward: number;
  reason?: string;
}

export interface Skill {
  id: string;
  family: string;
  name: string;
  description: string;
  /** Prerequisite skill ids (REQUIRES edges). */
  requires: string[];
  /** The lowest level at which tasks exercise this skill. */
  level: number;
}
