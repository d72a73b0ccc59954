// The tasks of bench:sandbox (see bench/sandbox.ts's header): G distinct answers per task, the
// first the reference input; PAIRED, ten realistic programs written in both JavaScript and Python,
// and GENERATED, programs and inputs from cogen's generators (levels 0–3, all families).
import type { Json } from '../core/task.js';
import { createRng } from '../core/rng.js';
import { families } from '../generators/index.js';
import { CODE_TASK_TYPES } from '../core/task.js';

/** Answers per task (the config's default group size). */
export const G = 8;

export interface BenchTask {
  program: string;
  py?: string;
  /** The answers (argument lists); the first is the reference input x*. */
  answers: Json[][];
  /** f(x*), from cogen's sandbox (filled in by bench/sandbox.ts's main). */
  output?: Json;
}

// ---------------------------------------------------------------- the paired program set
const PAIRED: { js: string; py: string; input: (r: ReturnType<typeof createRng>) => Json[] }[] = [
  {
    js: 'function f(a, b) { return a * b + a - b }',
    py: 'def f(a, b):\n    return a * b + a - b',
    input: (r) => [r.int(-99, 99), r.int(-99, 99)],
  },
  {
    js: 'function f(s) { return s.split("").reverse().join("") }',
    py: 'def f(s):\n    return s[::-1]',
    input: (r) => [word(r, r.int(3, 12))],
  },
  {
    js: 'function f(xs) { let t = 0; for (const x of xs) if (x % 2 === 0) t += x; return t }',
    py: 'def f(xs):\n    t = 0\n    for x in xs:\n        if x % 2 == 0:\n            t += x\n    return t',
    input: (r) => [ints(r, r.int(3, 10))],
  },
  {
    js: 'function f(xs) { return xs.filter((x) => x % 3 !== 0).map((x) => x * x) }',
    py: 'def f(xs):\n    return [x * x for x in xs if x % 3 != 0]',
    input: (r) => [ints(r, r.int(3, 10))],
  },
  {
    js: 'function f(n) { let a = 0, b = 1; for (let i = 0; i < n; i++) { const t = a + b; a = b; b = t } return a }',
    py: 'def f(n):\n    a, b = 0, 1\n    for i in range(n):\n        a, b = b, a + b\n    return a',
    input: (r) => [r.int(0, 30)],
  },
  {
    js: 'function f(s) { let c = 0; for (const ch of s) if ("aeiou".includes(ch)) c++; return c }',
    py: 'def f(s):\n    c = 0\n    for ch in s:\n        if ch in "aeiou":\n            c += 1\n    return c',
    input: (r) => [word(r, r.int(3, 16))],
  },
  {
    js: 'function f(xs) { let best = 0, run = 0; for (let i = 0; i < xs.length; i++) { run = i > 0 && xs[i] === xs[i - 1] ? run + 1 : 1; if (run > best) best = run } return best }',
    py: 'def f(xs):\n    best, run = 0, 0\n    for i in range(len(xs)):\n        run = run + 1 if i > 0 and xs[i] == xs[i - 1] else 1\n        if run > best:\n            best = run\n    return best',
    input: (r) => [Array.from({ length: r.int(3, 12) }, () => r.int(0, 2))],
  },
  {
    js: 'function f(a, b) { return b === 0 ? a : f(b, a % b) }',
    py: 'def f(a, b):\n    return a if b == 0 else f(b, a % b)',
    input: (r) => [r.int(1, 999), r.int(1, 999)],
  },
  {
    js: 'function f(xs) { return { min: Math.min(...xs), max: Math.max(...xs), len: xs.length } }',
    py: 'def f(xs):\n    return {"min": min(xs), "max": max(xs), "len": len(xs)}',
    input: (r) => [ints(r, r.int(1, 10))],
  },
  {
    js: 'function f(x, lo, hi) { if (x < lo) return lo; if (x > hi) return hi; return x }',
    py: 'def f(x, lo, hi):\n    if x < lo:\n        return lo\n    if x > hi:\n        return hi\n    return x',
    input: (r) => [r.int(-50, 50), r.int(-20, 0), r.int(0, 20)],
  },
];

function word(r: ReturnType<typeof createRng>, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += 'abcdefghijklmnopqrstuvwxyz'[r.int(0, 25)];
  return s;
}
const ints = (r: ReturnType<typeof createRng>, n: number): number[] => Array.from({ length: n }, () => r.int(-20, 20));

/**
 * Paired tasks: G distinct answers each, the reference first, then G - 1 other draws (some give the
 * same output). Distinct, because verifyMany verifies identical answers once (a real saving in the
 * loop, where samples repeat, but one the python executors do not get here).
 */
export function pairedTasks(n: number): BenchTask[] {
  const r = createRng('bench-paired');
  return Array.from({ length: n }, (_, i) => {
    const p = PAIRED[i % PAIRED.length]!;
    const answers: Json[][] = [];
    const keys = new Set<string>();
    for (let tries = 0; answers.length < G && tries < G * 20; tries++) {
      const a = p.input(r);
      if (!keys.has(JSON.stringify(a))) {
        keys.add(JSON.stringify(a));
        answers.push(a);
      }
    }
    return { program: p.js, py: p.py, answers };
  });
}

/** Generated tasks: a draft's program; its inputs are the answers (the first is the reference). */
export function generatedTasks(n: number): BenchTask[] {
  const r = createRng('bench-generated');
  const tasks: BenchTask[] = [];
  let guard = 0;
  while (tasks.length < n && guard++ < n * 10) {
    const fam = r.pick(families);
    const level = r.int(0, 3);
    const type = r.pick(CODE_TASK_TYPES);
    try {
      const d = fam.generate(r.fork(tasks.length), level, type);
      // Its distinct inputs, at most G (see pairedTasks).
      const answers = [...new Map(d.inputs.map((x) => [JSON.stringify(x), x])).values()].slice(0, G);
      if (answers.length > 0) tasks.push({ program: d.program, answers });
    } catch {
      // a family that cannot draw this combination: skip it
    }
  }
  return tasks;
}
