// Steps: the budget unit (DESIGN.md, "Sandbox"), counted and enforced here, with a wall-clock
// deadline as a safety net. This file is the only one that reads or writes QuickJS's interrupt
// counter, so the accounting that decides 'timeout' verdicts can be read in one place. A worker
// thread runs one job at a time, so the accounting is this module's state: the engine marks jobs,
// calls and contexts through the functions below and reads `interrupted`, `overBudget` and `spent`
// (exported bindings are live; only this file assigns them).
//
// The interrupt counter lives in the context's struct in WASM memory (JSContext.interrupt_counter);
// findCounter() finds it and checks that it behaves as expected (exact = true). Then every step a
// job takes is read from it, and it is lowered so that the handler runs exactly when a budget is
// spent. If the check fails (another QuickJS build), steps are counted in whole handler calls
// (10,000 each) and a budget is enforced at that granularity: still deterministic, only coarser.
//
// The deadline is wall-clock time. QuickJS calls the interrupt handler every 10,000 interpreter
// steps (polls of its interrupt counter: loop back-edges, calls, regexp backtracking); the number
// of calls during a job measures the work it did. A job that times out after doing almost no work
// (fewer steps than half a deadline of busy-looping allows, as calibrated at start-up) was starved
// of CPU by a busy machine rather than slow, and is run once more.
const COUNTER_INIT = 10_000;
const COUNTER_OFFSET = 232;

let deadline = 0;
/** Whether the last armed deadline or budget was hit. */
export let interrupted = false;
/** Whether the last interrupt was the budget's (else the wall-clock deadline's). */
export let overBudget = false;
/** Steps taken by the current job so far, in all its contexts. */
export let spent = 0;
let calls = 0;
let stepsPerMs = 0;
let exact = false;
/** The loaded WASM module, whose memory holds the counter. */
let wasm = null;
let heap = null;
let ctxPtr = 0;
/** The counter's value when last read or written (the steps since then are lastSet − counter). */
let lastSet = 0;
/** The job may take steps up to here (Infinity: no budget). */
let allowance = Infinity;
/** Steps at the last arm(), for the starvation check. */
let armSpent = 0;
/** Steps taken by the last job (all its contexts). */
let lastSteps = 0;
/** The worker's progress array: [message id, job index, step]; the step moves at every arm(). */
let progress = null;

export function setProgress(arr) {
  progress = arr;
}

/** The module whose memory holds the counters of the contexts to come (after each load). */
export function useModule(mod) {
  wasm = mod;
  heap = null;
}

function counterView() {
  const buf = wasm.module.HEAPU8.buffer;
  if (!heap || heap.buffer !== buf) heap = new Int32Array(buf);
  return heap;
}

/** Brings `spent` up to date with the counter (steps taken since it was last read or written). */
function sync() {
  if (!exact || !ctxPtr) return;
  const c = counterView()[(ctxPtr + COUNTER_OFFSET) >> 2];
  spent += lastSet - c;
  lastSet = c;
}

/**
 * Sets the counter so that the handler runs within COUNTER_INIT steps, or at the first step past
 * the allowance (a job may take `allowance` steps; the attempt at one more stops it).
 */
function setCounter() {
  if (!exact || !ctxPtr) return;
  const left = allowance - spent + 1;
  const next = left >= COUNTER_INIT ? COUNTER_INIT : Math.max(1, left);
  counterView()[(ctxPtr + COUNTER_OFFSET) >> 2] = next;
  lastSet = next;
}

/** The runtime's interrupt handler: counts the steps since the last call, then stops past the allowance or the deadline. */
export function onInterrupt() {
  calls++;
  if (exact && ctxPtr) {
    const c = counterView()[(ctxPtr + COUNTER_OFFSET) >> 2];
    // Either the interpreter's counter ran down from lastSet to 0 and QuickJS has just reset it to
    // COUNTER_INIT (lastSet steps, at least 1), or the regexp engine, which keeps a counter of its
    // own, calls in after 10,000 of its steps: those, plus the interpreter's steps since the last
    // read. (With lastSet = c = COUNTER_INIT the two readings agree.)
    spent += c === COUNTER_INIT ? Math.max(1, lastSet) : lastSet - c + COUNTER_INIT;
    lastSet = c;
  } else spent += COUNTER_INIT;
  if (spent > allowance) {
    // The step that would pass the allowance is not taken.
    if (exact && ctxPtr) spent = Math.max(allowance, spent - 1);
    overBudget = true;
    interrupted = true;
    return true;
  }
  if (performance.now() > deadline) {
    interrupted = true;
    return true;
  }
  setCounter();
  return false;
}

