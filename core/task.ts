// The task model shared by every room (DESIGN.md, "Tasks"). Plain data: no behaviour lives here.

/** A JSON-like value: what programs take and return, and what literal answers are. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export const TASK_TYPES = ['deduction', 'abduction', 'induction'] as const;
export type TaskType = (typeof TASK_TYPES)[number];

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

export type Task = DeductionTask | AbductionTask | InductionTask;

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

/** The shape the answer must take, which the solver's constrained decoding follows. */
export type AnswerKind = 'literal' | 'program';
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
