// Data-parallel gradients on worker threads. tfjs-wasm runs on one core in Node (its threaded build
// starts its workers from blob: URLs, which Node cannot load), so an update on W cores splits the
// batch into W shards by group: this thread computes shard 0 while each of W − 1 workers, with its
// own backend and its own copy of the weights, computes one more. The gradients are summed in shard
// order, a fixed order, so a run gives the same weights every time for the same W. Each shard is
// normalised by the whole batch (train-step.ts, loss.ts), so the sum is the whole batch's gradient.
// The optimizer step stays on this thread; the weights travel to the workers with each request.
//
// What a shard computes comes from a module the workers import by URL (a ShardModule): the policy's
// is train-step.ts; bench:train passes its own for the fixed-shape step.
import { Worker } from 'node:worker_threads';
import * as tf from '@tensorflow/tfjs-core';
import type { Params } from './model.js';

const WORKER_URL = new URL('./grad-worker.mjs', import.meta.url);

export type WeightArrays = Record<string, Float32Array>;
type ShardStats = number[];

/** What a worker imports: its model's parameter shapes, and one shard's gradients and stats. */
export interface ShardModule<Setup = unknown, Input = unknown> {
  shardParamShapes(setup: Setup): [string, number[]][];
  shardGrads(params: Params, ref: Params | null, setup: Setup, input: Input): { grads: Map<string, tf.Tensor>; stats: ShardStats };
}

/** Messages to a worker. */
export type WorkerRequest = { id: number; weights: WeightArrays; ref?: WeightArrays; input: unknown };
/** Messages from a worker. */
export type WorkerReply =
  | { ready: true }
  | { id: number; grads: WeightArrays; stats: ShardStats }
  | { id: number; error: string };

export async function readArrays(params: Params): Promise<WeightArrays> {
  const out: WeightArrays = {};
  for (const [name, v] of params) out[name] = (await v.data()) as Float32Array;
  return out;
}

interface Slot {
  worker: Worker;
  pending: Map<number, { resolve: (r: { grads: WeightArrays; stats: ShardStats }) => void; reject: (e: Error) => void }>;
  /** the reference weights have been sent */
  hasRef: boolean;
}

export class GradientWorkers {
  private nextId = 0;
  private constructor(private readonly slots: Slot[]) {}

  /**
   * Starts n workers on `backend`, each computing shards with the ShardModule at `module` (a file
   * URL) and `setup`; rejects (having stopped any that started) if one cannot start.
   */
  static async start(n: number, backend: string, module: URL, setup: unknown): Promise<GradientWorkers> {
    const slots: Slot[] = [];
    try {
      for (let i = 0; i < n; i++) slots.push(await spawn(backend, module, setup));
    } catch (e) {
      for (const s of slots) void s.worker.terminate();
      throw e;
    }
    return new GradientWorkers(slots);
  }

  get size(): number {
    return this.slots.length;
  }

  /** Forgets that the workers hold the reference weights (after a checkpoint load replaced them). */
  resetRef(): void {
    for (const s of this.slots) s.hasRef = false;
  }

  /**
   * Posts inputs[i] to worker i, runs `local` (this thread's shard) meanwhile, and returns the
   * summed gradients (local first, then the workers in order) and summed stats.
   */
  async grads(
    inputs: unknown[],
    weights: WeightArrays,
    ref: () => Promise<WeightArrays | undefined>,
    local: () => { grads: Map<string, tf.Tensor>; stats: ShardStats },
  ): Promise<{ grads: Map<string, tf.Tensor>; stats: ShardStats }> {
    const replies: Promise<{ grads: WeightArrays; stats: ShardStats }>[] = [];
    for (const [i, input] of inputs.entries()) {
      const slot = this.slots[i]!;
      const id = this.nextId++;
      const refArrays = slot.hasRef ? undefined : await ref();
      slot.hasRef = true;
      replies.push(new Promise((resolve, reject) => {
        slot.pending.set(id, { resolve, reject });
        slot.worker.postMessage({ id, weights, ref: refArrays, input } satisfies WorkerRequest);
      }));
    }
    // settle every reply before returning, so that none rejects unobserved
    const settled = Promise.allSettled(replies);
    const mine = local();
    const theirs = await settled;
    const failed = theirs.find((r) => r.status === 'rejected');
    if (failed) {
      for (const g of mine.grads.values()) g.dispose();
      throw (failed as PromiseRejectedResult).reason;
    }
    const stats = [...mine.stats];
    const grads = new Map<string, tf.Tensor>();
    for (const [name, g] of mine.grads) {
      const parts = theirs.map((r) => (r as PromiseFulfilledResult<{ grads: WeightArrays }>).value.grads[name]!);
      grads.set(name, tf.tidy(() => tf.addN([g, ...parts.map((p) => tf.tensor(p, g.shape, 'float32'))])));
      g.dispose();
    }
    for (const r of theirs) (r as PromiseFulfilledResult<{ stats: ShardStats }>).value.stats.forEach((s, i) => (stats[i] = stats[i]! + s));
    return { grads, stats };
  }

  async close(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}

function spawn(backend: string, module: URL, setup: unknown): Promise<Slot> {
  const worker = new Worker(WORKER_URL, { workerData: { backend, module: module.href, setup } });
  worker.unref();
  const slot: Slot = { worker, pending: new Map(), hasRef: false };
  const fail = (e: Error): void => {
    for (const p of slot.pending.values()) p.reject(e);
    slot.pending.clear();
  };
  return new Promise((resolve, reject) => {
    let ready = false;
    worker.on('message', (m: WorkerReply) => {
      if ('ready' in m) {
        ready = true;
        resolve(slot);
        return;
      }
      const p = slot.pending.get(m.id);
      if (!p) return;
      slot.pending.delete(m.id);
      if ('error' in m) p.reject(new Error(`gradient worker: ${m.error}`));
      else p.resolve(m);
    });
    worker.on('error', (e) => {
      const err = new Error(`gradient worker failed: ${e.message}`);
      if (!ready) reject(err);
      fail(err);
    });
    worker.on('exit', (code) => {
      const err = new Error(`gradient worker exited (code ${code})`);
      if (!ready) reject(err);
      fail(err);
    });
  });
}
