// Steps: the budget unit (docs/DESIGN.md, "Sandbox"), counted and enforced here, with native work.
// This is the only file that reads or writes QuickJS's interrupt counter and that decides what the
// native work meter's units mean (meter.mjs; work.mjs holds its globals), so the accounting that
// decides 'timeout' verdicts reads in one place. A worker runs
// one job at a time: the accounting is this module's state; the engine marks jobs, calls and
// contexts through the functions below and reads `interrupted`, `overBudget`, `overWall`,
// `overNative` and `spent` (live bindings; only this file assigns them).
//
// The interrupt counter lives in the context's struct in WASM memory (JSContext.interrupt_counter);
// findCounter() checks that it is where and how this file expects (exact). Every step a job takes is
// read from it, and it is lowered so that the handler runs exactly when an allowance is spent. If
// the check fails (another QuickJS build), steps are counted in whole handler calls (10,000 each):
// still deterministic, only coarser. Native work is read from the meter's global and bounded the
// same way, at NATIVE_PER_STEP units a step of budget or deadline; the meter sets the counter to 1
// when the units run out, so the handler runs at the next step.
//
// The deadline (limits.timeoutMs) is counted in steps too, at a fixed rate, so that no verdict
// depends on the machine's load: past timeoutMs × STEPS_PER_MS steps a call is a 'timeout' as a
// spent budget is. The wall clock is only a safety net (WALL_FACTOR × the deadline) for what neither
// counter sees; a call it stops (overWall) was starved of CPU or stuck, and is run once more: only
// a second stop counts.
import {
  allowUnits,
  forgetMeter,
  metered,
  pokedAt,
  resetMeter,
  takeUnits,
  unitsDone,
  unpoke,
  useMeter,
} from './work.mjs';

const COUNTER_INIT = 10_000;
const COUNTER_OFFSET = 232;
/**
 * Steps per millisecond of deadline, a fixed rate. A step's cost varies ~15×: QuickJS busy-loops at
 * 110,000-140,000 steps per ms here (calibration()), allocating or string-building code ~10,000.
 * The slow rate keeps a call near the 50 ms an idle machine allowed for any kind of work (500,000
 * steps). Generated references take at most ~57,000 steps; a budget above 500,000 (the cap is
 * 5,000,000) is bounded per call by the deadline as well.
 */
export const STEPS_PER_MS = 10_000;
/** The wall-clock safety net: this many times a call's deadline (pool.ts scales its watchdog with it). */
export const WALL_FACTOR = 20;
/**
 * Native work (meter.mjs's units) that each step of a budget or deadline allows. Generated
 * references do at most ~1.3 units per step of their budget (recursion: ~27 units a call;
 * bench/results/sandbox-hostile.md), so they keep ten times their native work in hand, as they
 * keep ten times their steps; a program whose steps start long native loops (JSON.stringify,
 * fill, join, copies) meets it first.
 */
export const NATIVE_PER_STEP = 16;

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
/** Whether the last interrupt was the wall-clock safety net's: the thread was starved or stuck, and the call gets one more try. */
export let overWall = false;
/** Whether the last interrupt came from native work (a budget's or a deadline's), not from steps. */
export let overNative = false;
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
/** Steps taken by the last job (all its contexts), and its native work (units). */
let lastSteps = 0;
let lastNative = 0;
/** The worker's progress array: [message id, job index, step]; the step moves at every arm(). */
let progress = null;
/** Whether the program is being parsed: its native work is not counted until its top level starts (parseThenRun). */
let parsing = false;
/** Native work of the current job so far, in units; the job may do up to nativeAllowance, a call up to nativeDeadline. */
let nativeSpent = 0;
let nativeAllowance = Infinity;
let nativeDeadline = Infinity;

export function setProgress(arr) {
  progress = arr;
}

/** The module whose memory holds the counters of the contexts to come (after each load), and its meter's globals (null: none). */
export function useModule(mod, globals) {
  wasm = mod;
  heap = null;
  useMeter(mod, globals, counterView);
}

/** Brings nativeSpent up to date with the meter. */
function syncNative() {
  nativeSpent += unitsDone();
}

/** Native work the host does for the program (repeat.mjs), charged as the meter would: past the units, the next step polls. */
export function chargeNative(units) {
  takeUnits(units);
}

/** Whether the job's native work is past its allowance or its call's deadline (the last operation may have ended before the interpreter polled). */
export function nativeOver() {
  syncNative();
  if (!(nativeSpent > nativeAllowance || nativeSpent > nativeDeadline)) return false;
  overNative = interrupted = true;
  overBudget = nativeSpent > nativeAllowance;
  return true;
}

/** Runs fn, the engine's own work in a context (a helper), under its own deadline: no budget applies, nothing of it is counted. */
export function ownWork(ownMs, fn) {
  sync();
  const saved = [spent, nativeSpent, allowance, nativeAllowance];
  allowance = nativeAllowance = Infinity;
  arm(ownMs, ownMs);
  try {
    return fn();
  } finally {
    sync();
    [spent, nativeSpent, allowance, nativeAllowance] = saved;
  }
}

/** Native work since it was last counted is the engine's own (parsing arguments, compiling a helper): not counted. */
export function discardNative() {
  unitsDone();
}

