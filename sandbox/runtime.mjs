// The QuickJS WASM module and the one runtime a worker thread keeps in it: loading, reuse for many
// contexts, recycling, and forgetting both after a trap. Contexts are made and disposed by the
// engine (context.mjs); this file decides when the runtime under them is rebuilt.
import { newQuickJSWASMModuleFromVariant } from 'quickjs-emscripten-core';
import variant from '@jitl/quickjs-wasmfile-release-sync';
import { forgetContext, onInterrupt, useModule } from './steps.mjs';

/** A runtime is rebuilt after this many contexts, as a guard against slow leaks. */
const RECYCLE_EVERY = 5000;

let mod = null;
let rt = null;
let rtUses = 0;

export async function loadModule() {
  mod = await newQuickJSWASMModuleFromVariant(variant);
  useModule(mod);
}

export const engineLoaded = () => mod !== null;

/** Forgets the module and runtime after a trap: the next loadModule() starts from scratch. */
export function resetEngine() {
  rt = null;
  mod = null;
  forgetContext();
}

export function dropRuntime() {
  const old = rt;
  rt = null;
  rtUses = 0;
  if (old) {
    try {
      old.dispose();
    } catch {
      // a runtime that cannot be freed cleanly takes its module with it
      mod = null;
    }
  }
}

/** The current runtime (made on first use, with the step counter's interrupt handler). */
export function runtime() {
  if (!rt) {
    rt = mod.newRuntime();
    rt.setInterruptHandler(onInterrupt);
  }
  return rt;
}

/** The runtime for one more context, with a job's memory and stack caps set. */
export function runtimeFor(limits) {
  const r = runtime();
  r.setMemoryLimit(limits.memoryBytes);
  r.setMaxStackSize(limits.stackBytes);
  rtUses++;
  return r;
}

/** After a context is disposed: drops the runtime if it is dirty or has served its RECYCLE_EVERY contexts. */
export function recycleRuntime(dirty) {
  if (dirty || rtUses >= RECYCLE_EVERY) dropRuntime();
}
