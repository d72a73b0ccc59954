// What the three kinds share: tool definitions (zod schemas, which give the JSON Schema too), the
// sandbox calls an episode makes, argument type checks, and random valid values.
import { z } from 'zod';
import type { Rng } from '../../core/rng.js';
import { valueType, type Example, type InductionTask, type Json, type Task } from '../../core/task.js';
import {
  normaliseProgram,
  verifyAnswer,
  type RunResult,
  type Sandbox,
  type DetailedVerdict,
} from '../../sandbox/index.js';
import type { EnvAction, EnvBudgets, EnvSpec, ToolSchema } from '../types.js';

/** The fields every spec has (the kind's own come from its build). */
export type SpecBase = Pick<
  EnvSpec,
  'id' | 'family' | 'level' | 'skills' | 'program' | 'hash' | 'argTypes' | 'stepBudget' | 'budgets'
>;

/** A tool: its name, what it does, and its arguments' schema (validated here, published as JSON Schema). */
export interface ToolDef {
  name: string;
  description: string;
  args: z.ZodObject;
}

/** What a tool call did: a result to show, or the end of the episode with the final reward. */
export type Outcome = { text: string; end?: undefined } | { end: true; text: string; reward: number; reason?: string };

export interface KindImpl<S extends EnvSpec = EnvSpec> {
  kind: S['kind'];
  /** The single-turn task type a spec is built from. */
  source: 'induction' | 'abduction';
  tools: ToolDef[];
  budgets(level: number): EnvBudgets;
  /**
   * The kind's part of a spec, from a validated source task (its program, tests and budget are in
   * `base`), and the question that identifies it beside the program's hash; or why this task cannot
   * make one.
   */
  build(sandbox: Sandbox, task: Task, base: SpecBase, rng: Rng): Promise<{ spec: S; question: string } | string>;
  /** The first prompt; `seed` may pick what is shown. */
  prompt(spec: S, seed: number): string;
  /** Type checks beyond the schema (argument lists against f's types): why the call is malformed, or null. */
  check(spec: S, name: string, args: Record<string, unknown>): string | null;
  act(sandbox: Sandbox, spec: S, name: string, args: Record<string, unknown>): Promise<Outcome>;
  /** The scripted reference policy: actions that reach reward 1 within the budget. */
  reference(spec: S): EnvAction[];
  /** One random action that passes every check (a submit once no call is left). */
  random(spec: S, rng: Rng, callsLeft: number): EnvAction;
}

/** Longest tool result shown to the agent: flooding output cannot flood the transcript. */
export const MAX_OBSERVATION_CHARS = 600;
/** Longest program an agent may submit or test (as for generated tasks). */
export const MAX_PROGRAM_CHARS = 4000;

export const programArg = z
  .string()
  .min(1)
  .max(MAX_PROGRAM_CHARS)
  .describe('JavaScript source declaring function f, or an arrow function');
export const argList = z.array(z.any()).max(8).describe('the argument list, as a JSON array, e.g. [3, "ab"]');

export function toolSchema(t: ToolDef): ToolSchema {
  const parameters = z.toJSONSchema(t.args) as Record<string, unknown>;
  delete parameters.$schema;
  return { type: 'function', function: { name: t.name, description: t.description, parameters } };
}

// Not core/text.ts's clip: a cut observation also says how many characters were left out.
export const clip = (s: string, n = MAX_OBSERVATION_CHARS): string =>
  s.length <= n ? s : `${s.slice(0, n)}… (${s.length - n} more characters cut)`;

const show = (x: Json): string => clip(JSON.stringify(x), 200);
export const callText = (args: Json[]): string => `f(${args.map((a) => show(a)).join(', ')})`;
export const exampleText = (e: Example): string => `${callText(e.input)} = ${show(e.output)}`;

const fits = (want: string, x: unknown): boolean => {
  const got = valueType(x as Json);
  return got === want || (want === 'num' && got === 'int');
};

