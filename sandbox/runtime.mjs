// The QuickJS WASM module and the one runtime a worker thread keeps in it: loading, reuse for many
// contexts, recycling, and forgetting both after a trap. Contexts are made and disposed by the
// engine (context.mjs); this file decides when the runtime under them is rebuilt.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { newQuickJSWASMModuleFromVariant, newVariant } from 'quickjs-emscripten-core';
import variant from '@jitl/quickjs-wasmfile-release-sync';
import { meterModule } from './meter.mjs';
import { forgetContext, onInterrupt, useModule } from './steps.mjs';

/** Whether native work is metered (meter.mjs); COGEN_SANDBOX_UNMETERED=1 loads the module as shipped, for comparison. */
export const METERED = process.env.COGEN_SANDBOX_UNMETERED !== '1';
/** The metered module's bytes, made once per thread. */
let meteredBytes = null;

/** A runtime is rebuilt after this many contexts, as a guard against slow leaks. */
const RECYCLE_EVERY = 5000;
/**
 * Where JSRuntime keeps what this file reads and writes (bytes, wasm32; QuickJS's quickjs.c,
 * struct JSRuntime): malloc_state's count, size and limit, and malloc_gc_threshold. Checked on the
 * first runtime (layoutExact); where they do not check out, nothing is read or written there.
 */
const RT = { count: 16, size: 20, limit: 24, gcThreshold: 108 };
/** QuickJS's first GC threshold, which a new runtime's malloc_gc_threshold must hold. */
const FIRST_GC_THRESHOLD = 256 * 1024;
/** Allocations (of the runtime, counted by QuickJS) past the last collection that call for the next, between jobs. */
const COLLECT_EVERY = 8000;
let layoutExact = null;
let collectedAt = 0;

let mod = null;
let rt = null;
let rtUses = 0;

export async function loadModule() {
  if (!METERED) {
    mod = await newQuickJSWASMModuleFromVariant(variant);
    useModule(mod, null);
    return;
  }
  meteredBytes ??= meterModule(
    readFileSync(createRequire(import.meta.url).resolve('@jitl/quickjs-wasmfile-release-sync/wasm')),
  );
  let exports = null;
  const metered = newVariant(variant, {
    emscriptenModule: {
      // Instantiated here, so that the meter's globals (not among what the module's glue keeps) can be read.
      instantiateWasm(imports, receive) {
        WebAssembly.instantiate(meteredBytes, imports).then(({ instance, module }) => {
          exports = instance.exports;
          receive(instance, module);
        });
        return {};
      },
    },
  });
  mod = await newQuickJSWASMModuleFromVariant(metered);
  const g = (k) => exports[`cogen_${k}`];
  useModule(mod, { work: g('work'), poke: g('poke'), poked: g('poked') });
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
    layoutExact ??= checkLayout(rt);
    // No collection inside a job: it would charge one answer for the garbage of the contexts
    // before it. collect() runs it between jobs instead.
    if (layoutExact) words(rt, RT.gcThreshold, 0xffffffff);
    collectedAt = 0;
  }
  return rt;
}

/** The runtime struct's word at `offset`; with `value`, written first. */
function words(r, offset, value) {
  const u = new Uint32Array(mod.module.HEAPU8.buffer);
  const at = (r.rt.value + offset) >> 2;
  if (value !== undefined) u[at] = value;
  return u[at];
}

/** Whether the struct is laid out as RT says, on a new runtime: the GC threshold QuickJS starts with, and the limit just set. */
function checkLayout(r) {
  try {
    if (words(r, RT.gcThreshold) !== FIRST_GC_THRESHOLD) return false;
    r.setMemoryLimit(12_345_678);
    return words(r, RT.limit) === 12_345_678 && words(r, RT.count) > 0 && words(r, RT.size) > 0;
  } catch {
    return false;
  }
}

/**
 * What QuickJS counts against the runtime's memory limit now (-1 where the layout did not check
 * out). Built for WebAssembly, QuickJS cannot read a block's size and counts 8 bytes an allocation,
 * so this is 8 × the live allocations, and the limit bounds each single allocation past them.
 */
export function countedBytes(r) {
  return layoutExact ? words(r, RT.size) : -1;
}

/** Collects the runtime's garbage (disposed contexts form cycles) between jobs, once enough has piled up. */
function collect(r) {
  if (!layoutExact) return;
  const count = words(r, RT.count);
  if (count - collectedAt < COLLECT_EVERY) return;
  // QuickJS collects when an object is made past the threshold: a threshold of 0 and one object.
  words(r, RT.gcThreshold, 0);
  r.getSystemContext().newObject().dispose();
  words(r, RT.gcThreshold, 0xffffffff);
  collectedAt = words(r, RT.count);
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
  else if (rt) collect(rt);
}
