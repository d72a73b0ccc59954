// Hostile programs, each with the way it must end. Used by test/sandbox-hostile.test.ts, which runs
// every entry and then a normal task on the same worker to check that nothing leaked.
import type { Json } from '../../core/task.js';
import type { FailureReason, Limits } from '../../sandbox/testing.js';

export interface Hostile {
  name: string;
  program: string;
  args?: Json[];
  limits?: Partial<Limits>;
  /**
   * The failure reason it must end with (or one of a few, for bombs that grow and so may meet the
   * deadline or the memory cap first), or the value it must return (contained and harmless).
   */
  expect: FailureReason | FailureReason[] | { value: Json };
}

/** Bombs that grow step by step are stopped by whichever limit they meet first. */
const GROW: FailureReason[] = ['memory', 'timeout'];
const MEM: Partial<Limits> = {};

export const HOSTILE: Hostile[] = [
  // infinite loops
  { name: 'while(true)', program: 'function f() { while (true) {} }', expect: 'timeout' },
  { name: 'for(;;) with work', program: 'function f() { let i = 0; for (;;) { i = (i + 1) % 7 } }', expect: 'timeout' },
  {
    name: 'loop in a map callback',
    program: 'function f(xs) { return xs.map(() => { for (;;) {} }) }',
    args: [[1, 2]],
    expect: 'timeout',
  },
  {
    name: 'loop in a sort comparator',
    program: 'function f() { return [3, 1, 2].sort(() => { while (1) {} }) }',
    expect: 'timeout',
  },
  {
    name: 'loop in a getter of the result',
    program: 'function f() { return { get x() { for (;;) {} } } }',
    expect: 'timeout',
  },
  {
    name: 'loop in toJSON during serialisation',
    program: 'function f() { return { toJSON() { for (;;) {} } } }',
    expect: 'timeout',
  },
  {
    name: 'loop in valueOf',
    program: 'function f() { const o = { valueOf() { for (;;) {} } }; return o + 1 }',
    expect: 'timeout',
  },
  {
    name: 'loop in toString',
    program: 'function f() { return `${{ toString() { for (;;) {} } }}` }',
    expect: 'timeout',
  },
  {
    name: 'catching the interrupt',
    program: 'function f() { for (;;) { try { for (;;) {} } catch (e) {} } }',
    expect: 'timeout',
  },
  {
    name: 'finally that loops',
    program: 'function f() { try { for (;;) {} } finally { for (;;) {} } }',
    expect: 'timeout',
  },
  { name: 'loop built with Function', program: 'function f() { return Function("for(;;){}")() }', expect: 'timeout' },
  { name: 'loop in an async function body', program: 'async function f() { for (;;) {} }', expect: 'timeout' },
  {
    name: "loop in a thrown object's message getter",
    program: 'function f() { throw { get message() { for (;;) {} }, get name() { for (;;) {} } } }',
    expect: 'timeout',
  },
  {
    name: 'catastrophic regex backtracking',
    program: 'function f() { return /^(a+)+$/.test("a".repeat(32) + "b") }',
    expect: 'timeout',
  },
  // memory bombs
  {
    name: 'array of arrays',
    program: 'function f() { const a = []; for (;;) a.push(new Array(1000).fill(0)) }',
    limits: MEM,
    expect: GROW,
  },
  { name: 'string doubling', program: 'function f() { let s = "x"; for (;;) s += s }', limits: MEM, expect: 'memory' },
  {
    name: 'object with ever more keys',
    program: 'function f() { const o = {}; for (let i = 0; ; i++) o["k" + i] = i }',
    limits: MEM,
    expect: GROW,
  },
  {
    name: 'linked list',
    program: 'function f() { let x = null; for (;;) x = { next: x, pad: [1, 2, 3, 4, 5, 6, 7, 8] } }',
    limits: MEM,
    expect: GROW,
  },
  {
    name: 'Map of arrays',
    program: 'function f() { const m = new Map(); for (let i = 0; ; i++) m.set(i, [i, i]) }',
    limits: MEM,
    expect: GROW,
  },
  {
    name: 'one huge array',
    program: 'function f() { return new Array(1e8).fill(0).length }',
    limits: MEM,
    expect: 'memory',
  },
  {
    name: 'one huge string',
    program: 'function f() { return "abcd".repeat(1 << 26).length }',
    limits: MEM,
    expect: 'memory',
  },
  {
    name: 'spread of an endless generator',
    program: 'function* g() { for (let i = 0; ; i++) yield i } function f() { return [...g()].length }',
    limits: MEM,
    expect: GROW,
  },
  // deep recursion
  { name: 'plain recursion', program: 'function f(n) { return f(n + 1) + 1 }', args: [0], expect: 'stack' },
  {
    name: 'mutual recursion',
    program: 'function g() { return h() } function h() { return g() } function f() { return g() }',
    expect: 'stack',
  },
  {
    name: 'recursive getter',
    program: 'function f() { const o = { get x() { return this.x } }; return o.x }',
    expect: 'stack',
  },
  {
    name: 'recursive proxy get trap',
    program: 'function f() { const p = new Proxy({}, { get(t, k, r) { return r[k] } }); return p.x }',
    expect: 'stack',
  },
  {
    name: 'recursion through toJSON',
    program: 'function f() { const o = {}; o.toJSON = function () { return { a: o } }; return o }',
    expect: ['stack', 'timeout'],
  },
  {
    name: 'source nested too deep to parse',
    program: `function f() { return ${'['.repeat(50000)}${']'.repeat(50000)} }`,
    expect: 'stack',
  },
  // giant outputs
  { name: 'long string', program: 'function f() { return "x".repeat(100000) }', expect: 'output-too-large' },
  {
    name: 'long array',
    program: 'function f() { return new Array(20000).fill("abcdef") }',
    expect: 'output-too-large',
  },
  {
    name: 'many records',
    program: 'function f() { return Array.from({ length: 400 }, (_, i) => ({ i, s: "x".repeat(200) })) }',
    expect: 'output-too-large',
  },
  // reaching for the host
  {
    name: 'constructor.constructor → process',
    program: 'function f() { return constructor.constructor("return process")().pid }',
    expect: 'runtime-error',
  },
  {
    name: 'Function → require',
    program: 'function f() { return Function("return require")()("fs").readFileSync("/etc/passwd", "utf8") }',
    expect: 'runtime-error',
  },
  { name: 'eval → process.exit', program: 'function f() { return eval("process.exit(1)") }', expect: 'runtime-error' },
  { name: 'dynamic import', program: 'function f() { return import("node:fs") }', expect: 'non-serialisable' },
  {
    name: 'globalThis host objects',
    program:
      'function f() { return ["process", "require", "Buffer", "setTimeout", "fetch", "WebAssembly", "SharedArrayBuffer", "Atomics", "performance", "os", "std"].filter((k) => k in globalThis) }',
    expect: { value: [] },
  },
  // The plumbing around f (argument parsing, the call, the result check, serialisation) uses builtins
  // captured before the program runs: replacing them only changes what the program itself sees.
  {
    name: 'globalThis tampering: JSON removed',
    program: 'globalThis.JSON = undefined; function f() { return 1 }',
    expect: { value: 1 },
  },
  {
    name: 'JSON.stringify forging invalid JSON for the host',
    program: 'JSON.stringify = () => "{"; function f() { return 1 }',
    expect: { value: 1 },
  },
  {
    name: 'Reflect.apply and Function.prototype.apply replaced',
    program:
      'Reflect.apply = () => 99; Function.prototype.apply = () => 99; Function.prototype.call = () => 99; function f(x) { return x }',
    args: [4],
    expect: { value: 4 },
  },
  // (QuickJS's own JSON.stringify stores into arrays and meets the setter: the program spoiled its
  // own result, nothing else.)
  {
    name: 'index accessors on Array.prototype',
    program:
      'Object.defineProperty(Array.prototype, "0", { get() { return 5 }, set() { throw new Error("set") }, configurable: true }); function f(x) { return [x, x] }',
    args: [3],
    expect: 'non-serialisable',
  },
  {
    name: 'Object.getPrototypeOf lying about the result',
    program:
      'Object.getPrototypeOf = () => Object.prototype; Array.isArray = () => true; function f() { return new Map() }',
    expect: 'non-serialisable',
  },
  {
    name: 'globalThis tampering: f replaced by a number',
    program: 'function f() { return 1 } globalThis.f = 5',
    expect: 'no-function',
  },
  {
    name: 'Object.prototype pollution for the next task',
    program:
      'Object.prototype.polluted = "yes"; Object.defineProperty(Object.prototype, "length", { get() { return 99 }, configurable: true }); function f() { return ({}).polluted }',
    expect: { value: 'yes' },
  },
  {
    name: 'Array.prototype pollution for the next task',
    program:
      'Array.prototype.map = function () { return ["hacked"] }; Array.prototype.push = null; function f() { return [1].map((x) => x) }',
    expect: { value: ['hacked'] },
  },
  {
    name: 'builtin redefinition (Math, JSON.parse)',
    program:
      'Math.max = () => 42; JSON.parse = () => [7]; function f(x) { return [x, Math.max(1, 2), JSON.parse("[1]")] }',
    args: [1],
    expect: { value: [1, 42, [7]] },
  },
  { name: 'top-level throw', program: 'throw new Error("boom"); function f() { return 1 }', expect: 'runtime-error' },
  // promise and job-queue floods
  {
    name: 'self-scheduling promise jobs',
    program: 'function f() { (function l() { Promise.resolve().then(l) })(); return 1 }',
    expect: { value: 1 },
  },
  {
    name: 'a million queued jobs',
    program: 'function f() { for (let i = 0; i < 1e6; i++) Promise.resolve(i).then((x) => x); return 2 }',
    limits: { timeoutMs: 5000 },
    expect: 'memory',
  },
  { name: 'async result', program: 'async function f() { return 1 }', expect: 'non-serialisable' },
  {
    name: 'unhandled rejection',
    program: 'function f() { Promise.reject(new Error("x")); return 3 }',
    expect: { value: 3 },
  },
  // shared memory
  {
    name: 'Atomics.wait on a SharedArrayBuffer',
    program: 'function f() { return Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0) }',
    expect: 'runtime-error',
  },
  // proxies
  {
    name: 'proxy that throws on every trap, returned',
    program:
      'function f() { const t = () => { throw new Error("trap") }; return new Proxy({}, { get: t, set: t, has: t, ownKeys: t, getPrototypeOf: t, getOwnPropertyDescriptor: t, defineProperty: t, deleteProperty: t }) }',
    expect: 'non-serialisable',
  },
  {
    name: 'array proxy that throws, inside the result',
    program: 'function f() { return [new Proxy([], { get() { throw new Error("trap") } })] }',
    expect: 'non-serialisable',
  },
  {
    name: 'proxy that throws on every trap, thrown',
    program:
      'function f() { const t = () => { throw 1 }; throw new Proxy({}, { get: t, has: t, ownKeys: t, getPrototypeOf: t, getOwnPropertyDescriptor: t }) }',
    expect: 'runtime-error',
  },
  // exceptions that are not Errors
  { name: 'throw a number', program: 'function f() { throw 42 }', expect: 'runtime-error' },
  { name: 'throw null', program: 'function f() { throw null }', expect: 'runtime-error' },
  { name: 'throw a symbol', program: 'function f() { throw Symbol("s") }', expect: 'runtime-error' },
  { name: 'throw a function', program: 'function f() { throw function () {} }', expect: 'runtime-error' },
  {
    name: 'throw an object with a throwing toString',
    program: 'function f() { throw { toString() { throw new Error("again") } } }',
    expect: 'runtime-error',
  },
  // syntax and wrapper escapes
  { name: 'broken syntax', program: 'function f( {', expect: 'syntax' },
  { name: 'unterminated comment swallowing the wrapper', program: 'function f() { return 1 } /*', expect: 'syntax' },
  { name: 'closing the wrapper early', program: 'function f() { return 1 } }) (function () {', expect: 'syntax' },
  { name: 'no f at all', program: 'const g = () => 1', expect: 'no-function' },
  {
    name: 'f as a looping getter on globalThis',
    program: 'Object.defineProperty(globalThis, "f", { get() { for (;;) {} } })',
    expect: 'timeout',
  },
  {
    name: 'f as a throwing getter on globalThis',
    program: 'Object.defineProperty(globalThis, "f", { get() { throw new Error("no") } })',
    expect: ['no-function', 'runtime-error'],
  },
  {
    name: 'f that replaces itself during the call',
    program: 'function f(x) { globalThis.f = 5; return x }',
    args: [2],
    expect: { value: 2 },
  },
  // determinism
  {
    name: 'clock and randomness',
    program:
      'function f() { return [Date.now(), new Date().getHours(), new Date().getTimezoneOffset(), typeof Math.random()] }',
    expect: { value: [1735689600000, 0, 0, 'number'] },
  },
];

