// The interpreter's scopes: which names a call, lambda or block binds, and their values.
import type { Stmt } from './tree.js';

/**
 * The variables of one call, lambda or block: a few names (looked up by string comparison, as scopes
 * hold one to three) and the enclosing scope. Objects chained by prototype did the same job, but V8
 * turns every object used as a prototype into a slow dictionary, and that dominated the interpreter.
 */
export class Env {
  readonly names: string[] = [];
  readonly vals: unknown[] = [];
  constructor(readonly up: Env | null) {}
}

export const UNBOUND = Symbol('unbound');

export function lookup(env: Env | null, n: string): unknown {
  for (; env; env = env.up) {
    const i = env.names.indexOf(n);
    if (i >= 0) return env.vals[i];
  }
  return UNBOUND;
}

/** Declares n in this scope (or overwrites it there), shadowing any outer n. */
export function define(env: Env, n: string, x: unknown): void {
  const i = env.names.indexOf(n);
  if (i >= 0) env.vals[i] = x;
  else {
    env.names.push(n);
    env.vals.push(x);
  }
}

/** The scope that holds n, and n's index there. */
export function findScope(env: Env, n: string): [Env, number] | undefined {
  for (let s: Env | null = env; s; s = s.up) {
    const i = s.names.indexOf(n);
    if (i >= 0) return [s, i];
  }
  return undefined;
}

/** A child scope for a block that declares variables; one that declares none shares its parent's. */
export function block(body: Stmt[], env: Env): Env {
  for (const s of body) if (s.kind === 'let') return new Env(env);
  return env;
}
