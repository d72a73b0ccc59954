// Steps: the budget unit (docs/DESIGN.md, "Sandbox"), counted and enforced here. This file is the
// only one that reads or writes QuickJS's interrupt counter, so the accounting that decides
// 'timeout' verdicts can be read in one place. A worker thread runs one job at a time, so the
// accounting is this module's state: the engine marks jobs, calls and contexts through the
// functions below and reads `interrupted`, `overBudget`, `overWall` and `spent` (exported bindings
// are live; only this file assigns them).
//
// The interrupt counter lives in the context's struct in WASM memory (JSContext.interrupt_counter);
// findCounter() finds it and checks that it behaves as expected (exact = true). Then every step a
// job takes is read from it, and it is lowered so that the handler runs exactly when an allowance
// is spent. If the check fails (another QuickJS build), steps are counted in whole handler calls
// (10,000 each) and allowances are enforced at that granularity: still deterministic, only coarser.
//
// The deadline (limits.timeoutMs) is counted in steps too, so that no verdict depends on the
// machine's load: a call armed with timeoutMs may take timeoutMs × STEPS_PER_MS steps, a fixed
// rate, never the rate measured at start-up (which depends on the machine and on its load when the
// worker started). Past that it is a 'timeout' exactly as a spent budget is. The wall clock stays
// only as a safety net for work the counter does not see (long native calls): WALL_FACTOR times
// the deadline. A call stopped by the safety net (overWall) was either starved of CPU or stuck in
// native code; it is run once more (starved()), and only a second stop counts.
const COUNTER_INIT = 10_000;
const COUNTER_OFFSET = 232;
/**
 * Steps per millisecond of deadline, a fixed rate. A step's cost varies ~15×: QuickJS busy-loops at
 * 110,000-140,000 steps per ms here (calibration() below), while allocating or string-building
 * code runs ~10,000 (~100 ns a step, budget.ts). The slow rate keeps a call's wall time near what
 * the 50 ms wall deadline allowed on an idle machine for any kind of work (500,000 steps; a memory
 * bomb still times out before it fills the cap, a busy loop stops sooner). Generated references
 * take at most ~57,000 steps, so none comes near it; a budget above it (the cap is 5,000,000) is
 * bounded per call by the deadline as well.
 */
export const STEPS_PER_MS = 10_000;
/** The wall-clock safety net: this many times a call's deadline (pool.ts scales its watchdog with it). */
export const WALL_FACTOR = 20;

/** The clock the safety net reads; a test can make it jump or run slow (setClockForTest). */
let now = () => performance.now();
/** The wall-clock safety net of the last arm() (a now() time). */
let wallDeadline = 0;
/** The step the deadline of the last arm() allows up to (Infinity: none). */
let deadlineSteps = Infinity;
/** Whether the last armed deadline or budget was hit. */
export let interrupted = false;
/** Whether the last interrupt was the budget's (else the deadline's). */
export let overBudget = false;
/** Whether the last interrupt was the wall-clock safety net's (not counted steps). */
export let overWall = false;
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
 * the allowance or the deadline (a job may take `allowance` steps; the attempt at one more stops it).
 */
function setCounter() {
  if (!exact || !ctxPtr) return;
  const left = Math.min(allowance, deadlineSteps) - spent + 1;
  const next = left >= COUNTER_INIT ? COUNTER_INIT : Math.max(1, left);
  counterView()[(ctxPtr + COUNTER_OFFSET) >> 2] = next;
  lastSet = next;
}

/** The runtime's interrupt handler: counts the steps since the last call, then stops past the allowance, the deadline or the safety net. */
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
  if (spent > deadlineSteps) {
    if (exact && ctxPtr) spent = Math.max(deadlineSteps, spent - 1);
    interrupted = true;
    return true;
  }
  if (now() > wallDeadline) {
    overWall = true;
    interrupted = true;
    return true;
  }
  setCounter();
  return false;
}

/**
 * Starts a deadline of timeoutMs (timeoutMs × STEPS_PER_MS steps from here), with its wall-clock
 * safety net (wallMs from now), clearing the last interrupt, and brings the counter up to date.
 */
export function arm(timeoutMs, wallMs = timeoutMs * WALL_FACTOR) {
  if (progress) Atomics.add(progress, 2, 1);
  interrupted = false;
  overBudget = false;
  overWall = false;
  calls = 0;
  sync();
  deadlineSteps = spent + timeoutMs * STEPS_PER_MS;
  setCounter();
  wallDeadline = now() + wallMs;
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

/** Sets which limit the interrupt was again, as read before later work re-armed. */
export function restoreInterrupt(budgetFlag, wallFlag) {
  overBudget = budgetFlag;
  overWall = wallFlag;
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

/**
 * Whether the last interrupt was the wall-clock safety net's: the call had not spent its deadline's
 * steps, so the thread was starved of CPU (or stuck in native code) and the call gets one more try.
 */
export function starved() {
  return overWall;
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
      wallDeadline = now() + 10_000;
      deadlineSteps = Infinity;
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
    deadlineSteps = Infinity;
  }
}

/**
 * For tests: replaces the clock the safety net reads (null: the real one), to simulate a starved
 * thread whose wall time passes while it does no work (worker.mjs takes it from workerData).
 */
export function setClockForTest(clock) {
  now = clock ?? (() => performance.now());
}

/** Records interpreter progress per millisecond on a busy loop, as measured at start-up (diagnostics only: it decides nothing). */
export function setStepsPerMs(rate) {
  stepsPerMs = rate;
}

/** Interpreter progress per millisecond measured at start-up, and whether steps are counted exactly (for diagnostics). */
export const calibration = () => ({ stepsPerMs, exact });