/** The normal task run after each hostile one: it uses what the hostile ones try to break. */
export const NORMAL = {
  program:
    'function f(xs) { const m = new Map(); xs.forEach((x) => m.set(x, (m.get(x) || 0) + 1)); ' +
    'return { doubled: xs.map((x) => x * 2), max: Math.max(...xs), parsed: JSON.parse("[1]"), ' +
    'clean: !("polluted" in {}) && [].length === 0 && typeof Array.prototype.push === "function", distinct: m.size } }',
  args: [[3, 1, 3]] as Json[],
  value: { doubled: [6, 2, 6], max: 3, parsed: [1], clean: true, distinct: 2 } as Json,
};

/**
 * Hostile induction answers (bench/results/sandbox-hostile.md): verified against a real induction
 * task, each must fail with its reason, end its verification within its budget (steps, counted by
 * the engine), and bring back a short reason whatever it tried to push out of the sandbox.
 */
export interface HostileAnswer {
  name: string;
  answer: string;
  /** The reason the verdict must start with (or one of these). */
  reason: string | string[];
  /** Whether the answer's first failure ends its verification (no later example runs). */
  ends: boolean;
}

const BUDGET = 'timeout: exceeded its budget';
/** Stopped by the step budget, by the native work it allows, or by the memory cap it allows. */
const SPENT = [BUDGET, 'memory: exceeded its memory cap'];