/**
 * The program is about to be parsed and its top level run: parsing is not counted (it is bounded by
 * the program's length, not by its budget). The interpreter polls at the start of the top level, so
 * with the counter at 1 the handler runs there, and discards what came before.
 */
export function parseThenRun() {
  if (!metered() || !exact || !ctxPtr) return;
  sync();
  parsing = true;
  const at = (ctxPtr + COUNTER_OFFSET) >> 2;
  counterView()[at] = lastSet = 1;
}

/** The top level is over (or never started: a syntax error): nothing is being parsed any more. */
export function parsed() {
  if (parsing) discardNative();
  parsing = false;
}

/** Steps since lastSet when the meter set the counter to 1 (it held `poked` then) and it now reads c. */
function pokedSteps(poked, c, polled) {
  unpoke();
  return lastSet - poked + (polled ? 1 : 1 - c);
}

function counterView() {
  const buf = wasm.module.HEAPU8.buffer;
  if (!heap || heap.buffer !== buf) heap = new Int32Array(buf);
  return heap;
}

/** Brings `spent` up to date with the counter (steps taken since it was last read or written). */
function sync() {
  syncNative();
  if (!exact || !ctxPtr) return;
  const c = counterView()[(ctxPtr + COUNTER_OFFSET) >> 2];
  const poked = pokedAt();
  spent += poked ? pokedSteps(poked, c, false) : lastSet - c;
  lastSet = c;
}

/**
 * Sets the counter so that the handler runs within COUNTER_INIT steps, or at the first step past
 * the allowance or the deadline (a job may take `allowance` steps; the attempt at one more stops it).
 */
function setCounter() {
  allowUnits(Math.min(nativeAllowance, nativeDeadline) - nativeSpent);
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
    const poked = pokedAt();
    // Either the interpreter's counter ran down from lastSet to 0 and QuickJS has just reset it to
    // COUNTER_INIT (lastSet steps, at least 1), or the regexp engine, which keeps a counter of its
    // own, calls in after 10,000 of its steps: those, plus the interpreter's steps since the last
    // read. (With lastSet = c = COUNTER_INIT the two readings agree.) When the meter set the counter
    // to 1 (poked: its value then), the interpreter took lastSet − poked steps before that.
    if (poked) spent += pokedSteps(poked, c, c === COUNTER_INIT) + (c === COUNTER_INIT ? 0 : COUNTER_INIT);
    else spent += c === COUNTER_INIT ? Math.max(1, lastSet) : lastSet - c + COUNTER_INIT;
    lastSet = c;
  } else spent += COUNTER_INIT;
  if (parsing) {
    parsing = false;
    discardNative();
  } else syncNative();
  if (nativeSpent > nativeAllowance) {
    overBudget = true;
    overNative = true;
    interrupted = true;
    return true;
  }
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
  if (nativeSpent > nativeDeadline) {
    overNative = true;
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
  overNative = false;
  calls = 0;
  sync();
  deadlineSteps = spent + timeoutMs * STEPS_PER_MS;
  nativeDeadline = nativeSpent + timeoutMs * STEPS_PER_MS * NATIVE_PER_STEP;
  setCounter();
  wallDeadline = now() + wallMs;
}

/** A job starts: no steps yet, and `allowance` steps to take in all (Infinity: no budget). */
export function beginJobSteps(jobAllowance) {
  spent = 0;
  allowance = jobAllowance;
  nativeSpent = 0;
  nativeAllowance = jobAllowance * NATIVE_PER_STEP;
}

/** The job is over: its steps are kept for lastJobSteps(), and no budget applies until the next. */
export function endJobSteps() {
  lastSteps = spent;
  lastNative = nativeSpent;
  allowance = Infinity;
  nativeAllowance = Infinity;
}

/** Steps taken by the last job (all its contexts). */
export const lastJobSteps = () => lastSteps;

/** Native work of the last job, in units (meter.mjs; 0 when the module is not metered). */
export const lastJobNative = () => lastNative;

/** A call with a budget of its own may take `budget` more steps from here. */
export function allowCall(budget) {
  sync();
  allowance = spent + budget;
  nativeAllowance = nativeSpent + budget * NATIVE_PER_STEP;
}

/** One more budget for the job (a retry after its thread was starved). */
export function extendAllowance(budget) {
  allowance += budget;
  nativeAllowance += budget * NATIVE_PER_STEP;
}

/** Sets which limit the interrupt was again, as read before later work re-armed. */
export function restoreInterrupt(budgetFlag, wallFlag, nativeFlag) {
  overBudget = budgetFlag;
  overWall = wallFlag;
  overNative = nativeFlag;
}

/** Counting moves to a fresh context (its pointer: the context's struct in WASM memory). */
export function enterContext(ptr) {
  // Making the context (its builtins) is the engine's work, not the program's: not counted.
  unitsDone();
  ctxPtr = ptr;
  lastSet = 0;
  resetMeter(exact ? ptr + COUNTER_OFFSET : 0);
}

/** The context is about to be disposed: its last steps are counted. */
export function leaveContext() {
  sync();
  ctxPtr = 0;
  resetMeter(0);
}

/** Forgets the context after a trap (its memory may be corrupt), and the module's meter with it. */
export function forgetContext() {
  ctxPtr = 0;
  forgetMeter();
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
