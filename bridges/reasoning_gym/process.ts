// The Reasoning Gym worker process (worker.py) seen from Node: started on first use, one request at
// a time over JSON lines, and treated as untrusted execution. Each request has a kill timeout; a
// timeout, a crash, an end of its output or a line that is not the protocol kills the process, fails
// that request with a reason, and the next request starts a fresh worker.
//
// Isolation, honestly: the worker runs with an empty temporary directory as cwd and HOME, and an
// environment that holds no path of the run (only PATH, locale, thread counts and its limits), so a
// scorer finds no run file by relative path or variable. That does not stop a read by absolute path
// at the OS level; worker.py's audit hook refuses reads outside the Python installation and its cwd,
// writes, processes and sockets from Python code, and RLIMIT_FSIZE refuses file writes in the kernel.
// Native code inside a scorer could still read what this user can read.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import pLimit from 'p-limit';
import { notSetUpLine, rgPaths } from './paths.js';

export type WorkerFailureReason = 'timeout' | 'crash' | 'protocol' | 'unavailable' | 'error';

/** A request that got no answer: why ('timeout', 'crash', …) and one line of detail. */
export class WorkerFailure extends Error {
  constructor(
    readonly reason: WorkerFailureReason,
    message: string,
  ) {
    super(message);
    this.name = 'WorkerFailure';
  }
}

export interface WorkerOptions {
  /** The Python of the bridge's virtual environment (default: rgPaths().python). */
  python?: string;
  worker?: string;
  /** Kill timeout of a score request (ms, default 10,000). */
  scoreTimeoutMs?: number;
  /** Kill timeout of other requests: generating, listing (ms, default 120,000). */
  timeoutMs?: number;
  /** Startup: importing reasoning_gym (ms, default 120,000). */
  startTimeoutMs?: number;
  /** RLIMIT_AS of the worker (default 4 GiB). */
  memoryBytes?: number;
  /** CPU seconds one scoring may use before it scores 0 (default 5). */
  cpuSeconds?: number;
  /** Longest answer sent to a scorer (characters, default 65,536); longer ones score 0 here. */
  maxAnswerChars?: number;
  log?: (line: string) => void;
}

interface Pending {
  id: number;
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
}

export class RgWorker {
  readonly maxAnswerChars: number;
  readonly scoreTimeoutMs: number;
  /** How many times a worker was started (the first start included). */
  starts = 0;
  private child: ChildProcessWithoutNullStreams | null = null;
  private cwd: string | null = null;
  private pending: Pending | null = null;
  private ready: Promise<void> | null = null;
  private nextId = 1;
  private stderrTail: string[] = [];
  private readonly one = pLimit(1);
  private closed = false;
  private readonly onExit = (): void => this.kill();

  constructor(private readonly opts: WorkerOptions = {}) {
    this.maxAnswerChars = opts.maxAnswerChars ?? 65536;
    this.scoreTimeoutMs = opts.scoreTimeoutMs ?? 10_000;
  }

  /** The worker's process id, while one runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Sends one request (after the ones before it) and resolves with its result. */
  request<T>(op: string, payload: Record<string, unknown> = {}, timeoutMs?: number): Promise<T> {
    if (this.closed) return Promise.reject(new WorkerFailure('unavailable', 'the Reasoning Gym worker was closed'));
    return this.one(() =>
      this.send<T>(op, payload, timeoutMs ?? (op === 'score' ? this.scoreTimeoutMs : (this.opts.timeoutMs ?? 120_000))),
    );
  }

  /** Stops the worker; later requests fail. */
  close(): void {
    this.closed = true;
    this.kill();
  }