export const HOSTILE_ANSWERS: HostileAnswer[] = [
  { name: 'endless loop', answer: 'function f(a){ for(;;){} }', reason: BUDGET, ends: true },
  {
    name: 'endless string building',
    answer: "function f(a){ let s=''; for(let i=0;i<1e9;i++) s+='x'; return s }",
    reason: BUDGET,
    ends: true,
  },
  {
    name: 'a 10-million-character error message',
    answer: "function f(a){ throw new Error('x'.repeat(1e7)) }",
    reason: SPENT,
    ends: true,
  },
  {
    name: 'a 10-million-character thrown string',
    answer: "function f(a){ throw 'y'.repeat(1e7) }",
    reason: SPENT,
    ends: true,
  },
  {
    name: 'a huge error name',
    answer: "function f(a){ const e = new Error('m'); e.name = 'N'.repeat(5e6); throw e }",
    reason: SPENT,
    ends: true,
  },
  {
    name: 'a 5,000-character error message (not copied out)',
    answer: "function f(a){ throw new Error('x'.repeat(5000)) }",
    reason: 'output-too-large: hostile: error message over 1024 characters',
    ends: true,
  },
  {
    name: 'a 5,000-character thrown string (not copied out)',
    answer: "function f(a){ throw 'y'.repeat(5000) }",
    reason: 'output-too-large: hostile: thrown string over 1024 characters',
    ends: true,
  },
  {
    name: 'a 5,000-character error name (not copied out)',
    answer: "function f(a){ const e = new Error('m'); e.name = 'N'.repeat(5000); throw e }",
    reason: 'output-too-large: hostile: error name over 1024 characters',
    ends: true,
  },
  {
    name: 'a message getter that loops',
    answer: 'function f(a){ throw { get message() { for(;;){} }, name: "E" } }',
    reason: BUDGET,
    ends: true,
  },
  {
    name: 'a 10-million-character result',
    answer: "function f(a){ return 'z'.repeat(1e7) }",
    reason: ['output-too-large', ...SPENT],
    ends: true,
  },
  {
    name: 'a big array result',
    answer: "function f(a){ return ['w'.repeat(2e5), 'v'.repeat(2e5)] }",
    reason: ['output-too-large', ...SPENT],
    ends: true,
  },
  {
    name: 'a result of 30,000 three-byte characters (over the cap in UTF-8 only)',
    answer: "function f(a){ return '\u20ac'.repeat(3e4) }",
    reason: 'output-too-large',
    ends: true,
  },
  { name: 'endless recursion', answer: 'function f(a){ return f(a) + 1 }', reason: 'stack', ends: true },
  {
    name: 'memory bomb',
    answer: "function f(a){ let s = 'ab'; for(;;) { s = s + s; s.charAt(1) } }",
    reason: ['memory', BUDGET],
    ends: true,
  },
  {
    name: 'slow on every input',
    answer: 'function f(a){ let t = 0; for (let i = 0; i < 3e5; i++) t += i; return t }',
    reason: BUDGET,
    ends: true,
  },
  {
    name: 'catches the interrupt and loops on',
    answer: 'function f(a){ for(;;){ try { for(;;){} } catch (e) {} } }',
    reason: BUDGET,
    ends: true,
  },
  {
    name: 'regexp backtracking',
    answer: 'function f(a){ return /^(a+)+$/.test("a".repeat(40) + "b") }',
    reason: BUDGET,
    ends: true,
  },
  // Steps whose native work is large: each stops at what its budget allows in native work or memory.
  {
    name: 'JSON.stringify of an array, endlessly',
    answer: "function f(a){ const x = new Array(1e4).fill('abcdefgh'); for(;;) JSON.stringify(x) }",
    reason: SPENT,
    ends: true,
  },
  {
    name: 'JSON.stringify of a cyclic value, endlessly',
    answer: 'function f(a){ const o = { a }; o.o = o; for(;;) try { JSON.stringify(o) } catch (e) {} }',
    reason: SPENT,
    ends: true,
  },
  {
    name: 'an array filled, endlessly',
    answer: 'function f(a){ for(;;) new Array(1e4).fill(0) }',
    reason: SPENT,
    ends: true,
  },
  {
    name: 'array growth',
    answer: 'function f(a){ const x=[]; for(;;) x.push(x.length, [x.length]) }',
    reason: SPENT,
    ends: true,
  },
  {
    name: 'an output flood (console prints nothing)',
    answer: "function f(a){ for(;;) console.log('x'.repeat(1e5), { a: [1, 2, 3] }) }",
    reason: SPENT,
    ends: true,
  },
  {
    name: 'prototype tricks (toJSON, a looping join, a getter of a long string)',
    answer:
      "function f(a){ Object.prototype.toJSON = function(){ return this }; Array.prototype.join = function(){ for(;;){} }; return { a: [a], get b(){ return 'y'.repeat(1e6) } } }",
    reason: ['output-too-large', ...SPENT],
    ends: true,
  },
  {
    name: 'wrong on every input (runs them all)',
    answer: 'function f(a){ return "nope" }',
    reason: 'wrong: example 1 differs',
    ends: false,
  },
];
