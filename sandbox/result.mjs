// A call's result, read out of its context (engine.mjs runs the calls): numbers and booleans read
// on the host; strings and objects made into JSON text inside the context (objects with the
// result-rule replacer, prelude.mjs), measured there, and copied out only when within the output
// cap (maxOutputBytes, in UTF-8 bytes). The helpers this needs are made inside the context once,
// as the engine's own work (not counted against the answer's budget).
import { hold } from './context.mjs';
import { REPLACER, SUFFIX_CODES, UTF8_LENGTH } from './prelude.mjs';
import { copyOut, countOut, failure, lengthOf, memoryCap, memoryOut, success } from './readout.mjs';
import { arm, ownWork } from './steps.mjs';

/** The deadline (and wall-clock safety net) of the engine's own work: parsing arguments, compiling a helper (ms; pool.ts's OWN_DEADLINE_MS). */
export const OWN_MS = 1000;

/** A call's result as [0, json] or a failure: numbers and booleans read on the host, the rest as JSON text. */
export function readResult(c, host, v) {
  const { ctx, limits } = c;
  const t = ctx.typeof(v);
  if (t === 'number') {
    const x = ctx.getNumber(v);
    return Number.isFinite(x) ? [0, countOut(x === 0 ? '0' : String(x))] : SUFFIX_CODES.n;
  }
  if (t === 'boolean') return [0, countOut(ctx.dump(v) ? 'true' : 'false')];
  if (t === 'undefined') return SUFFIX_CODES.u;
  if (t === 'function' || t === 'symbol' || t === 'bigint') return SUFFIX_CODES[t];
  if (t === 'string' && lengthOf(ctx, v) > limits.maxOutputBytes) {
    // (its JSON text is longer still: refuse it before copying anything)
    return ['output-too-large', `result exceeds ${limits.maxOutputBytes} bytes`];
  }
  return stringifyResult(c, host, v, t);
}

/** A string or object result as JSON text, made inside the context (objects with the result-rule replacer). */
function stringifyResult(c, host, v, t) {
  const { ctx, r, limits } = c;
  if (t !== 'string' && !c.replacer) {
    c.replacer = makeReplacer(ctx, host.isArray, host.protoOf, host.objectProto);
    if (c.replacer) hold(c, c.replacer);
    arm(limits.timeoutMs);
  }
  const sr =
    t === 'string'
      ? ctx.callFunction(host.stringify, host.json, v)
      : c.replacer
        ? ctx.callFunction(host.stringify, host.json, v, c.replacer)
        : null;
  if (!sr) {
    // Our own small function could not be made: the runtime is out of room.
    c.dirty = true;
    return memoryOut(limits);
  }
  if (sr.error) {
    const out = failure(ctx, r, sr.error, limits, 3, host.tools);
    sr.error.dispose();
    r.setMemoryLimit(memoryCap(limits));
    return out;
  }
  const isStr = ctx.typeof(sr.value) === 'string';
  // The JSON text's size is measured inside the context: a text over the cap never crosses.
  const st = !isStr ? null : overCap(c, host, sr.value) ? '' : copyOut(ctx, sr.value);
  sr.value.dispose();
  return st === null
    ? SUFFIX_CODES.u
    : st === '' && isStr
      ? ['output-too-large', `result exceeds ${limits.maxOutputBytes} bytes`]
      : success(st, limits);
}

/**
 * Whether a JSON text is over maxOutputBytes in UTF-8: its length when that decides (at most 3 bytes
 * a character), else its UTF-8 length counted inside the context by a helper made once per context.
 */
function overCap(c, host, h) {
  const { ctx, limits } = c;
  const len = lengthOf(ctx, h);
  if (len < 0 || len > limits.maxOutputBytes) return true;
  if (len * 3 <= limits.maxOutputBytes) return false;
  if (!c.utf8) {
    c.utf8 = ownWork(OWN_MS, () => makeHelper(ctx, UTF8_LENGTH, [host.apply, host.charCodeAt]));
    if (!c.utf8) return true;
    hold(c, c.utf8);
  }
  const r = ownWork(OWN_MS, () => ctx.callFunction(c.utf8, ctx.undefined, h));
  if (r.error) {
    r.error.dispose();
    return true;
  }
  const n = ctx.typeof(r.value) === 'number' ? ctx.getNumber(r.value) : Infinity;
  r.value.dispose();
  return n > limits.maxOutputBytes;
}

/** The result-rule replacer, built from the builtins captured before the program ran. */
function makeReplacer(ctx, isArray, protoOf, objectProto) {
  return ownWork(OWN_MS, () => makeHelper(ctx, REPLACER, [isArray, protoOf, objectProto]));
}

/** A helper function inside the context: `source` is a factory, called with the handles `args`; null if it could not be made. */
function makeHelper(ctx, source, args) {
  const fr = ctx.evalCode(source, 'cogen.js');
  if (fr.error) {
    fr.error.dispose();
    return null;
  }
  const made = ctx.callFunction(fr.value, ctx.undefined, ...args);
  fr.value.dispose();
  if (made.error) {
    made.error.dispose();
    return null;
  }
  return made.value;
}
