// Group commit for a served run: many small changes, one transaction per turn of the event loop.
// A change is applied in memory by its caller and handed here as a write; every write queued in one
// turn runs in one transaction, closed by `seal` (which writes the state that includes them all),
// and each caller's promise settles only after that transaction. A commit that fails stops
// everything: the store keeps its last commit, and no later write is taken.
export class GroupCommit {
  private queue: { write: () => void; resolve: () => void; reject: (e: Error) => void }[] = [];
  /** Set once a commit failed. */
  failed: Error | null = null;

  constructor(
    private readonly opts: {
      /** Runs the writes, then the seal, in one transaction. */
      transaction: (fn: () => void) => void;
      /** The last write of every transaction (the state snapshot). */
      seal: () => void;
      /** Why the run stopped, from the error of the failed commit. */
      failure: (e: Error) => Error;
      /** After each successful commit. */
      committed: () => void;
    },
  ) {}

  /** Queues a write of a change already applied in memory; resolves once it is committed. */
  persist(write: () => void): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ write, resolve, reject });
      if (this.queue.length === 1) setImmediate(() => this.commit());
    });
  }

  /** Commits what is queued now (the next turn would have). */
  commit(): void {
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    try {
      if (this.failed) throw this.failed;
      this.opts.transaction(() => {
        for (const w of batch) w.write();
        this.opts.seal();
      });
    } catch (e) {
      this.failed ??= this.opts.failure(e as Error);
      for (const w of batch) w.reject(this.failed);
      return;
    }
    for (const w of batch) w.resolve();
    this.opts.committed();
  }
}
