// The environment model (docs/DESIGN.md, "Environments"): plain data that can be stored, exported
// and replayed. A spec holds everything an episode needs (the hidden program, the tests, the
// budgets), so an episode is a pure function of the spec, the seed and the actions (and the
// sandbox, which meters in interpreter steps, never wall-clock time).
import type { EnvKind, Example, Json } from '../core/task.js';

export { ENV_KINDS, type EnvKind } from '../core/task.js';

/** How many turns an episode may take, and how many tool calls (submit aside) it may make. */
export interface EnvBudgets {
  turns: number;
  calls: number;
}

interface SpecBase {
  /** Stable id: sha of kind, the program's canonical hash and the question. */
  id: string;
  kind: EnvKind;
  family: string;
  level: number;
  /** `env.<kind>` first, then the code skills of the hidden program. */
  skills: string[];
  /** The hidden program (source text declaring f). */
  program: string;
  /** Canonical hash of `program`, for dedup. */
  hash: string;
  /** Argument types of f, one value type each (core/task.ts valueType): what a call must pass. */
  argTypes: string[];
  /** Interpreter steps one call or one answer's verification may spend (the source task's budget). */
  stepBudget: number;
  budgets: EnvBudgets;
}

/** Find f by calling it, then write it: reward = share of `tests` the submitted program passes. */
export interface ProbeSpec extends SpecBase {
  kind: 'probe';
  tests: Example[];
}

/** Fix `buggy` (a mutation of `program`, which is the reference): visible tests to run, hidden tests to pass. */
export interface RepairSpec extends SpecBase {
  kind: 'repair';
  buggy: string;
  /** The mutation operator that planted the bug. */
  bug: string;
  visible: Example[];
  /**
   * What `buggy` returns on each visible test it fails (resultText), null where it passes: the
   * failing report a bug comes with. Absent in specs stored by an older cogen (their prompts show none).
   */
  got?: (string | null)[];
  tests: Example[];
}

/** Find an argument list x with f(...x) deep-equal to `target`; `answer` is one such x. */
export interface SearchSpec extends SpecBase {
  kind: 'search';
  target: Json;
  answer: Json[];
}

export type EnvSpec = ProbeSpec | RepairSpec | SearchSpec;

/** A tool in the OpenAI function-calling shape; `parameters` is JSON Schema. */
export interface ToolSchema {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/**
 * One action: a tool call as a model writes it. `arguments` is JSON text (what OpenAI-style tool
 * calls carry) or an already parsed object; text that is not JSON ends the episode as malformed.
 */
export interface EnvAction {
  name: string;
  arguments: string | Record<string, unknown>;
}

export interface EnvObservation {
  /** The first prompt: what the agent is asked to do, with the program or tests it may see. */
  text: string;
  tools: ToolSchema[];
}

export interface StepInfo {
  turn: number;
  callsLeft: number;
  /** Why the episode ended (absent while it runs, and on a reward of 1). */
  reason?: string;
}

export interface StepResult {
  /** The tool's result as text (what a chat transcript's `tool` message carries). */
  observation: string;
  /** 0 until the episode ends; then the final verified reward in [0, 1]. */
  reward: number;
  done: boolean;
  info: StepInfo;
}

/** A played episode: enough to replay it (spec, seed, actions) and to export it as a chat. */
export interface Trajectory {
  envId: string;
  kind: EnvKind;
  family: string;
  level: number;
  seed: number;
  prompt: string;
  tools: ToolSchema[];
  steps: {
    action: { name: string; arguments: string };
    observation: string;
    reward: number;
    done: boolean;
    reason?: string;
  }[];
  reward: number;
  done: boolean;
  reason?: string;
}
