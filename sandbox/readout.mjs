// Reading values out of a context: what crosses from QuickJS to the host, and the verdict it makes.
// Every way out has a cap (docs/sandbox.md, "What leaves the sandbox"), checked inside the context
// before anything is copied: a result's JSON text (maxOutputBytes, in UTF-8 bytes), an error's name
// and message and a thrown string (TEXT_MAX characters each; a longer one is not copied at all and
// the call fails with 'output-too-large: hostile: …'), and a failure's detail (DETAIL_MAX). An
// error's stack and anything a program prints are never copied (console prints nothing). An
// exception is read carefully (its getters may run, on a little room and time of their own) and
// named: timeout, memory, stack, syntax, forbidden, a result-rule code, or a runtime error.
import { SUFFIX_CODES } from './prelude.mjs';
import {
  NATIVE_PER_STEP,
  STEPS_PER_MS,
  WALL_FACTOR,
  arm,
  interrupted,
  overBudget,
  overNative,
  overWall,
} from './steps.mjs';

/** Most characters of a failure's detail (at most 3 bytes each in UTF-8, and '…'): what the reason of a verdict quotes. */
export const DETAIL_MAX = 300;
/**
 * Most characters of a string (an error's name or message, a thrown string) copied out of a
 * context (at most 3 bytes each in UTF-8): a longer one stays inside, and the call fails with
 * 'output-too-large' (an error that long is an attempt to flood the host, not a message).
 */
export const TEXT_MAX = 1024;

/** Which text was over TEXT_MAX in the failure being read ('' if none). */
let overText = '';

/** Bytes of text copied out of contexts by the current job (what left QuickJS). */
let copied = 0;

/** A job starts: nothing copied yet. */
export function beginCopied() {
  copied = 0;
}

/** Bytes of text the current (or last) job copied out of its contexts. */
export const copiedBytes = () => copied;

/** A string handle's text, copied out of the context (and counted). */
export function copyOut(ctx, h) {
  const s = ctx.getString(h);
  copied += Buffer.byteLength(s, 'utf8');
  return s;
}

/** Text made on the host from a value read inside (a number's digits): counted like a copy. */
export function countOut(s) {
  copied += s.length;
  return s;
}

export const clip = (s) => (s.length > DETAIL_MAX ? s.slice(0, DETAIL_MAX) + '…' : s);

/** The verdict of a call stopped by its budget, its deadline or the safety net (whichever the last interrupt was). */
export const timeoutOut = (limits, budget) => {
  const native = overNative ? `; its native work passed ${NATIVE_PER_STEP} units a step` : '';
  return overBudget
    ? ['timeout', `exceeded its budget of ${budget} steps${native}`]
    : overWall
      ? ['timeout', `ran past the ${limits.timeoutMs * WALL_FACTOR} ms wall-clock safety net`]
      : ['timeout', `exceeded the ${limits.timeoutMs} ms deadline (${limits.timeoutMs * STEPS_PER_MS} steps${native})`];
};

/** The memory cap in force (an answer's own, engine.mjs capMemory, or the sandbox's). */
export const memoryCap = (limits) => limits.memoryCap ?? limits.memoryBytes;

/** The verdict of a call that ran out of memory (`why`: QuickJS's message, when there is one). */
export const memoryOut = (limits, why) => [
  'memory',
  `exceeded ${limits.memoryNote ?? `the ${limits.memoryBytes} byte memory cap`}${why ? ` (${why})` : ''}`,
];

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

/** A string handle's text when it has at most TEXT_MAX characters; else undefined, nothing copied, and `what` noted. */
function shortString(ctx, h, what) {
  const len = lengthOf(ctx, h);
  if (len >= 0 && len <= TEXT_MAX) return copyOut(ctx, h);
  overText ||= what;
  return undefined;
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

/** A property of an error: a number, or a string of at most TEXT_MAX characters (undefined otherwise). */
function str(ctx, obj, key, what = `error ${key}`) {
  try {
    const h = ctx.getProp(obj, key);
    const t = ctx.typeof(h);
    const v = t === 'string' ? shortString(ctx, h, what) : t === 'number' ? ctx.getNumber(h) : undefined;
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
    return used >= memoryCap(limits) * 0.5;
  } catch {
    return false;
  }
}

/**
 * Why a call failed: the exception that escaped the script, read carefully. callPhase: 0 parsing
 * the arguments, 2 calling f, 3 serialising its result, undefined for the program's top level
 * (read from the phase marker, see prelude.mjs). tools: { budget, canThrow (whether the program's
 * text has a `throw`) }.
 */
export function failure(ctx, r, err, limits, callPhase, tools) {
  overText = '';
  const out = readFailure(ctx, r, err, limits, callPhase, tools);
  if (!overText || out[0] === 'timeout') return out;
  return ['output-too-large', `hostile: ${overText} over ${TEXT_MAX} characters (not copied out)`];
}

function readFailure(ctx, r, err, limits, callPhase, tools) {
  if (interrupted) return timeoutOut(limits, tools.budget);
  // Inspection may run the program's getters: give it a little room and time of its own.
  r.setMemoryLimit(memoryCap(limits) + (1 << 20));
  arm(Math.min(limits.timeoutMs, 20));
  const phase = callPhase ?? str(ctx, ctx.global, '__cogen_phase__', 'phase marker');
  const type = ctx.typeof(err);
  let reason = 'runtime-error';
  let detail;
  if (type === 'string') {
    const s = shortString(ctx, err, 'thrown string') ?? '';
    if (s.charCodeAt(0) === 1 && Object.hasOwn(SUFFIX_CODES, s.slice(1))) {
      const [reason, detail] = SUFFIX_CODES[s.slice(1)];
      return [reason, reason === 'output-too-large' ? `the result exceeds ${limits.maxOutputBytes} bytes` : detail];
    }
    detail = `thrown: ${JSON.stringify(s)}`;
  } else if (type === 'object' && isNull(ctx, err)) {
    // QuickJS throws null when it runs out of memory while creating the 'out of memory' error. By
    // the time it is read here the unwinding may have freed the memory (reference counting frees a
    // dropped frame's objects at once), so a program with no `throw` of its own is out of memory too.
    if (nearLimit(r, limits) || !tools.canThrow) return memoryOut(limits);
    detail = 'thrown: null';
  } else if (type === 'object' || type === 'function') {
    const name = str(ctx, err, 'name');
    const message = str(ctx, err, 'message');
    if (interrupted) return timeoutOut(limits, tools.budget);
    if (message === 'out of memory' || message === 'string too long') return memoryOut(limits, message);
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
