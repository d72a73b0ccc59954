// What a served run keeps between requests and restarts, and how it refuses a request: the parts
// of src/server/served-run.ts that are plain data.

/** A request the run cannot honour: the HTTP layer answers it with `status` and the message. */
export class ServeError extends Error {
  constructor(readonly status: 404 | 409 | 422, message: string) {
    super(message);
  }
}

/** What survives a restart besides the rows: the state every request moves forward. */
export interface ServedState {
  rng: [number, number, number, number];
  controller: unknown;
  mastery: unknown;
  /** Score requests applied (the served step). */
  step: number;
  /** Groups fed to the controller; probe rounds count these. */
  groups: number;
  /** Groups whose task had no open issue (expired, or scored already): recorded, not fed. */
  unfed: number;
  completions: number;
  solved: number;
  issued: number;
  /** The last probe round reported (−1: none yet). */
  probeRound: number;
  probeAccuracy: number | null;
  /** The learned proposer's preferences, baselines and drafts awaiting their scores (only when it is on). */
  proposer?: unknown;
}

export interface ServedRunOptions {
  runsDir: string;
  preset: string;
  runId?: string;
  resume?: boolean;
  log?: (line: string) => void;
  /** The clock for time-to-live (tests move it). */
  now?: () => number;
}

