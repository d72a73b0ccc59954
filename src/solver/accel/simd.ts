// WebAssembly SIMD kernels that run inside tfjs-wasm's own heap (they import its memory, so tensors
// are read and written in place, with no copies). wasm-kernels.ts registers them as tfjs kernels.
//
// Why: tfjs-wasm sends 2-D matMuls to XNNPACK but every batched or transposed one (attention's
// Q·Kᵀ, P·V and every gradient) through a scalar loop at 0.2–0.7 GMAC/s, about half of a training
// step; its exp is scalar; and a transformer layer is dozens of small elementwise kernels.
//
// The module is written as WebAssembly text (simd-module.ts), generated (its pieces in simd-wat.ts) so that the
// register-blocked micro-kernel and the inlined exp can be written once, and assembled at start-up
// with wabt (npm).
// Its functions:
// - matmul: C[b] = A[b]·B[b] (+ bias), B and C row-major and contiguous, A read through element
//   strides (so a transposed A costs nothing). The micro-kernel keeps a 4×8 block of C in eight
//   v128 accumulators: per k it loads 8 floats of B's row k and broadcasts 4 scalars of A's column
//   k, and does 32 multiply-adds (fused where the engine has relaxed SIMD; see compileSimdModule).
//   Edges use 4×4, 4×1 (scalar), 1×8, 1×4 and 1×1 tiles. transpose packs a transposed B.
// - exp (a polynomial, expInto), softmax and its gradient, gelu and its gradient, layernorm and its
//   gradient, adamw: one pass each over the data.
// - colsum (sums over leading axes), copy2d (strided runs: concat, gather).

import v8 from 'node:v8';
import { simdModuleText } from './simd-module.js';

type Wabt = Awaited<ReturnType<typeof import('wabt')>>;

// The tsconfig's libs (ES2022, no DOM) do not type WebAssembly's JS API; the little used here:
export type WasmMemory = { readonly buffer: ArrayBuffer };
export type WasmModule = object;
const WA = (
  globalThis as unknown as {
    WebAssembly: {
      Module: new (bytes: Uint8Array) => WasmModule;
      Instance: new (m: WasmModule, imports: object) => { exports: object };
    };
  }
).WebAssembly;

export interface SimdKernels {
  matmul(
    a: number,
    b: number,
    c: number,
    batch: number,
    M: number,
    N: number,
    K: number,
    sAm: number,
    sAk: number,
    bsA: number,
    bsB: number,
    bias: number,
  ): void;
  transpose(src: number, dst: number, batch: number, R: number, C: number): void;
  colsum(x: number, out: number, R: number, C: number): void;
  copy2d(src: number, ss: number, dst: number, ds: number, R: number, C: number): void;
  exp(x: number, y: number, n: number): void;
  softmax(x: number, y: number, R: number, C: number): void;
  softmax_grad(y: number, dy: number, dx: number, R: number, C: number): void;
  adamw(
    p: number,
    g: number,
    m: number,
    v: number,
    po: number,
    mo: number,
    vo: number,
    n: number,
    scale: number,
    lr: number,
    b1: number,
    c1: number,
    b2: number,
    c2: number,
    eps: number,
    decay: number,
    bc1: number,
    bc2: number,
  ): void;
  gelu(x: number, y: number, n: number): void;
  gelu_grad(x: number, dy: number, dx: number, n: number): void;
  layernorm(x: number, g: number, b: number, y: number, mean: number, rstd: number, R: number, C: number): void;
  layernorm_grad(
    x: number,
    g: number,
    mean: number,
    rstd: number,
    dy: number,
    dx: number,
    dg: number,
    db: number,
    R: number,
    C: number,
  ): void;
}

function assemble(wabt: Wabt, fma: boolean): WasmModule {
  const mod = wabt.parseWat('cogen-simd.wat', simdModuleText(fma), { simd: true, relaxed_simd: fma });
  try {
    const bytes = mod.toBinary({}).buffer;
    try {
      return new WA.Module(bytes);
    } catch (e) {
      if (!fma) throw e;
      v8.setFlagsFromString('--experimental-wasm-relaxed-simd'); // Node 20 has relaxed SIMD behind this flag
      return new WA.Module(bytes);
    }
  } finally {
    mod.destroy();
  }
}

/**
 * Assembles the module with wabt (a few ms); instantiate it on tfjs-wasm's heap with instantiateSimd.
 * With fused multiply-adds where the engine has relaxed SIMD (Node 20 has it behind a V8 flag, which
 * assemble sets when the first compile is refused; newer Nodes ship it); with the broadcast loads
 * of A they took the large matMuls here from 11–14 to 17–21 GMAC/s. FMA rounds once where mul + add
 * rounds twice: results may differ in the last bits between machines, never between runs on one.
 */
export async function compileSimdModule(): Promise<WasmModule> {
  try {
    return await assembleSimdModule(true);
  } catch {
    return await assembleSimdModule(false); // no relaxed SIMD in this engine
  }
}

/** The module with or without fused multiply-adds (compileSimdModule picks; tests check both). */
export async function assembleSimdModule(fma: boolean): Promise<WasmModule> {
  return assemble(await (await import('wabt')).default(), fma);
}

export function instantiateSimd(module: WasmModule, memory: WasmMemory): SimdKernels {
  return new WA.Instance(module, { env: { memory } }).exports as unknown as SimdKernels;
}