  private async send<T>(op: string, payload: Record<string, unknown>, timeoutMs: number): Promise<T> {
    await this.start();
    const child = this.child!;
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.fail(
          new WorkerFailure(
            'timeout',
            `the Reasoning Gym worker did not answer ${op} within ${timeoutMs} ms; it was killed and will restart`,
          ),
        );
      }, timeoutMs);
      this.pending = {
        id,
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v as T);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      child.stdin.write(`${JSON.stringify({ id, op, ...payload })}\n`);
    });
  }

  private start(): Promise<void> {
    if (this.child && this.ready) return this.ready;
    const python = this.opts.python ?? rgPaths().python;
    const worker = this.opts.worker ?? rgPaths().worker;
    if (!existsSync(python)) return Promise.reject(new WorkerFailure('unavailable', notSetUpLine()));
    this.cwd = mkdtempSync(join(tmpdir(), 'cogen-rg-'));
    const env: NodeJS.ProcessEnv = {
      PATH: '/usr/local/bin:/usr/bin:/bin',
      LANG: 'C.UTF-8',
      HOME: this.cwd,
      TMPDIR: this.cwd,
      // Python's str hashing is salted per process: fixed, so a dataset that iterates a set of
      // strings draws the same item in every worker.
      PYTHONHASHSEED: '0',
      PYTHONDONTWRITEBYTECODE: '1',
      PYTHONNOUSERSITE: '1',
      PYTHONUNBUFFERED: '1',
      OMP_NUM_THREADS: '1',
      OPENBLAS_NUM_THREADS: '1',
      MKL_NUM_THREADS: '1',
      COGEN_RG_MEMORY_BYTES: String(this.opts.memoryBytes ?? 4 * 2 ** 30),
      COGEN_RG_CPU_SECONDS: String(this.opts.cpuSeconds ?? 5),
      COGEN_RG_MAX_ANSWER: String(this.maxAnswerChars),
    };
    const child = spawn(python, ['-s', '-B', worker], { cwd: this.cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child = child;
    this.starts++;
    this.stderrTail = [];
    // The worker must not keep a finished Node process alive; it exits on its stdin's end.
    child.unref();
    for (const s of [child.stdin, child.stdout, child.stderr] as unknown as { unref?: () => void }[]) s.unref?.();
    process.once('exit', this.onExit);
    let started: () => void = () => {};
    let failedStart: (e: Error) => void = () => {};
    const ready = new Promise<void>((resolve, reject) => {
      started = resolve;
      failedStart = reject;
    });
    const startTimer = setTimeout(
      () =>
        this.fail(new WorkerFailure('timeout', 'the Reasoning Gym worker did not start within the startup timeout')),
      this.opts.startTimeoutMs ?? 120_000,
    );
    this.pending = {
      id: 0,
      resolve: () => {
        clearTimeout(startTimer);
        started();
      },
      reject: (e) => {
        clearTimeout(startTimer);
        failedStart(e);
      },
    };
    createInterface({ input: child.stdout }).on('line', (line) => this.onLine(child, line));
    createInterface({ input: child.stderr }).on('line', (line) => {
      this.stderrTail.push(line);
      if (this.stderrTail.length > 20) this.stderrTail.shift();
    });
    child.on('error', (e) => {
      if (this.child === child)
        this.fail(
          new WorkerFailure(
            'unavailable',
            `could not start the Reasoning Gym worker (${e.message}); ${notSetUpLine()}`,
          ),
        );
    });
    child.on('exit', (code, signal) => {
      if (this.child !== child) return;
      const last = this.stderrTail.filter((l) => l.trim()).pop();
      // Dying before its ready line means it cannot import reasoning_gym: the setup is broken.
      const hint = this.pending?.id === 0 ? ' (it did not start: run `cogen setup reasoning-gym`)' : '';
      this.fail(
        new WorkerFailure(
          'crash',
          `the Reasoning Gym worker exited (${signal ?? `code ${code}`})${last ? `: ${last.slice(0, 300)}` : ''}${hint}`,
        ),
      );
    });
    this.ready = ready;
    return ready;
  }

  private onLine(child: ChildProcessWithoutNullStreams, line: string): void {
    if (this.child !== child) return;
    let msg: { id?: unknown; ok?: unknown; result?: unknown; error?: unknown };
    try {
      msg = JSON.parse(line) as typeof msg;
      if (!msg || typeof msg !== 'object') throw new Error('not an object');
    } catch {
      this.fail(
        new WorkerFailure(
          'protocol',
          `the Reasoning Gym worker wrote a line that is not the protocol: ${line.slice(0, 120)}`,
        ),
      );
      return;
    }
    const p = this.pending;
    if (!p || msg.id !== p.id) {
      this.fail(
        new WorkerFailure(
          'protocol',
          `the Reasoning Gym worker answered request ${String(msg.id)}, not ${p ? p.id : 'none'}`,
        ),
      );
      return;
    }
    this.pending = null;
    if (msg.ok === true) p.resolve(msg.result);
    else p.reject(new WorkerFailure('error', String(msg.error ?? 'the worker failed')));
  }

  /** Fails the request in flight and kills the worker; the next request starts another. */
  private fail(e: WorkerFailure): void {
    const p = this.pending;
    this.pending = null;
    this.kill();
    if (e.reason !== 'timeout' && e.reason !== 'unavailable') this.opts.log?.(e.message);
    p?.reject(e);
  }

  private kill(): void {
    const child = this.child;
    this.child = null;
    this.ready = null;
    process.removeListener('exit', this.onExit);
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    if (this.cwd) rmSync(this.cwd, { recursive: true, force: true });
    this.cwd = null;
  }
}
