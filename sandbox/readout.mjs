// Reading values out of a context: what crosses from QuickJS to the host, and the verdict it makes.
// Strings are measured and, when long, cut inside the context before they are copied out, so a
// hostile program can make nothing large cross; an exception is read carefully (its getters may
// run, on a little room and time of their own) and named: timeout, memory, stack, syntax,
// forbidden, a result-rule code, or a runtime error.
import { SUFFIX_CODES } from './prelude.mjs';
import { STEPS_PER_MS, WALL_FACTOR, arm, interrupted, overBudget, overWall } from './steps.mjs';

const DETAIL_MAX = 300;
/**
 * Most characters of a string (an error's name or message, a thrown string) copied out of a
 * context: longer ones are cut inside the context first, so nothing large crosses to the host.
 */
const TEXT_MAX = 1024;

/** Set when a text had to be cut (over TEXT_MAX): the error channel's output cap. */
let textCut = false;

export function clearTextCut() {
  textCut = false;
}

/** Whether a text was cut since the mark was last cleared; clears it. */
export function takeTextCut() {
  const cut = textCut;
  textCut = false;
  return cut;
}

export const clip = (s) => (s.length > DETAIL_MAX ? s.slice(0, DETAIL_MAX) + '…' : s);

/** The verdict of a call stopped by its budget, its deadline or the safety net (whichever the last interrupt was). */
export const timeoutOut = (limits, budget) =>
  overBudget
    ? ['timeout', `exceeded its budget of ${budget} steps`]
    : overWall
      ? ['timeout', `ran past the ${limits.timeoutMs * WALL_FACTOR} ms wall-clock safety net`]
      : ['timeout', `exceeded the ${limits.timeoutMs} ms deadline (${limits.timeoutMs * STEPS_PER_MS} steps)`];

/** The length of a string handle, read inside the context (-1 if it cannot be read). */
export function lengthOf(ctx, h) {
  try {
    const l = ctx.getProp(h, 'length');
    const x = ctx.typeof(l) === 'number' ? ctx.getNumber(l) : -1;
    l.dispose();
    return x;
  } catch {
    return -1;
  }
}

/** A string handle's text, cut to TEXT_MAX characters inside the context before it is copied out. */
function shortString(ctx, h, slice) {
  const len = lengthOf(ctx, h);
  if (len <= TEXT_MAX) return ctx.getString(h);
  textCut = true;
  if (!slice) return undefined;
  const from = ctx.newNumber(0);
  const to = ctx.newNumber(TEXT_MAX);
  const cut = ctx.callFunction(slice, h, from, to);
  from.dispose();
  to.dispose();
  if (cut.error) {
    cut.error.dispose();
    return undefined;
  }
  const s = ctx.typeof(cut.value) === 'string' ? ctx.getString(cut.value) : undefined;
  cut.value.dispose();
  return s === undefined ? undefined : s + '…';
}

/** A call's JSON text as a verdict: [0, text], or the reason it is refused. */
export function success(s, limits) {
  if (s === null) return ['non-serialisable', 'no JSON text came back'];
  if (
    s.length > limits.maxOutputBytes ||
    (s.length * 3 > limits.maxOutputBytes && Buffer.byteLength(s, 'utf8') > limits.maxOutputBytes)
  ) {
    return ['output-too-large', `result exceeds ${limits.maxOutputBytes} bytes`];
  }
  return [0, s];
}

/** A property of an error: a number, or a string cut inside the context (undefined otherwise). */
function str(ctx, obj, key, slice) {
  try {
    const h = ctx.getProp(obj, key);
    const t = ctx.typeof(h);
    const v = t === 'string' ? shortString(ctx, h, slice) : t === 'number' ? ctx.getNumber(h) : undefined;
    h.dispose();
    return v;
  } catch {
    return undefined;
  }
}

/** Whether a handle is null, compared inside the context (dumping an object would copy it out). */
function isNull(ctx, h) {
  try {
    return ctx.sameValue(h, ctx.null);
  } catch {
    return false;
  }
}

/** Whether the runtime holds at least half of its memory cap (read on failure paths only). */
function nearLimit(r, limits) {
  try {
    const h = r.computeMemoryUsage();
    const usage = r.getSystemContext().dump(h);
    h.dispose();
    const used = usage ? Number(usage.malloc_size ?? usage.memory_used_size ?? 0) : 0;
    return used >= limits.memoryBytes * 0.5;
  } catch {
    return false;
  }
}

/**
 * Why a call failed: the exception that escaped the script, read carefully. callPhase: 0 parsing
 * the arguments, 2 calling f, 3 serialising its result, undefined for the program's top level
 * (read from the phase marker, see prelude.mjs). tools: { slice (String.prototype.slice as taken
 * before the program ran), budget, canThrow (whether the program's text has a `throw`) }.
 */
export function failure(ctx, r, err, limits, callPhase, tools) {
  clearTextCut();
  if (interrupted) return timeoutOut(limits, tools.budget);
  // Inspection may run the program's getters: give it a little room and time of its own.
  r.setMemoryLimit(limits.memoryBytes + (1 << 20));
  arm(Math.min(limits.timeoutMs, 20));
  const phase = callPhase ?? str(ctx, ctx.global, '__cogen_phase__');
  const type = ctx.typeof(err);
  let reason = 'runtime-error';
  let detail;
  if (type === 'string') {
    const s = shortString(ctx, err, tools.slice) ?? '';
    if (s.charCodeAt(0) === 1 && Object.hasOwn(SUFFIX_CODES, s.slice(1))) {
      const [reason, detail] = SUFFIX_CODES[s.slice(1)];
      return [reason, reason === 'output-too-large' ? `the result exceeds ${limits.maxOutputBytes} bytes` : detail];
    }
    detail = `thrown: ${JSON.stringify(s)}`;
  } else if (type === 'object' && isNull(ctx, err)) {
    // QuickJS throws null when it runs out of memory while creating the 'out of memory' error. By
    // the time it is read here the unwinding may have freed the memory (reference counting frees a
    // dropped frame's objects at once), so a program with no `throw` of its own is out of memory too.
    if (nearLimit(r, limits) || !tools.canThrow)
      return ['memory', `exceeded the ${limits.memoryBytes} byte memory cap`];
    detail = 'thrown: null';
  } else if (type === 'object' || type === 'function') {
    const name = str(ctx, err, 'name', tools.slice);
    const message = str(ctx, err, 'message', tools.slice);
    if (interrupted) return timeoutOut(limits, tools.budget);
    if (message === 'out of memory' || message === 'string too long')
      return ['memory', `exceeded the ${limits.memoryBytes} byte memory cap (${message})`];
    if (message === 'stack overflow' || message === 'Maximum call stack size exceeded')
      return ['stack', `exceeded the ${limits.stackBytes} byte stack cap`];
    if (name === 'SyntaxError' && phase === undefined) return ['syntax', clip(`SyntaxError: ${message}`)];
    if (typeof message === 'string' && message.startsWith('forbidden:')) return ['forbidden', clip(message)];
    detail =
      typeof name === 'string' && typeof message === 'string' ? `${name}: ${message}` : `non-Error ${type} thrown`;
  } else {
    let v = '?';
    try {
      v = type === 'number' ? String(ctx.getNumber(err)) : type;
    } catch {
      // keep '?'
    }
    detail = `thrown: ${v}`;
  }
  if (phase === 3) reason = 'non-serialisable';
  return [reason, clip(phase === 3 ? `exception during serialisation: ${detail}` : detail)];
}
