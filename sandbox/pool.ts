// A pool of worker threads, each with one QuickJS runtime (worker.mjs), fed in chunks.
//
// A job is one task: a program and the argument lists of its calls, all run in one fresh context
// on one worker (engine.mjs, runTask), with an optional budget of interpreter steps; each job comes
// back with the steps it spent. Jobs wait in one FIFO queue. An idle worker takes a chunk of
// consecutive jobs that share the same limits (about queued calls / (4 × workers), so the load
// stays balanced and per-message costs vanish). A watchdog reads each busy worker's progress (a
// shared Int32Array: message id, job index, and a step counter the engine bumps before every
// deadline it arms); if nothing moved for longer than twice the wall-clock safety net (steps.mjs:
// WALL_FACTOR × the deadline, or the engine's own 1 s, whichever is longer) plus a grace period the
// thread is wedged: it is terminated, that job's calls fail with 'timeout', the rest of its chunk
// goes back to the head of the queue, and a fresh worker takes its place. A worker that dies fails
// its current job with 'worker-crashed' the same way. close() fails everything still pending with
// 'closed'.
import { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import type { FailureReason, Limits, RunResult } from './types.js';
import type { Json } from '../core/task.js';
import { WALL_FACTOR } from './steps.mjs';

export interface PoolOptions {
  workers: number;
  /** Extra time beyond a job's deadline before its worker is declared wedged (ms). */
  graceMs: number;
  /** Largest number of jobs sent to a worker in one message. */
  maxChunk: number;
  /** Tests only: the workers' safety-net clock jumps forward by the next of these (ms) at every read (worker.mjs). */
  clockJumpsMs?: number[];
}

interface Item {
  program: string;
  /** The JSON text of each call's argument list. */
  argsList: string[];
  limits: Limits;
  key: string;
  /** Steps for the whole job ('task') or for each call ('call'); none: no budget. */
  budget?: number;
  per?: 'task' | 'call';
  resolve: (r: Metered) => void;
}

/** One job's results, and the interpreter steps it spent (0 where it never ran). */
export interface Metered {
  results: RunResult[];
  steps: number;
  /** Native work (sandbox/meter.mjs units) and bytes of text copied out of QuickJS (absent where it never ran). */
  native?: number;
  copied?: number;
}

interface Slot {
  worker: Worker;
  progress: Int32Array;
  ready: boolean;
  busy: { id: number; items: Item[]; lastIdx: number; lastStep: number; lastChange: number } | null;
  dead: boolean;
}

type WireResult = [0, string] | [FailureReason, string];

/** What a worker thread posts (worker.mjs): 'ready' once, then 'done' per message, with per-job meters. */
interface WorkerMessage {
  t: string;
  id?: number;
  results?: WireResult[][];
  steps?: number[];
  native?: number[];
  copied?: number[];
}

/** The engine's own code (helper load) may take up to this long (ms) before it is wedged. */
const OWN_DEADLINE_MS = 1000;

const WORKER_URL = new URL('./worker.mjs', import.meta.url);
const MAX_START_FAILURES = 3;

export const defaultWorkerCount = (): number => Math.max(1, availableParallelism());

export class Pool {
  private readonly slots: Slot[] = [];
  private queue: Item[] = [];
  private head = 0;
  private queuedCalls = 0;
  private nextId = 1;
  private closed = false;
  private startFailures = 0;
  private watchdog: NodeJS.Timeout | null = null;
  private readyWaiters: Array<() => void> = [];

  constructor(private readonly opts: PoolOptions) {
    for (let i = 0; i < opts.workers; i++) this.slots.push(this.spawn());
  }

  /** Resolves once every worker has loaded its engine (or the pool gave up on one). */
  async ready(): Promise<void> {
    while (!this.closed && this.slots.some((s) => !s.ready && !s.dead)) {
      await new Promise<void>((r) => this.readyWaiters.push(r));
    }
  }

  get size(): number {
    return this.slots.length;
  }

  /** Runs one task's calls in one fresh context, in order; one result per call. */
  submit(
    program: string,
    argsList: string[],
    limits: Limits,
    key: string,
    budget?: number,
    per?: 'task' | 'call',
  ): Promise<Metered> {
    return new Promise<Metered>((resolve) => {
      if (this.closed) {
        resolve({
          results: argsList.map(() => ({ ok: false, reason: 'closed', detail: 'the sandbox is closed' })),
          steps: 0,
        });
        return;
      }
      if (argsList.length === 0) {
        resolve({ results: [], steps: 0 });
        return;
      }
      this.queue.push({ program, argsList, limits, key, budget, per, resolve });
      this.queuedCalls += argsList.length;
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopWatchdog();
    for (const s of this.slots) {
      if (s.busy) for (const it of s.busy.items) it.resolve({ results: it.argsList.map(closedResult), steps: 0 });
      s.busy = null;
      s.dead = true;
    }
    for (let i = this.head; i < this.queue.length; i++)
      this.queue[i]!.resolve({ results: this.queue[i]!.argsList.map(closedResult), steps: 0 });
    this.queue = [];
    this.head = 0;
    this.queuedCalls = 0;
    await Promise.all(this.slots.map((s) => s.worker.terminate().catch(() => 0)));
    this.wakeReady();
  }

  private queued(): number {
    return this.queue.length - this.head;
  }

  private spawn(): Slot {
    const shared = new SharedArrayBuffer(12);
    const worker = new Worker(WORKER_URL, {
      workerData: { progress: shared, clockJumpsMs: this.opts.clockJumpsMs },
      // The engine lives in WASM memory; the JS heap only holds messages. A deeper native stack
      // keeps QuickJS's own stack check (stackBytes) the one that fires first.
      resourceLimits: { maxOldGenerationSizeMb: 512, stackSizeMb: 16 },
      stdout: true,
      stderr: true,
    });
    worker.unref();
    const slot: Slot = { worker, progress: new Int32Array(shared), ready: false, busy: null, dead: false };
    worker.on('message', (msg: WorkerMessage) => {
      if (msg.t === 'ready') {
        slot.ready = true;
        this.startFailures = 0;
        this.wakeReady();
        this.dispatch();
      } else if (msg.t === 'done' && slot.busy && slot.busy.id === msg.id) {
        const { items } = slot.busy;
        slot.busy = null;
        worker.unref();
        const results = msg.results ?? [];
        for (let i = 0; i < items.length; i++)
          items[i]!.resolve({
            results: decodeAll(items[i]!, results[i]),
            steps: msg.steps?.[i] ?? 0,
            native: msg.native?.[i],
            copied: msg.copied?.[i],
          });
        this.dispatch();
      }
    });
    worker.on('error', (err: Error) => this.lost(slot, 'worker-crashed', `worker error: ${err.message}`));
    worker.on('exit', (code) => this.lost(slot, 'worker-crashed', `worker exited with code ${code}`));
    return slot;
  }

  /** A worker died or was killed: fail the job it was running, requeue the rest, replace it. */
  private lost(slot: Slot, reason: FailureReason, detail: string): void {
    if (slot.dead) return;
    slot.dead = true;
    void slot.worker.terminate().catch(() => 0);
    if (!slot.ready) this.startFailures++;
    const busy = slot.busy;
    slot.busy = null;
    if (busy) {
      const culprit = Atomics.load(slot.progress, 0) === busy.id ? Atomics.load(slot.progress, 1) : 0;
      const rest: Item[] = [];
      busy.items.forEach((it, i) => {
        if (i === culprit) it.resolve({ results: it.argsList.map(() => ({ ok: false, reason, detail })), steps: 0 });
        else rest.push(it);
      });
      this.queue = rest.concat(this.queue.slice(this.head));
      this.head = 0;
      for (const it of rest) this.queuedCalls += it.argsList.length;
    }
    const idx = this.slots.indexOf(slot);
    if (this.closed) return;
    if (this.startFailures >= MAX_START_FAILURES) {
      // The engine cannot start at all: fail what is waiting rather than retry forever.
      this.slots.splice(idx, 1);
      if (this.slots.every((s) => s.dead)) {
        for (let i = this.head; i < this.queue.length; i++) {
          this.queue[i]!.resolve({
            results: this.queue[i]!.argsList.map(() => ({
              ok: false,
              reason: 'worker-crashed',
              detail: `sandbox workers cannot start: ${detail}`,
            })),
            steps: 0,
          });
        }
        this.queue = [];
        this.head = 0;
        this.queuedCalls = 0;
      }
      this.wakeReady();
      return;
    }
    if (idx >= 0) this.slots[idx] = this.spawn();
    this.dispatch();
  }

  private dispatch(): void {
    if (this.closed) return;
    for (const slot of this.slots) {
      if (this.queued() === 0) break;
      if (!slot.ready || slot.busy || slot.dead) continue;
      // A chunk is counted in calls (a job = one task may hold many).
      const want = Math.max(1, Math.min(this.opts.maxChunk, Math.ceil(this.queuedCalls / (4 * this.slots.length))));
      const first = this.queue[this.head]!;
      const items: Item[] = [first];
      let calls = first.argsList.length;
      this.head++;
      while (calls < want && this.head < this.queue.length && this.queue[this.head]!.key === first.key) {
        const it = this.queue[this.head++]!;
        items.push(it);
        calls += it.argsList.length;
      }
      this.queuedCalls -= calls;
      if (this.head > 1024 && this.head * 2 > this.queue.length) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
      const id = this.nextId++;
      slot.busy = { id, items, lastIdx: -1, lastStep: -1, lastChange: performance.now() };
      slot.worker.ref();
      slot.worker.postMessage({
        t: 'run',
        id,
        limits: first.limits,
        jobs: items.map((it) =>
          it.budget ? [it.program, it.argsList, it.budget, it.per ?? 'task'] : [it.program, it.argsList],
        ),
      });
    }
    if (this.queued() === 0 && this.head > 0) {
      this.queue = [];
      this.head = 0;
      this.queuedCalls = 0;
    }
    if (this.slots.some((s) => s.busy)) this.startWatchdog();
    else this.stopWatchdog();
  }

  private startWatchdog(): void {
    if (this.watchdog) return;
    this.watchdog = setInterval(() => this.check(), 100);
    this.watchdog.unref();
  }

  private stopWatchdog(): void {
    if (this.watchdog) clearInterval(this.watchdog);
    this.watchdog = null;
  }

  private check(): void {
    const now = performance.now();
    for (const slot of [...this.slots]) {
      const busy = slot.busy;
      if (!busy || slot.dead) continue;
      const idx = Atomics.load(slot.progress, 0) === busy.id ? Atomics.load(slot.progress, 1) : -1;
      const step = Atomics.load(slot.progress, 2);
      if (idx !== busy.lastIdx || step !== busy.lastStep) {
        busy.lastIdx = idx;
        busy.lastStep = step;
        busy.lastChange = now;
        continue;
      }
      const wallMs = busy.items[0]!.limits.timeoutMs * WALL_FACTOR;
      const limit = Math.max(wallMs, OWN_DEADLINE_MS) * 2 + this.opts.graceMs;
      if (now - busy.lastChange > limit) {
        this.lost(
          slot,
          'timeout',
          `job ran past its ${wallMs} ms wall-clock safety net without yielding; its worker was replaced`,
        );
      }
    }
    if (!this.slots.some((s) => s.busy)) this.stopWatchdog();
  }

  private wakeReady(): void {
    const w = this.readyWaiters;
    this.readyWaiters = [];
    for (const r of w) r();
  }
}

function closedResult(): RunResult {
  return { ok: false, reason: 'closed', detail: 'the sandbox was closed' };
}

function decodeAll(item: Item, rs: WireResult[] | undefined): RunResult[] {
  return item.argsList.map((_, i) => decode(rs?.[i]));
}

function decode(r: WireResult | undefined): RunResult {
  if (!r) return { ok: false, reason: 'worker-crashed', detail: 'no result from worker' };
  if (r[0] === 0) {
    try {
      return { ok: true, value: JSON.parse(r[1]) as Json };
    } catch {
      // Cannot happen (the engine's JSON.stringify is captured before the program runs), but a
      // result the host cannot parse must never throw into it.
      return { ok: false, reason: 'non-serialisable', detail: 'the result is not JSON text' };
    }
  }
  return { ok: false, reason: r[0], detail: r[1] };
}
