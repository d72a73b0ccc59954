// Data parallelism on worker threads. tfjs-wasm runs on one core in Node (its threaded build starts
// its workers from blob: URLs, which Node cannot load), so the policy splits its work by prompt
// group over W threads: this thread takes the first shard while each of W − 1 shard workers, with
// its own backend and its own copy of the weights, takes one more.
//   - updates: the gradients are summed in shard order, a fixed order, so a run gives the same
//     weights every time for the same W. Each shard is normalised by the whole batch (train-step.ts,
//     loss.ts), so the sum is the whole batch's gradient. The optimizer step stays on this thread.
//   - decoding: each chunk of prompts is decoded where it lands, with the prompts' own random streams
//     (decode.ts), so the answers are the same for any W.
// The weights travel to the workers with each request (~0.5 MB for the default model).
//
// What a shard computes comes from a module the workers import by URL (a ShardModule): the
// policy's is train-step.ts; bench:train passes its own for bench/shape.ts's fixed-shape step.
import { Worker } from 'node:worker_threads';
import * as tf from '@tensorflow/tfjs-core';
import type { Params } from '../params.js';

const WORKER_URL = new URL('./shard-worker.mjs', import.meta.url);

export type WeightArrays = Record<string, Float32Array>;
/** A shard's named stats; the shards' are summed. */
type Stats = Record<string, number>;

/** What a worker imports: its model's parameter shapes, one shard's gradients and stats, and (optionally) a decode. */
export interface ShardModule<Setup = unknown, Input = unknown> {
  shardParamShapes(setup: Setup): [string, number[]][];
  shardGrads(
    params: Params,
    ref: Params | null,
    setup: Setup,
    input: Input,
  ): { grads: Map<string, tf.Tensor>; stats: Stats };
  shardDecode?(params: Params, setup: Setup, input: Input): Promise<unknown>;
}

/** Messages to a worker. */
export type WorkerRequest = {
  id: number;
  op: 'grads' | 'decode';
  weights: WeightArrays;
  ref?: WeightArrays;
  input: unknown;
};
/** Messages from a worker. */
export type WorkerReply =
  | { ready: true }
  | { id: number; grads: WeightArrays; stats: Stats }
  | { id: number; result: unknown }
  | { id: number; error: string };

export async function readArrays(params: Params): Promise<WeightArrays> {
  const out: WeightArrays = {};
  for (const [name, v] of params) out[name] = (await v.data()) as Float32Array;
  return out;
}

interface Slot {
  worker: Worker;
  pending: Map<number, { resolve: (r: WorkerReply) => void; reject: (e: Error) => void }>;
  /** the reference weights have been sent */
  hasRef: boolean;
  /** why the worker is gone (a request to it fails at once) */
  dead: Error | null;
}

export class ShardWorkers {
  private nextId = 0;
  private constructor(private readonly slots: Slot[]) {}

  /**
   * Starts n workers on `backend`, each computing shards with the ShardModule at `module` (a file
   * URL) and `setup`; rejects (having stopped any that started) if one cannot start.
   */
  static async start(n: number, backend: string, module: URL, setup: unknown): Promise<ShardWorkers> {
    const slots: Slot[] = [];
    try {
      for (let i = 0; i < n; i++) slots.push(await spawn(backend, module, setup));
    } catch (e) {
      for (const s of slots) void s.worker.terminate();
      throw e;
    }
    return new ShardWorkers(slots);
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
  async grads<S extends Stats>(
    inputs: unknown[],
    weights: WeightArrays,
    ref: () => Promise<WeightArrays | undefined>,
    local: () => { grads: Map<string, tf.Tensor>; stats: S },
  ): Promise<{ grads: Map<string, tf.Tensor>; stats: S }> {
    const sent = await this.post('grads', inputs, weights, ref);
    let mine: { grads: Map<string, tf.Tensor>; stats: S };
    try {
      mine = local();
    } catch (e) {
      await Promise.allSettled(sent); // no reply may reject unobserved
      throw e;
    }
    const replies = await settle(sent, () => {
      for (const g of mine.grads.values()) g.dispose();
    });
    const stats: Stats = { ...mine.stats };
    const grads = new Map<string, tf.Tensor>();
    for (const [name, g] of mine.grads) {
      const parts = replies.map((r) => (r as { grads: WeightArrays }).grads[name]!);
      grads.set(
        name,
        tf.tidy(() => tf.addN([g, ...parts.map((p) => tf.tensor(p, g.shape, 'float32'))])),
      );
      g.dispose();
    }
    for (const r of replies)
      for (const [k, s] of Object.entries((r as { stats: Stats }).stats)) stats[k] = stats[k]! + s;
    return { grads, stats: stats as S };
  }

  /** Posts inputs[i] to worker i for its ShardModule's shardDecode, runs `local` meanwhile; returns [local, ...workers' results]. */
  async decode<R>(inputs: unknown[], weights: WeightArrays, local: () => Promise<R>): Promise<R[]> {
    const sent = await this.post('decode', inputs, weights, async () => undefined);
    // the local chunk's failure must still wait for the workers, so that no reply rejects unobserved
    const mine = await local().then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    const replies = await settle(sent, () => {});
    if ('error' in mine) throw mine.error;
    return [mine.value, ...replies.map((r) => (r as { result: R }).result)];
  }

  private async post(
    op: WorkerRequest['op'],
    inputs: unknown[],
    weights: WeightArrays,
    ref: () => Promise<WeightArrays | undefined>,
  ): Promise<Promise<WorkerReply>[]> {
    const replies: Promise<WorkerReply>[] = [];
    for (const [i, input] of inputs.entries()) {
      const slot = this.slots[i]!;
      const id = this.nextId++;
      let refArrays: WeightArrays | undefined;
      if (op === 'grads' && !slot.hasRef) {
        refArrays = await ref();
        slot.hasRef = true;
      }
      replies.push(
        new Promise((resolve, reject) => {
          if (slot.dead) return reject(slot.dead);
          slot.pending.set(id, { resolve, reject });
          slot.worker.postMessage({ id, op, weights, ref: refArrays, input } satisfies WorkerRequest);
        }),
      );
    }
    return replies;
  }

  async close(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}

/** Waits for every reply; if one failed, cleans up and throws its error. */
async function settle(sent: Promise<WorkerReply>[], cleanup: () => void): Promise<WorkerReply[]> {
  const settled = await Promise.allSettled(sent);
  const failed = settled.find((r) => r.status === 'rejected');
  if (failed) {
    cleanup();
    throw (failed as PromiseRejectedResult).reason;
  }
  return settled.map((r) => (r as PromiseFulfilledResult<WorkerReply>).value);
}

function spawn(backend: string, module: URL, setup: unknown): Promise<Slot> {
  const worker = new Worker(WORKER_URL, { workerData: { backend, module: module.href, setup } });
  worker.unref();
  const slot: Slot = { worker, pending: new Map(), hasRef: false, dead: null };
  const fail = (e: Error): void => {
    slot.dead ??= e;
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
      if ('error' in m) p.reject(new Error(`shard worker: ${m.error}`));
      else p.resolve(m);
    });
    worker.on('error', (e) => {
      const err = new Error(`shard worker failed: ${e.message}`);
      if (!ready) reject(err);
      fail(err);
    });
    worker.on('exit', (code) => {
      const err = new Error(`shard worker exited (code ${code})`);
      if (!ready) reject(err);
      fail(err);
    });
  });
}
