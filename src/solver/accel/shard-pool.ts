// A policy's shard workers (parallel.ts) over its life: started on first use; when one fails, all
// are stopped with a log line and the work goes on on this thread (the caller redoes the step there,
// so no step is lost).
import { ShardWorkers } from './parallel.js';

export class ShardPool {
  private workers: ShardWorkers | null = null;

  /**
   * `threads`: this thread and threads − 1 shard workers, each running the ShardModule at `module`
   * with `setup` on `backend`.
   */
  constructor(
    private threads: number,
    private readonly backend: string,
    private readonly module: URL,
    private readonly setup: unknown,
    private readonly log: (line: string) => void,
  ) {}

  /** f's result on the workers; null on one thread, or when a worker failed (the caller then does the work itself). */
  async run<T>(f: (workers: ShardWorkers) => Promise<T>): Promise<T | null> {
    const workers = await this.started();
    if (!workers) return null;
    try {
      return await f(workers);
    } catch (e) {
      this.log(`solver: ${(e as Error).message}; updates and decoding go on on one thread`);
      this.close();
      this.threads = 1;
      return null;
    }
  }

  /** Forgets that the workers hold the reference weights (after a checkpoint load replaced them). */
  resetRef(): void {
    this.workers?.resetRef();
  }

  close(): void {
    void this.workers?.close();
    this.workers = null;
  }

  private async started(): Promise<ShardWorkers | null> {
    if (this.threads <= 1) return null;
    if (!this.workers) {
      const n = this.threads - 1;
      try {
        this.workers = await ShardWorkers.start(n, this.backend, this.module, this.setup);
        this.log(
          `solver: data-parallel updates and decoding on ${this.threads} threads (this one and ${n} shard worker${n > 1 ? 's' : ''})`,
        );
      } catch (e) {
        this.log(
          `solver: shard workers did not start (${(e as Error).message}); updates and decoding run on one thread`,
        );
        this.threads = 1;
        return null;
      }
    }
    return this.workers;
  }
}
