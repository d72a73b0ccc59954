// The one writer of a served run (docs/DESIGN.md, "Serving trainers"; docs/scale-out.md). Changes
// of the run's state (tasks handed out, scores, probe reports) queue here; each batch runs as one
// writer transaction: it takes the run's writer lock, brings the in-memory state up to the store's
// (another replica may have written since), applies every queued change in order on top of it,
// writes their rows with the new state snapshot, and commits; only then does each caller answer. So
// every step is applied by one writer on the state the step before left, whichever replica took the
// request. A batch that fails answers every caller with a StoreError (a 503): nothing of it was
// acknowledged. With SQLite that stops the run (restart with --resume); with PostgreSQL the next
// batch reloads the state from the store and goes on.
import {
  StoreError,
  type StoredRequest,
  type Prefetch,
  type ServedRecords,
  type WriteOp,
  type WriterTx,
} from '../run/index.js';

/** What a change reads inside the lock: the prefetched rows, with the changes of this batch before it. */
export class CommitView {
  private readonly taken = new Map<string, number>();
  private readonly deltas = new Map<string, { solved: number; attempts: number }>();
  private readonly noted = new Map<string, StoredRequest>();

  constructor(
    private readonly pre: Prefetch,
    readonly now: number,
  ) {}

  /** A stored request: committed before, or written by an earlier change of this batch. */
  request(key: string): StoredRequest | undefined {
    return this.noted.get(key) ?? this.pre.requests.get(key);
  }

  /** Records a request this batch writes, so that a duplicate later in the batch replays it. */
  noteRequest(req: StoredRequest): void {
    this.noted.set(req.key, req);
  }

  /** The oldest open issue of a task that no earlier change of this batch took. */
  takeOpenIssue(taskId: string): number | undefined {
    const n = this.taken.get(taskId) ?? 0;
    const id = this.pre.openIssues.get(taskId)?.[n];
    if (id !== undefined) this.taken.set(taskId, n + 1);
    return id;
  }

  /** A task's cumulative score, counting the earlier changes of this batch. */
  score(taskId: string): { solved: number; attempts: number } {
    const base = this.pre.scores.get(taskId) ?? { solved: 0, attempts: 0 };
    const d = this.deltas.get(taskId) ?? { solved: 0, attempts: 0 };
    return { solved: base.solved + d.solved, attempts: base.attempts + d.attempts };
  }

  addScore(taskId: string, solved: number, attempts: number): void {
    const d = this.deltas.get(taskId) ?? { solved: 0, attempts: 0 };
    this.deltas.set(taskId, { solved: d.solved + solved, attempts: d.attempts + attempts });
  }
}

export interface Change<T> {
  /** Idempotency keys the change looks up inside the lock. */
  keys?: string[];
  /** Task ids whose open issues and scores the change reads (one entry per group it scores). */
  taskIds?: string[];
  /** Only reads the state (a batch of reads alone takes no lock). */
  read?: boolean;
  /** Applies the change to the in-memory state, brought up to date; returns its answer and its writes. */
  apply(view: CommitView): Promise<{ result: T; ops: WriteOp[] }>;
}

/** What the served run gives the committer. */
export interface CommitHooks {
  /** Brings the in-memory state up to the store's (state found by the lock, or read without it). */
  sync(source: Pick<WriterTx, 'state' | 'tasksSince'>): Promise<void>;
  /** Inside the lock, before the changes: housekeeping writes (expiry). */
  prepare(tx: WriterTx): Promise<void>;
  /** The state snapshot that includes every change applied so far (JSON). */
  snapshot(): string;
  /** The batch failed: forget what it applied in memory (the store never saw it). */
  invalidate(): void;
  /** After each successful write, with the commit's seconds and, of them, the seconds it held the writer lock. */
  committed(seconds: number, lockHeld: number): void;
  log(line: string): void;
}

/** A request refused on its own (4xx): its change did nothing, the rest of the batch goes on. */
export const isRefusal = (e: unknown): boolean => typeof (e as { status?: unknown })?.status === 'number';

interface Queued {
  change: Change<unknown>;
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
}

export class Committer {
  private queue: Queued[] = [];
  private running: Promise<void> | null = null;
  /** Set once a commit failed and the records cannot go on (SQLite). */
  failed: Error | null = null;

  constructor(
    private readonly records: ServedRecords,
    private readonly hooks: CommitHooks,
    private readonly resumeHint: string,
  ) {}

  /** Queues a change; resolves with its answer once it is committed. */
  run<T>(change: Change<T>): Promise<T> {
    if (this.failed) return Promise.reject(this.failed);
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ change: change as Change<unknown>, resolve: resolve as (v: unknown) => void, reject });
      if (!this.running)
        this.running = new Promise<void>((done) => setImmediate(() => void this.drain().finally(done)));
    });
  }

  /** Waits for everything queued so far to be committed (or refused). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        await this.commit(batch);
      }
    } finally {
      this.running = null;
    }
  }

  private async commit(batch: Queued[]): Promise<void> {
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: Error })[] = [];
    const t0 = performance.now();
    let locked = t0;
    let wrote = false;
    try {
      if (this.failed) throw this.failed;
      const applyAll = async (view: CommitView): Promise<WriteOp[]> => {
        const ops: WriteOp[] = [];
        for (const q of batch) {
          try {
            const r = await q.change.apply(view);
            ops.push(...r.ops);
            outcomes.push({ ok: true, value: r.result });
          } catch (e) {
            if (!isRefusal(e)) throw e;
            outcomes.push({ ok: false, error: e as Error });
          }
        }
        return ops;
      };
      if (batch.every((q) => q.change.read)) {
        await this.hooks.sync({ state: (k) => this.records.latest(k), tasksSince: (c) => this.records.tasksSince(c) });
        await applyAll(new CommitView({ requests: new Map(), openIssues: new Map(), scores: new Map() }, Date.now()));
      } else {
        await this.records.writer(async (tx) => {
          locked = performance.now();
          await this.hooks.sync(tx);
          await this.hooks.prepare(tx);
          const pre = await tx.prefetch(
            batch.flatMap((q) => q.change.keys ?? []),
            batch.flatMap((q) => q.change.taskIds ?? []),
          );
          const ops = await applyAll(new CommitView(pre, Date.now()));
          if (ops.length > 0) {
            await tx.commit(ops, this.hooks.snapshot());
            wrote = true;
          }
        });
      }
    } catch (e) {
      const error = this.failure(e as Error);
      for (const q of batch) q.reject(error);
      return;
    }
    const t1 = performance.now();
    batch.forEach((q, i) => {
      const o = outcomes[i]!;
      if (o.ok) q.resolve(o.value);
      else q.reject(o.error);
    });
    if (wrote) this.hooks.committed((t1 - t0) / 1000, (t1 - locked) / 1000);
  }

  /** The one-line error every caller of a failed batch gets; with SQLite it also stops the run. */
  private failure(e: Error): Error {
    if (e === this.failed) return e;
    this.hooks.invalidate();
    const reason = e instanceof StoreError ? e.message : `the run store failed to commit (${e.message.split('\n')[0]})`;
    if (this.records.recoverable) {
      const err = new StoreError(`${reason}; nothing of this request was acknowledged: retry it`);
      this.hooks.log(err.message);
      return err;
    }
    this.failed = new StoreError(
      `${reason}; nothing after its last commit was acknowledged: restart with ${this.resumeHint}`,
    );
    this.hooks.log(this.failed.message);
    return this.failed;
  }
}
