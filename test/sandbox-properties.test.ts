// fast-check properties of the sandbox, the answer parser and the verifiers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createSandbox, deepEqual, formatLiteral, parseLiteral, verifyAnswer } from '../sandbox/index.js';
import type { Sandbox } from '../sandbox/index.js';
import { DETAIL_MAX, FAILURE_REASONS, TEXT_MAX } from '../sandbox/testing.js';
import type { Json, Task } from '../core/task.js';

let sb: Sandbox;
beforeAll(async () => {
  sb = await createSandbox({ workers: 2 });
});
afterAll(async () => {
  await sb.close();
});

/** Expressions over x (a number) and s (a string), some of them slow, failing or endless. */
const expr: fc.Arbitrary<string> = fc.letrec<{ e: string }>((tie) => ({
  e: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('x', 's', '0', '1', '-3', '2.5', '"ab"', 'null', 'true', '[]', '({})', 'undefined', 'NaN'),
    fc.integer({ min: -1000, max: 1000 }).map(String),
    fc
      .tuple(tie('e'), fc.constantFrom('+', '-', '*', '/', '%', '<', '===', '&&', '||', '??'), tie('e'))
      .map(([a, op, b]) => `(${a} ${op} ${b})`),
    fc.tuple(tie('e'), tie('e'), tie('e')).map(([c, a, b]) => `(${c} ? ${a} : ${b})`),
    fc.tuple(tie('e'), tie('e')).map(([a, b]) => `[${a}, ${b}]`),
    fc.tuple(fc.constantFrom('k', 'v', 'long'), tie('e')).map(([k, v]) => `({ ${k}: ${v} })`),
    tie('e').map((a) => `String(${a}).length`),
    tie('e').map((a) => `[1, 2, 3].map((y) => y * ${a})`),
    tie('e').map((a) => `(() => { let t = 0; for (let i = 0; i < 50; i++) t += i; return ${a} })()`),
    tie('e').map((a) => `(${a}).toFixed(2)`),
    tie('e').map((a) => `JSON.parse(${a})`),
    fc.constantFrom(
      '(() => { while (true) {} })()',
      '(() => { throw 7 })()',
      'f(x + 1, s)',
      '"x".repeat(1 << 17)',
      'Symbol()',
      'Math.random()',
      'new Date().getTime()',
    ),
  ),
})).e;

const program = expr.map((e) => `function f(x, s) { return ${e} }`);
const args = fc.tuple(fc.integer({ min: -100, max: 100 }), fc.string({ maxLength: 8 }));

describe('sandbox properties', () => {
  it('run returns within deadline + slack, never throws into the host, and gives the same answer twice', async () => {
    await fc.assert(
      fc.asyncProperty(program, args, async (p, a) => {
        const t = performance.now();
        const [r1, r2] = await Promise.all([sb.run(p, a), sb.run(p, a)]);
        // Generous slack: the machine is shared; the pool's watchdog bounds a wedged call anyway.
        expect(performance.now() - t).toBeLessThan(sb.limits.timeoutMs * 2 + 10_000);
        for (const r of [r1, r2]) {
          if (!r.ok) expect(FAILURE_REASONS).toContain(r.reason);
        }
        // Timeouts depend on the machine's load; every other outcome must repeat exactly.
        if (r1.ok || r2.ok || (r1.reason !== 'timeout' && r2.reason !== 'timeout')) expect(r2).toEqual(r1);
      }),
      { numRuns: 80 },
    );
  });

  it('arbitrary text as a program never throws into the host', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 60 }), async (text) => {
        const r = await sb.run(text, []);
        if (!r.ok) expect(FAILURE_REASONS).toContain(r.reason);
      }),
      { numRuns: 60 },
    );
  });

  it('values round-trip through the sandbox and through formatLiteral/parseLiteral', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 4 }), async (v) => {
        const value = v as Json;
        const r = await sb.run('function f(x) { return x }', [value]);
        expect(r.ok).toBe(true);
        if (!r.ok) return;
        expect(deepEqual(r.value, value)).toBe(true);
        const back = parseLiteral(formatLiteral(r.value));
        expect(back.ok).toBe(true);
        if (back.ok) expect(deepEqual(back.value, r.value)).toBe(true);
      }),
      { numRuns: 100 },
    );
  });
});

/**
 * Programs that push what they can out of the sandbox: long or wide strings, errors with long names
 * and messages, thrown strings, large or deep results, getters and toJSON, console output.
 */
const big = fc.constantFrom('10', '1000', '1025', '5000', '30000', '1e6', '1e7');
const text = fc
  .tuple(fc.constantFrom('"x"', '"\\u20ac"', '"\\ud83d\\ude00"', '"\\ud800"', 'String(a)'), big)
  .map(([s, n]) => `${s}.repeat(${n})`);
