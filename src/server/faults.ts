// Fault points that tests and the chaos bench arm (docs/scale-out.md, "Faults of the services"):
// each names the idempotency key of the request (or the run) it strikes, so that the caller knows exactly where
// the process stopped or died. Nothing is armed unless asked (hidden options of `cogen serve`, or
// their COGEN_FAULT_* variables); random kills rarely land between a commit and its reply, and a
// pause inside the writer lock must be certain to hold it.
export interface Faults {
  /** SIGKILL this process once the request with this key is committed, before it is answered. */
  killAfterCommit?: string;
  /** SIGSTOP this process inside the writer lock, the request with this key applied and not yet written (SIGCONT goes on). */
  pauseInLock?: string;
  /** SIGSTOP this process inside the creation lock of the run with this id, before it draws the run's probes. */
  pauseInCreation?: string;
}

/** Strikes `point` when it is armed for `key` (a request's idempotency key, or a run id), once: a retry on the same process passes. */
export function strike(faults: Faults | undefined, point: keyof Faults, key: string | undefined): void {
  if (key === undefined || faults?.[point] !== key) return;
  faults[point] = undefined;
  process.kill(process.pid, point === 'killAfterCommit' ? 'SIGKILL' : 'SIGSTOP');
}
