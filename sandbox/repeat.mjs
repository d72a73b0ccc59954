// A String.prototype.repeat that the step budget can see. The original builds its result one copy
// at a time, in a native loop the interrupt counter does not see ('x'.repeat(1e7) takes ~100 ms,
// more than a whole budget, on every call). Each context gets a repeat of the same behaviour that
// builds long results by doubling (String.prototype.concat: about log2(count) concatenations, which
// QuickJS keeps as ropes) and leaves everything else (short results, odd receivers or counts,
// errors) to the original. Made through the engine's API, so no source text is parsed per context.
import { lengthOf } from './readout.mjs';
import { chargeNative } from './steps.mjs';

/** Whether contexts get the doubling repeat (COGEN_SANDBOX_NATIVE_REPEAT=1 keeps the original, for comparison). */
export const FAST_REPEAT = process.env.COGEN_SANDBOX_NATIVE_REPEAT !== '1';
/** Results shorter than this are left to the original repeat. */
const REPEAT_MIN = 4096;
/** Native work (meter.mjs's units) charged for each concatenation made from the host: about what the round trip costs. */
const CONCAT_UNITS = 1000;
/** QuickJS's longest string (JS_STRING_LEN_MAX): beyond it the original throws its RangeError. */
const STRING_MAX = 2 ** 30 - 1;

/** Replaces String.prototype.repeat in ctx; the handles it keeps are given to hold (disposed with the context). */
export function installRepeat(ctx, stringProto, hold) {
  const original = hold(ctx.getProp(stringProto, 'repeat'));
  const concat = hold(ctx.getProp(stringProto, 'concat'));
  const fn = ctx.newFunction('repeat', function (count) {
    if (ctx.typeof(this) === 'string' && count !== undefined && ctx.typeof(count) === 'number') {
      const n = Math.trunc(ctx.getNumber(count));
      const len = lengthOf(ctx, this);
      if (n > 1 && len > 0 && len * n >= REPEAT_MIN && len * n <= STRING_MAX) return doubling(ctx, concat, this, n);
    }
    return count === undefined ? ctx.callFunction(original, this) : ctx.callFunction(original, this, count);
  });
  try {
    ctx.defineProp(stringProto, 'repeat', { value: fn, configurable: true, enumerable: false, writable: true });
  } finally {
    fn.dispose();
  }
}

/** s repeated n times (n ≥ 2) by doubling; the call result of the last concatenation. */
function doubling(ctx, concat, s, n) {
  let acc = null;
  let pow = s.dup();
  try {
    for (;;) {
      chargeNative(2 * CONCAT_UNITS);
      if (n % 2 === 1) {
        const r = acc ? ctx.callFunction(concat, acc, pow) : { value: pow.dup() };
        if (r.error) return r;
        acc?.dispose();
        acc = r.value;
      }
      n = Math.floor(n / 2);
      if (n === 0) break;
      const r = ctx.callFunction(concat, pow, pow);
      if (r.error) return r;
      pow.dispose();
      pow = r.value;
    }
    const out = acc;
    acc = null;
    return { value: out };
  } finally {
    pow.dispose();
    acc?.dispose();
  }
}