const push: fc.Arbitrary<string> = fc.oneof(
  text.map((t) => `return ${t}`),
  text.map((t) => `throw new Error(${t})`),
  text.map((t) => `throw ${t}`),
  text.map((t) => `const e = new Error("m"); e.name = ${t}; throw e`),
  text.map((t) => `throw { name: ${t}, message: ${t} }`),
  fc.tuple(text, big).map(([t, n]) => `return new Array(${n}).fill(${t})`),
  fc.tuple(text, big).map(([t, n]) => `return Array.from({ length: Math.min(${n}, 1e5) }, (_, i) => ({ i, s: ${t} }))`),
  text.map((t) => `return { toJSON() { return ${t} } }`),
  text.map((t) => `return { get x() { return ${t} } }`),
  text.map((t) => `for (let i = 0; i < 100; i++) console.log(${t}); return 1`),
  big.map((n) => `let o = []; for (let i = 0; i < Math.min(${n}, 5000); i++) o = [o]; return o`),
);

describe('what leaves the sandbox', () => {
  it('for any answer program, the bytes copied out of QuickJS and the reasons are within the stated caps', async () => {
    const out = sb.limits.maxOutputBytes;
    await fc.assert(
      fc.asyncProperty(
        fc.array(push, { minLength: 1, maxLength: 3 }),
        fc.constantFrom(undefined, 20_000, 200_000),
        async (bodies, budget) => {
          const program = `function f(a) { const k = a % ${bodies.length}; ${bodies.map((b, i) => `if (k === ${i}) { ${b} }`).join(' ')} }`;
          const inputs = [[0], [1], [2]];
          const [m] = await sb.runTasksMetered!([{ program, inputs, budget, budgetPer: 'call' }]);
          // Per call: a result's JSON text (≤ maxOutputBytes bytes), or an error's name and message
          // (≤ TEXT_MAX characters each, 3 bytes a character at most) and a phase marker.
          expect(m!.copied!).toBeLessThanOrEqual(inputs.length * Math.max(out, 2 * 3 * TEXT_MAX + 32));
          for (const r of m!.results) {
            if (r.ok) expect(Buffer.byteLength(JSON.stringify(r.value))).toBeLessThanOrEqual(out);
            else expect(r.detail.length).toBeLessThanOrEqual(DETAIL_MAX + 1);
          }
          const v = await verifyAnswer(sb, { ...inductionTask, budget: budget ?? 20_000 }, program);
          expect(Buffer.byteLength(v.reason ?? '')).toBeLessThanOrEqual(1024);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('answer parser properties', () => {
  it('never throws on arbitrary strings', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.stringMatching(/^[\s[\]{}",:0-9eE.+\-tfnrulas\\']*$/)),
        (s) => {
          const r = parseLiteral(s);
          expect(typeof r.ok).toBe('boolean');
          if (!r.ok) expect(typeof r.reason).toBe('string');
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('agrees with JSON.parse on JSON text (with surrounding whitespace)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom('', ' ', '\n\t '), (v, pad) => {
        const text = pad + JSON.stringify(v) + pad;
        const r = parseLiteral(text);
        expect(r.ok).toBe(true);
        if (r.ok) expect(deepEqual(r.value, JSON.parse(text) as Json)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('rejects what JSON.parse rejects (apart from single-quoted strings)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 12 }), (s) => {
        if (s.includes("'")) return;
        let json = true;
        try {
          JSON.parse(s);
        } catch {
          json = false;
        }
        if (!json) expect(parseLiteral(s).ok).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });
});

const base = { id: 't', family: 'p', level: 0, skills: [], hash: 'h', parent: null, proposer: 'test' };
const inductionTask: Task = {
  ...base,
  type: 'induction',
  program: 'function f(x) { return x - 1 }',
  visible: [{ input: [1], output: 0 }],
  hidden: [{ input: [5], output: 4 }],
  message: 'm',
};

describe('verifier properties', () => {
  const tasks: Task[] = [
    { ...base, type: 'deduction', program: 'function f(x) { return x + 1 }', input: [1], output: 2 },
    { ...base, type: 'abduction', program: 'function f(x) { return x * 2 }', input: [2], output: 4 },
    inductionTask,
  ];

  it('never throw on arbitrary answers and give a reward in [0, 1] with a reason when 0', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...tasks),
        fc.oneof(
          fc.string({ maxLength: 40 }),
          fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
        ),
        async (task, answer) => {
          const v = await verifyAnswer(sb, task, answer);
          expect(v.reward).toBeGreaterThanOrEqual(0);
          expect(v.reward).toBeLessThanOrEqual(1);
          if (v.reward === 0) expect(v.reason).toMatch(/\S/);
        },
      ),
      { numRuns: 120 },
    );
  });
});
