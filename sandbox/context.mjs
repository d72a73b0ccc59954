// One fresh context of a job (engine.mjs runs the calls in it): made on the worker's runtime, the
// builtins the host takes before the program can touch them, f found, everything disposed after.
// `c` is runInContext's state (engine.mjs): ctx, r, held (handles to dispose), dirty, among others.
import { FAST_REPEAT, installRepeat } from './repeat.mjs';
import { recycleRuntime, runtimeFor } from './runtime.mjs';
import { arm, enterContext, interrupted, leaveContext } from './steps.mjs';

/** Language features every context gets. No TypedArrays (hence no SharedArrayBuffer/Atomics). */
export const INTRINSICS = {
  BaseObjects: true,
  Eval: true,
  JSON: true,
  RegExp: true,
  MapSet: true,
  Date: true,
  Proxy: true,
  Promise: true,
};

/** A fresh context on the runtime for these limits, entered for step counting. */
export function openContext(limits) {
  const r = runtimeFor(limits);
  const ctx = r.newContext({ intrinsics: INTRINSICS });
  enterContext(ctx.ctx.value);
  return { r, ctx };
}

/** Keeps a handle to dispose with the context; returns it. */
export function hold(c, h) {
  c.held.push(h);
  return h;
}

/** The builtins the host uses, taken before the program can touch them. */
export function takeBuiltins(c, program, budget) {
  const { ctx } = c;
  const keep = (h) => hold(c, h);
  const g = ctx.global;
  const json = keep(ctx.getProp(g, 'JSON'));
  const parse = keep(ctx.getProp(json, 'parse'));
  const stringify = keep(ctx.getProp(json, 'stringify'));
  const reflect = keep(ctx.getProp(g, 'Reflect'));
  const apply = keep(ctx.getProp(reflect, 'apply'));
  const objectCtor = keep(ctx.getProp(g, 'Object'));
  const protoOf = keep(ctx.getProp(objectCtor, 'getPrototypeOf'));
  const objectProto = keep(ctx.getProp(objectCtor, 'prototype'));
  const arrayCtor = keep(ctx.getProp(g, 'Array'));
  const isArray = keep(ctx.getProp(arrayCtor, 'isArray'));
  const stringCtor = keep(ctx.getProp(g, 'String'));
  const stringProto = keep(ctx.getProp(stringCtor, 'prototype'));
  const charCodeAt = keep(ctx.getProp(stringProto, 'charCodeAt'));
  const tools = { budget, canThrow: /\bthrow\b/.test(program) };
  if (FAST_REPEAT) installRepeat(ctx, stringProto, keep);
  installConsole(ctx, g);
  return { g, json, parse, stringify, apply, protoOf, objectProto, isArray, charCodeAt, tools };
}

/** Console methods a program may call */
const CONSOLE = ['log', 'info', 'warn', 'error', 'debug', 'trace'];

/**
 * A console that prints nothing: each method is Function.prototype, which takes any arguments and
 * returns undefined, so nothing a program logs is made into text or leaves the context (and no
 * host function is called).
 */
function installConsole(ctx, g) {
  const fn = ctx.getProp(g, 'Function');
  const noop = ctx.getProp(fn, 'prototype');
  const console = ctx.newObject();
  for (const k of CONSOLE) ctx.setProp(console, k, noop);
  ctx.setProp(g, 'console', console);
  for (const h of [console, noop, fn]) h.dispose();
}

/**
 * f: a property of the global object (function f, var f), else a global lexical binding (let,
 * const), which only a script can read. Null when neither can be read.
 */
export function findF(c, host, limits) {
  const { ctx } = c;
  arm(limits.timeoutMs);
  let f = null;
  try {
    f = hold(c, ctx.getProp(host.g, 'f'));
  } catch {
    // a throwing getter: no usable f
  }
  if (f && ctx.typeof(f) === 'undefined' && !interrupted) {
    const fr = ctx.evalCode('f', 'cogen.js');
    f = fr.error ? null : hold(c, fr.value);
    if (fr.error) fr.error.dispose();
  }
  return f;
}

/** Leaves and disposes of the context and its handles, and drops the runtime when it is dirty. */
export function closeContext(c) {
  leaveContext();
  for (const h of c.held) {
    try {
      h.dispose();
    } catch {
      c.dirty = true;
    }
  }
  // Pending promise jobs keep the context alive inside the runtime: drop the whole runtime.
  try {
    if (c.r.hasPendingJob()) c.dirty = true;
  } catch {
    c.dirty = true;
  }
  try {
    c.ctx.dispose();
  } catch {
    c.dirty = true;
  }
  recycleRuntime(c.dirty);
}
