// What the kernels of this corner know of tfjs-wasm's backend (internals it does not type): its
// heap, where the SIMD module (simd.ts) reads and writes tensors in place; and the switch that turns
// every kernel of ours off.
import type * as tf from '@tensorflow/tfjs-core';
import { instantiateSimd, type SimdKernels, type WasmMemory, type WasmModule } from './simd.js';

export type WasmBackend = {
  incRef(id: object): void;
  makeOutput(shape: number[], dtype: tf.DataType): tf.TensorInfo;
  typedArrayFromHeap(t: tf.TensorInfo): Float32Array | Int32Array | Uint8Array;
  disposeData(id: object, force?: boolean): boolean;
  dataIdMap: { get(id: object): { memoryOffset: number } | undefined };
  wasm: { asm: { memory: WasmMemory } };
};

export const prod = (xs: number[]): number => xs.reduce((p, q) => p * q, 1);
/** A tensor's byte offset in the heap. */
export const ptr = (be: WasmBackend, t: tf.TensorInfo): number => be.dataIdMap.get(t.dataId)!.memoryOffset;

let simdModule: WasmModule | null = null;
let simd: { memory: WasmMemory; kernels: SimdKernels } | null = null;

/** Set once the SIMD module has been assembled (wasm-kernels.ts). */
export function setSimdModule(module: WasmModule): void {
  simdModule = module;
}

export function simdReady(): boolean {
  return simdModule !== null;
}

/** The SIMD kernels bound to this backend's heap (instantiated on first use, again for a new backend). */
export function simdFor(be: WasmBackend): SimdKernels {
  if (simd?.memory !== be.wasm.asm.memory)
    simd = { memory: be.wasm.asm.memory, kernels: instantiateSimd(simdModule!, be.wasm.asm.memory) };
  return simd.kernels;
}

let fastWasmKernels = true;
/** For benchmarks: false runs tfjs-wasm's own kernels and no fused ones (the naïve baseline). */
export function setFastWasmKernels(on: boolean): void {
  fastWasmKernels = on;
}

export function fastKernelsOn(): boolean {
  return fastWasmKernels;
}
