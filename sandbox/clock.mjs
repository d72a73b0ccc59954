// Determinism: a worker thread's frozen clock. The WASM module reads the clock and the time zone
// through this thread's global Date (gettimeofday, localtime, tzset), so freezing it here freezes
// QuickJS's Date.now(), new Date(), local time (UTC) and the seed of Math.random (taken from the
// clock when a context is made), at no cost per call. Nothing in a worker needs the real wall
// clock: deadlines are counted in steps, and only the safety net reads performance.now().
const FIXED_NOW = Date.UTC(2025, 0, 1);
let clockFrozen = false;

/** Replaces this thread's global Date (call it in worker threads only, never in the host's main thread). */
export function freezeClock() {
  if (clockFrozen) return;
  clockFrozen = true;
  const RealDate = Date;
  const asUtc = (...a) => (a.length >= 2 ? [RealDate.UTC(...a)] : a.length === 1 ? a : [FIXED_NOW]);
  class FixedDate extends RealDate {
    constructor(...a) {
      super(...asUtc(...a));
    }
    static now() {
      return FIXED_NOW;
    }
    getTimezoneOffset() {
      return 0;
    }
  }
  for (const k of ['FullYear', 'Month', 'Date', 'Day', 'Hours', 'Minutes', 'Seconds', 'Milliseconds']) {
    FixedDate.prototype['get' + k] = RealDate.prototype['getUTC' + k];
  }
  globalThis.Date = FixedDate;
}