/** Starts a deadline of timeoutMs from now (clearing the last interrupt) and brings the counter up to date. */
export function arm(timeoutMs) {
  if (progress) Atomics.add(progress, 2, 1);
  interrupted = false;
  overBudget = false;
  calls = 0;
  sync();
  armSpent = spent;
  setCounter();
  deadline = performance.now() + timeoutMs;
}

/** A job starts: no steps yet, and `allowance` steps to take in all (Infinity: no budget). */
export function beginJobSteps(jobAllowance) {
  spent = 0;
  allowance = jobAllowance;
}

/** The job is over: its steps are kept for lastJobSteps(), and no budget applies until the next. */
export function endJobSteps() {
  lastSteps = spent;
  allowance = Infinity;
}

/** Steps taken by the last job (all its contexts). */
export const lastJobSteps = () => lastSteps;

/** A call with a budget of its own may take `budget` more steps from here. */
export function allowCall(budget) {
  sync();
  allowance = spent + budget;
}

/** One more budget for the job (a retry after its thread was starved). */
export function extendAllowance(budget) {
  allowance += budget;
}

/** Sets whether the interrupt was the budget's again, as it was read before later work re-armed. */
export function restoreOverBudget(flag) {
  overBudget = flag;
}

/** Counting moves to a fresh context (its pointer: the context's struct in WASM memory). */
export function enterContext(ptr) {
  ctxPtr = ptr;
  lastSet = 0;
}

/** The context is about to be disposed: its last steps are counted. */
export function leaveContext() {
  sync();
  ctxPtr = 0;
}

/** Forgets the context after a trap (its memory may be corrupt). */
export function forgetContext() {
  ctxPtr = 0;
}

/** Whether the deadline passed after the job did very little work (a CPU-starved thread). */
export function starved(limits) {
  sync();
  return spent - armSpent < Math.max(2 * COUNTER_INIT, stepsPerMs * limits.timeoutMs * 0.5);
}

/**
 * Checks that the interrupt counter is where this file expects it in this QuickJS build (its value
 * and how it runs down on known code), in a context made by newContext; sets `exact` accordingly.
 */
export function findCounter(newContext) {
  exact = false;
  let ctx = null;
  try {
    ctx = newContext();
    const p = ctx.ctx.value;
    const at = (p + COUNTER_OFFSET) >> 2;
    if (p <= 0 || (p + COUNTER_OFFSET) % 4 !== 0 || counterView()[at] !== 0) return;
    const run = (code) => {
      deadline = performance.now() + 10_000;
      calls = 0;
      const res = ctx.evalCode(code, 'cogen.js');
      const ok = !res.error;
      (res.error ?? res.value).dispose();
      return ok;
    };
    // The first step of a fresh context (counter 0) calls the handler, which resets it to 10,000.
    if (!run('for (let i = 0; i < 100; i++) {}') || calls !== 1) return;
    const c1 = counterView()[at];
    if (!(c1 > 9000 && c1 < COUNTER_INIT)) return;
    const used = COUNTER_INIT - c1 + 1;
    // The same code again takes the same steps, without a handler call.
    if (!run('for (let i = 0; i < 100; i++) {}') || calls !== 0 || c1 - counterView()[at] !== used) return;
    // Lowering the counter brings the handler forward.
    counterView()[at] = 5;
    if (!run('for (let i = 0; i < 100; i++) {}') || calls !== 1) return;
    exact = true;
  } catch {
    exact = false;
  } finally {
    ctx?.dispose();
    ctxPtr = 0;
    allowance = Infinity;
  }
}

/** Records interpreter progress per millisecond on a busy loop, as measured at start-up. */
export function setStepsPerMs(rate) {
  stepsPerMs = rate;
}

/** Interpreter progress per millisecond measured at start-up, and whether steps are counted exactly (for diagnostics). */
export const calibration = () => ({ stepsPerMs, exact });