/** Why an argument list does not fit f's argument types, or null. */
export function checkArgList(argTypes: string[], args: unknown): string | null {
  if (!Array.isArray(args)) return 'the argument list must be a JSON array';
  if (args.length !== argTypes.length)
    return `f takes ${argTypes.length} argument(s) (${argTypes.join(', ')}), got ${args.length}`;
  const bad = args.findIndex((a, i) => !fits(argTypes[i]!, a));
  return bad < 0 ? null : `argument ${bad + 1} must be of type ${argTypes[bad]}, got ${valueType(args[bad] as Json)}`;
}

/** A limit failure: the program looped, grew too large, recursed too deep or printed too much. */
export const isHostile = (reason: string | undefined): boolean =>
  /^(timeout|memory|stack|output-too-large)\b/.test(reason ?? '');

/** Calls the hidden (trusted) program once with the spec's step budget. */
export async function callHidden(sandbox: Sandbox, spec: EnvSpec, args: Json[]): Promise<RunResult> {
  const [r] = await runAll(sandbox, spec.program, [args], spec.stepBudget);
  return r!;
}

/** Runs a program on inputs in one fresh context, all calls sharing `budget` steps. */
export async function runAll(
  sandbox: Sandbox,
  program: string,
  inputs: Json[][],
  budget: number,
): Promise<RunResult[]> {
  const job = { program, inputs, budget, budgetPer: 'task' as const };
  if (sandbox.runTasksMetered) return (await sandbox.runTasksMetered([job]))[0]!.results;
  if (sandbox.runTasks) return (await sandbox.runTasks([job]))[0]!;
  return sandbox.runMany(inputs.map((args) => ({ program, args })));
}

export const resultText = (r: RunResult): string =>
  r.ok ? show(r.value) : `error (${r.reason}: ${clip(r.detail, 160)})`;

/** The single-turn task fields of a spec, for verifying an answer the way a task's answer is verified. */
export const taskBase = (spec: EnvSpec) => ({
  id: spec.id,
  family: spec.family,
  level: spec.level,
  skills: spec.skills,
  program: spec.program,
  hash: spec.hash,
  parent: null,
  proposer: 'env',
  budget: spec.stepBudget,
});

export async function scoreProgram(
  sandbox: Sandbox,
  spec: EnvSpec,
  tests: Example[],
  answer: string,
): Promise<DetailedVerdict> {
  const task: InductionTask = {
    ...taskBase(spec),
    type: 'induction',
    visible: [],
    hidden: tests,
    message: '',
  };
  return verifyAnswer(sandbox, task, answer);
}

/** The end of an episode after a submitted program is verified on hidden tests. */
export function submitOutcome(v: DetailedVerdict): Outcome {
  const passed = v.passed ?? 0;
  const total = v.total ?? 0;
  if (isHostile(v.reason))
    return {
      end: true,
      reward: 0,
      reason: `hostile: the submitted program hit a limit (${v.reason})`,
      text: `rejected: ${clip(v.reason!, 200)}`,
    };
  const reward = total > 0 ? passed / total : 0;
  const text = `passed ${passed} of ${total} hidden tests`;
  return reward === 1
    ? { end: true, reward: 1, text }
    : { end: true, reward, reason: clip(v.reason ?? 'wrong', 200), text };
}

/** Is this text a program the induction verifier would accept as one? (Only its shape, not its behaviour.) */
export const programShapeError = (text: string): string | null => {
  const n = normaliseProgram(text);
  return n.ok ? null : n.reason;
};

/** A random value of a value type (small, so that random calls stay cheap). */
export function randomValue(rng: Rng, type: string): Json {
  switch (type) {
    case 'int':
    case 'num':
      return rng.int(-5, 12);
    case 'bool':
      return rng.bool();
    case 'str':
      return Array.from({ length: rng.int(0, 4) }, () => rng.pick(['a', 'b', 'c', 'x', 'y'])).join('');
    case 'arr':
      return Array.from({ length: rng.int(0, 4) }, () => rng.int(0, 9));
    case 'null':
      return null;
    default:
      return {};
  }
}

export const randomArgs = (rng: Rng, argTypes: string[]): Json[] => argTypes.map((t) => randomValue(rng, t));

export const action = (name: string, args: Record<string, unknown>): EnvAction => ({
  name,
  arguments: JSON.stringify(args),
});
