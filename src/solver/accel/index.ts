// The acceleration corner, optional: the solver computes the same without it, only slower.
// - wasm: kernels of our own registered over tfjs-wasm's (wasm-kernels.ts; a WebAssembly SIMD module,
//   simd.ts), and the fused ops the model and AdamW take through ../fused.ts (fused-kernels.ts).
// - tensorflow: the same fused ops as TensorFlow kernels of our own (tf-ops.cc, built by `cogen setup
//   tensorflow`; tf-ops.ts).
// - data parallelism: shard workers that compute shards of an update, or chunks of a decode, on
//   other threads (parallel.ts).
export { patchWasmKernels } from './wasm-kernels.js';
export { registerTensorflowOps, setTensorflowOpsThreads, tfOpsPath, TF_OPS_ADDON } from './tf-ops.js';
export { setFastWasmKernels } from './heap.js';
export { ShardWorkers, readArrays, type ShardModule, type WeightArrays } from './parallel.js';
export { ShardPool } from './shard-pool.js';
