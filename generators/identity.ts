// What a task's identity is made of, for every task type: JSON-like values (finite numbers, no -0)
// and the id derived from the type, the canonical hash of the program and the question.
import { createHash } from 'node:crypto';
import type { Json } from '../core/task.js';

/** JSON-like with finite numbers and no -0. */
export function isJsonValue(x: unknown, depth = 0): x is Json {
  if (depth > 16) return false;
  if (x === null || typeof x === 'boolean' || typeof x === 'string') return true;
  if (typeof x === 'number') return Number.isFinite(x) && !Object.is(x, -0);
  if (Array.isArray(x)) return x.every((y) => isJsonValue(y, depth + 1));
  if (typeof x === 'object' && (Object.getPrototypeOf(x) === Object.prototype || Object.getPrototypeOf(x) === null)) {
    return Object.values(x as object).every((y) => isJsonValue(y, depth + 1));
  }
  return false;
}

const sha = (s: string): string => createHash('sha256').update(s).digest('hex').slice(0, 16);

/** The task id: derived from the canonical hash, the type and the question. */
export function taskId(type: string, hash: string, q: string): string {
  return sha(`${type}\u0000${hash}\u0000${q}`);
}
