// The values generated programs may take and return: JSON-like, integer-only, within bounds.
import type { Json } from '../../core/task.js';

/** Bounds every value a generated program may take as input or produce as output. */
export interface ValueBounds {
  maxAbs: number;
  maxLen: number;
  /** Most keys of an object (16 unless set). */
  maxKeys?: number;
}
export const DEFAULT_BOUNDS: ValueBounds = { maxAbs: 1_000_000, maxLen: 40 };

/** True when `x` is JSON-like, integer-only, free of -0, printable ASCII, and within bounds. */
export function isTidy(x: unknown, b: ValueBounds = DEFAULT_BOUNDS, depth = 0): x is Json {
  if (depth > 4) return false;
  if (x === null || typeof x === 'boolean') return true;
  if (typeof x === 'number') return Number.isSafeInteger(x) && !Object.is(x, -0) && Math.abs(x) <= b.maxAbs;
  if (typeof x === 'string') return x.length <= b.maxLen && /^[\x20-\x7e]*$/.test(x);
  if (Array.isArray(x)) return x.length <= b.maxLen && x.every((y) => isTidy(y, b, depth + 1));
  if (typeof x === 'object' && Object.getPrototypeOf(x) === Object.prototype) {
    const vals = Object.values(x as object);
    return vals.length <= (b.maxKeys ?? 16) && vals.every((y) => isTidy(y, b, depth + 1));
  }
  return false;
}

/** A deep copy of a JSON-like value (structuredClone is about ten times slower on small inputs). */
export function cloneJson<T>(x: T): T {
  if (typeof x !== 'object' || x === null) return x;
  if (Array.isArray(x)) return x.map(cloneJson) as T;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(x)) {
    const y = cloneJson((x as Record<string, unknown>)[k]);
    // (an own "__proto__" key, as JSON.parse makes, stays a key rather than setting the prototype)
    if (k === '__proto__')
      Object.defineProperty(out, k, { value: y, enumerable: true, writable: true, configurable: true });
    else out[k] = y;
  }
  return out as T;
}
