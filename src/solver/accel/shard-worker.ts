// A shard worker's loop (parallel.ts): its own backend and copy of the weights; for each request it
// takes the weights it is sent, runs its shard with the ShardModule it was given (train-step.ts for
// the policy) and posts the result back: gradients and stats, or decoded rows.
import { parentPort, workerData } from 'node:worker_threads';
import { initBackend } from '../backend.js';
import type { BackendName } from '../config.js';
import { makeParams, setVariable, type Params } from '../params.js';
import type { ShardModule, WeightArrays, WorkerReply, WorkerRequest } from './parallel.js';

const { backend, module, setup } = workerData as { backend: BackendName; module: string; setup: unknown };
const port = parentPort!;
await initBackend(backend, { log: () => {} });
const shard = (await import(module)) as ShardModule;
const zeros = new Map(
  shard
    .shardParamShapes(setup)
    .map(([name, shape]) => [name, { shape, data: new Float32Array(shape.reduce((a, b) => a * b, 1)) }]),
);
const params: Params = makeParams(zeros);
let ref: Params | null = null;

const assign = (into: Params, from: WeightArrays): void => {
  for (const [name, v] of into) {
    const data = from[name];
    if (!data) throw new Error(`request lacks weights for ${name}`);
    setVariable(v, data);
  }
};

async function handle(m: WorkerRequest): Promise<void> {
  assign(params, m.weights);
  if (m.ref) {
    ref ??= makeParams(zeros, false);
    assign(ref, m.ref);
  }
  if (m.op === 'decode') {
    if (!shard.shardDecode) throw new Error('this shard module does not decode');
    port.postMessage({ id: m.id, result: await shard.shardDecode(params, setup, m.input) } satisfies WorkerReply);
    return;
  }
  const { grads, stats } = shard.shardGrads(params, ref, setup, m.input);
  const out: WeightArrays = {};
  for (const [name, g] of grads) {
    // a copy with a buffer of its own: a backend's dataSync may hand out its storage, which transferring would detach
    out[name] = new Float32Array(g.dataSync() as Float32Array);
    g.dispose();
  }
  port.postMessage(
    { id: m.id, grads: out, stats } satisfies WorkerReply,
    Object.values(out).map((a) => a.buffer as ArrayBuffer),
  );
}

// one request at a time, in arrival order (the weights of a request are those its shard needs)
let queue = Promise.resolve();
port.on('message', (m: WorkerRequest) => {
  queue = queue
    .then(() => handle(m))
    .catch((e: unknown) => {
      port.postMessage({ id: m.id, error: (e as Error).message } satisfies WorkerReply);
    });
});
port.postMessage({ ready: true } satisfies WorkerReply);
