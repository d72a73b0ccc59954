// A worker's turns at its sandbox pool (docs/scale-out.md, "Verification workers"): ordinary batches
// share it, up to the worker's concurrency; an answer under suspicion (split out of a batch whose
// worker died, or delivered again alone) is verified alone, so that a death while verifying it can
// be laid on that answer. Turns are given in arrival order, so a lone answer waits for the batches
// before it and holds back those after it. Hand-written: a few lines, and a wait must give up when
// the worker stops (its batch then goes back to the queue).
export class Turns {
  /** Ordinary batches verifying now, or −1 while one answer is verified alone. */
  private active = 0;
  private readonly queue: { alone: boolean; go: () => void }[] = [];

  /** Waits for a turn (alone, or shared); resolves with the function that ends it. Rejects once `signal` aborts. */
  take(alone: boolean, signal: AbortSignal): Promise<() => void> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason as Error);
      const entry = {
        alone,
        go: () => {
          signal.removeEventListener('abort', onAbort);
          let ended = false;
          resolve(() => {
            if (ended) return;
            ended = true;
            this.active = alone ? 0 : this.active - 1;
            this.pump();
          });
        },
      };
      const onAbort = () => {
        const at = this.queue.indexOf(entry);
        if (at >= 0) this.queue.splice(at, 1);
        reject(signal.reason as Error);
        this.pump();
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.queue.push(entry);
      this.pump();
    });
  }

  private pump(): void {
    while (this.queue.length > 0) {
      const head = this.queue[0]!;
      if (head.alone ? this.active !== 0 : this.active < 0) return;
      this.queue.shift();
      this.active = head.alone ? -1 : this.active + 1;
      head.go();
    }
  }
}
