// A measured peer of bench/decode.ts kept alive for a whole round: a child process that answers one
// line on stdout for each line it is sent on stdin (one timed decode call each). Keeping the peers
// alive lets the round interleave their calls one by one, so that on a shared machine each call of
// one peer meets about the load the other peers' calls beside it met.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';

export class Peer {
  private readonly proc: ChildProcessByStdio<Writable, Readable, Readable>;
  private readonly lines: string[] = [];
  private waiting: { resolve: (l: string) => void; reject: (e: Error) => void } | null = null;
  private stderr = '';
  private exited: string | null = null;

  constructor(
    readonly name: string,
    cmd: string,
    args: string[],
    env: NodeJS.ProcessEnv = process.env,
  ) {
    this.proc = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], env });
    createInterface({ input: this.proc.stdout }).on('line', (l) => {
      // a peer's JSON lines are its answers; anything else (a library's notice) is not
      if (!l.startsWith('{')) return;
      if (this.waiting) {
        const w = this.waiting;
        this.waiting = null;
        w.resolve(l);
      } else this.lines.push(l);
    });
    this.proc.stderr.on('data', (d: Buffer) => {
      this.stderr = (this.stderr + d.toString()).slice(-4000);
    });
    this.proc.on('exit', (code) => {
      this.exited = `${name} exited (${code}): ${this.stderr.trim().split('\n').pop() ?? ''}`;
      this.waiting?.reject(new Error(this.exited));
      this.waiting = null;
    });
  }

  /** The next answer line, parsed. */
  next<T>(): Promise<T> {
    const l = this.lines.shift();
    if (l !== undefined) return Promise.resolve(JSON.parse(l) as T);
    if (this.exited) return Promise.reject(new Error(this.exited));
    return new Promise<string>((resolve, reject) => {
      this.waiting = { resolve, reject };
    }).then((s) => JSON.parse(s) as T);
  }

  /** Sends one request and waits for its answer. */
  ask<T>(request: string): Promise<T> {
    this.proc.stdin.write(`${request}\n`);
    return this.next<T>();
  }

  /** Sends a line that has no answer. */
  tell(request: string): void {
    this.proc.stdin.write(`${request}\n`);
  }

  close(): void {
    if (!this.exited) this.proc.stdin.end();
  }
}
