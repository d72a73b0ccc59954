// The executor's interface (DESIGN.md, "Sandbox"). Every program cogen runs goes through it.
import type { Json } from '../src/task.js';

export interface Limits {
  /** CPU deadline per call, in milliseconds (interrupt handler). */
  timeoutMs: number;
  /** Memory cap of the QuickJS runtime, in bytes. */
  memoryBytes: number;
  /** Stack cap of the QuickJS runtime, in bytes. */
  stackBytes: number;
  /** Cap on the JSON-serialised result, in bytes. */
  maxOutputBytes: number;
}

export const FAILURE_REASONS = [
  'syntax',
  'runtime-error',
  'timeout',
  'memory',
  'stack',
  'output-too-large',
  'non-serialisable',
  'forbidden',
  'nondeterministic',
  'trivial',
  'no-function',
  'worker-crashed',
  'closed',
] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

export type RunResult =
  | { ok: true; value: Json }
  | { ok: false; reason: FailureReason; detail: string };

/** One call: `program` declares `function f(...)`; the result is `f(...args)`. */
export interface Job {
  program: string;
  args: Json[];
}

export interface Sandbox {
  run(program: string, args: Json[], limits?: Partial<Limits>): Promise<RunResult>;
  /** Runs many jobs across the worker pool; results are in job order. */
  runMany(jobs: Job[], limits?: Partial<Limits>): Promise<RunResult[]>;
  readonly limits: Limits;
  close(): Promise<void>;
}

export interface SandboxOptions {
  /** Worker threads in the pool; default: number of cores. */
  workers?: number;
  limits?: Partial<Limits>;
}
