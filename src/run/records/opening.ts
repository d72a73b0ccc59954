// Opening a run, for the loop (src/run/loop.ts) and a served run (src/server/served-open.ts): what it
// has opened is closed in reverse order when it ends or when its setup fails, and a run created by
// this opening that fails to open leaves no half-made directory behind (a resumed one is kept).
import { rmSync } from 'node:fs';

export class RunOpening {
  private readonly closers: (() => unknown)[] = [];
  private made = false;

  constructor(private readonly dir: string) {}

  /** Something to close when the run ends or its setup fails. */
  add(close: () => unknown): void {
    this.closers.push(close);
  }

  /** This opening made the run's directory: a failed setup removes it. */
  created(): void {
    this.made = true;
  }

  async closeAll(): Promise<void> {
    for (const close of this.closers.splice(0).reverse()) await Promise.resolve(close()).catch(() => {});
  }

  /** Closes what was opened and removes a run this opening created; the caller rethrows. */
  async abandon(): Promise<void> {
    await this.closeAll();
    if (this.made) rmSync(this.dir, { recursive: true, force: true });
  }

  /** Runs one setup step; if it throws, the run is abandoned and the error goes on. */
  async step<T>(make: () => Promise<T>): Promise<T> {
    try {
      return await make();
    } catch (e) {
      await this.abandon();
      throw e;
    }
  }
}
