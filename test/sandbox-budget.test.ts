// Budgets (docs/DESIGN.md, "Sandbox"): one answer, one budget of interpreter steps, counted by the
// engine. The tests check the accounting (steps spent against the budget, as the engine reports
// them), never a wall time: the wall cost of hostile answers is measured by
// `npm run bench:sandbox`. The hostile answers themselves (test/hostile/corpus.ts) are checked
// in test/sandbox-hostile.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createSandbox, budgetFor, DEFAULT_BUDGET, resolveBudget, taskBudget } from '../sandbox/index.js';
import type { Sandbox } from '../sandbox/index.js';
import { NATIVE_PER_STEP, verifyManyMetered } from '../sandbox/testing.js';
import { runTwiceMetered } from '../sandbox/testing.js';
import { families, generateTask, materialise } from '../generators/index.js';
import { createRng } from '../core/rng.js';
import {
  referenceAnswer,
  CODE_TASK_TYPES,
  type CodeTask,
  type InductionTask,
  type Json,
  type Task,
  type TaskDraft,
} from '../core/task.js';

/**
 * What an answer may spend past its budget: the interpreter stops at the budget's last step, but
 * the regexp engine checks in only every 10,000 of its own steps.
 */
const SLACK = 10_000;

let sb: Sandbox;
let task: InductionTask;
beforeAll(async () => {
  // One worker, so that each answer after a hostile one runs on the very same runtime.
  sb = await createSandbox({ workers: 1 });
  task = (await generateTask(sb, { family: 'array', level: 1, type: 'induction', rng: createRng(7) })) as InductionTask;
});
afterAll(async () => {
  await sb.close();
});

describe('budget settings', () => {
  it('budget = clamp(factor × cost, floor, cap)', () => {
    expect(budgetFor(10)).toBe(DEFAULT_BUDGET.floor);
    expect(budgetFor(5_000)).toBe(100_000);
    expect(budgetFor(1e9)).toBe(DEFAULT_BUDGET.cap);
    expect(budgetFor(100, resolveBudget({ factor: 30, floor: 10 }))).toBe(3000);
    expect(resolveBudget({ floor: 1e9 }).floor).toBe(DEFAULT_BUDGET.cap);
  });
  it('a task without a budget (made before budgets) gets the cap; a task cannot ask for more than the cap', () => {
    const { budget: _, ...old } = task;
    expect(taskBudget(old as Task)).toBe(DEFAULT_BUDGET.cap);
    expect(taskBudget({ ...task, budget: 1e12 })).toBe(DEFAULT_BUDGET.cap);
    expect(taskBudget({ ...task, budget: 12_345 })).toBe(12_345);
  });
});

describe('every generated task carries a budget its reference fits ten times over', () => {
  const cells = families
    .flatMap((f) =>
      Array.from({ length: f.levels }, (_, level) => CODE_TASK_TYPES.map((type) => ({ family: f.id, level, type }))),
    )
    .flat();
  it.each(cells)('$family level $level $type', async ({ family, level, type }) => {
    for (const seed of [1, 2, 3]) {
      const t = await generateTask(sb, { family, level, type, rng: createRng(seed) });
      expect(t.budget, 'budget').toBeGreaterThanOrEqual(DEFAULT_BUDGET.floor);
      // The task travels as JSON (run store, exports): the budget with it.
      expect((JSON.parse(JSON.stringify(t)) as Task).budget).toBe(t.budget);
      const { cost } = await runTwiceMetered(
        sb,
        t.program,
        t.type === 'induction'
          ? [...t.visible, ...t.hidden].map((e) => e.input)
          : [(t as CodeTask & { input: Json[] }).input],
      );
      expect(cost! * 10, `reference cost ${cost}`).toBeLessThanOrEqual(t.budget!);
      const [m] = await verifyManyMetered(sb, [{ task: t, answer: referenceAnswer(t) }]);
      expect(m!.verdict.reward).toBe(1);
      if (t.type !== 'deduction') expect(m!.budget).toBe(t.budget);
      if (t.type === 'induction') {
        expect(m!.steps! * 10).toBeLessThanOrEqual(t.budget!);
        // Its native work, ten times over, within what the budget allows too.
        const [run] = await sb.runTasksMetered!([
          { program: t.program, inputs: [...t.visible, ...t.hidden].map((e) => e.input), budget: t.budget },
        ]);
        expect(run!.native! * 10, `native work ${run!.native}`).toBeLessThanOrEqual(t.budget! * NATIVE_PER_STEP);
      }
    }
  });
});

describe('a reference too costly in native work for its budget', () => {
  it('is refused as a timeout with one line, and a light one of the same shape is kept', async () => {
    // A few hundred steps, each reversing a string that grows: ~400 native units a step.
    const program = (n: number) =>
      `function f(s) { let r = ''; for (const c of s) r = (r + c).split('').reverse().join('').slice(0, ${n}); return r; }`;
    const draft = (n: number): TaskDraft => ({
      type: 'deduction',
      family: 'str',
      level: 0,
      skills: ['str.reverse'],
      program: program(n),
      inputs: [['ab'.repeat(100)]],
    });
    const heavy = await materialise(sb, draft(100_000));
    expect(heavy).toMatchObject({ ok: false, reason: 'timeout' });
    expect((heavy as { detail: string }).detail).toMatch(
      /^the reference does \d+ units of native work; its budget of \d+ steps allows \d+, which must be twice the reference$/,
    );
    expect(await materialise(sb, draft(8))).toMatchObject({ ok: true });
  });
});

describe('accounting', () => {
  it('a task budget is shared by all calls: steps spent ≤ budget, and exactly what the work took', async () => {
    const loop = 'function f(n) { let t = 0; for (let i = 0; i < n; i++) t += i; return t }';
    const inputs = [[100], [200], [300]];
    const [free] = await sb.runTasksMetered!([{ program: loop, inputs }]);
    expect(free!.results.every((r) => r.ok)).toBe(true);
    const cost = free!.steps;
    // Enough for all three: the same steps, whatever the budget.
    const [fits] = await sb.runTasksMetered!([{ program: loop, inputs, budget: cost }]);
    expect(fits!.results.every((r) => r.ok)).toBe(true);
    expect(fits!.steps).toBe(cost);
    // One step short: the third call fails on the budget, having spent exactly the budget.
    const [short] = await sb.runTasksMetered!([{ program: loop, inputs, budget: cost - 1 }]);
    expect(short!.results.slice(0, 2).every((r) => r.ok)).toBe(true);
    expect(short!.results[2]).toMatchObject({ ok: false, reason: 'timeout' });
    expect(short!.steps).toBe(cost - 1);
  });

  it('an async f that spends its budget is a budget timeout too', async () => {
    const [m] = await sb.runTasksMetered!([
      { program: 'async function f() { for (;;) {} }', inputs: [[], []], budget: 3000 },
    ]);
    expect(m!.results[0]).toMatchObject({ ok: false, reason: 'timeout', detail: 'exceeded its budget of 3000 steps' });
    expect(m!.results[1]).toMatchObject({ ok: false, reason: 'timeout', detail: expect.stringMatching(/^not run/) });
    // (the promise machinery takes a step or two after the interrupt, before the engine sees it)
    expect(m!.steps).toBeLessThanOrEqual(3000 + SLACK);
  });

  it("a call budget is each call's own: one endless call fails alone", async () => {
    const prog = 'function f(n) { if (n < 0) for (;;) {} return n * 2 }';
    const [m] = await sb.runTasksMetered!([
      { program: prog, inputs: [[1], [-1], [3], [-2], [5]], budget: 5000, budgetPer: 'call' },
    ]);
    expect(m!.results.map((r) => (r.ok ? r.value : r.reason))).toEqual([2, 'timeout', 6, 'timeout', 10]);
    // The program's top level and each call: at most one budget each.
    expect(m!.steps).toBeLessThanOrEqual(6 * 5000);
    expect(m!.steps).toBeGreaterThanOrEqual(2 * 5000);
  });

  it('steps are deterministic: the same job spends the same steps on any worker, in any order', async () => {
    const many = await createSandbox({ workers: 2 });
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: 3000 }),
          fc.array(fc.integer({ min: 0, max: 50 }), { minLength: 1, maxLength: 6 }),
          async (n, xs) => {
            const program = `function f(k) { let s = 0; for (let i = 0; i < k * ${n % 97}; i++) s += i % 7; return [s, String(k).repeat(3)] }`;
            const job = { program, inputs: xs.map((x) => [x]), budget: 30_000 };
            const runs = await many.runTasksMetered!([
              job,
              job,
              { program: 'function f(){ for(;;){} }', inputs: [[]], budget: 1000 },
              job,
            ]);
            const again = await sb.runTasksMetered!([job]);
            const steps = [runs[0]!.steps, runs[1]!.steps, runs[3]!.steps, again[0]!.steps];
            expect(new Set(steps).size, JSON.stringify(steps)).toBe(1);
            expect(steps[0]).toBeLessThanOrEqual(30_000 + SLACK);
            expect(runs[2]!.steps).toBe(1000);
          },
        ),
        { numRuns: 25 },
      );
    } finally {
      await many.close();
    }
  });

  it('any answer spends at most its budget (property over generated programs)', async () => {
    const body = fc.constantFrom(
      'return a',
      'for (;;) {}',
      'let s = ""; for (let i = 0; i < 1e9; i++) s += "x"; return s',
      'let t = 0; for (let i = 0; i < 1e4; i++) t += i; return t',
      'return f(a)',
      'throw new Error(String(a).repeat(1000))',
      'return JSON.stringify(a).split("").map((c) => c + c).join("")',
      'return /^(a+)+$/.test("a".repeat(30) + "b")',
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(body, { minLength: 1, maxLength: 3 }),
        fc.integer({ min: 1000, max: 40_000 }),
        async (bodies, budget) => {
          const answer = `function f(a) { const k = JSON.stringify(a).length % ${bodies.length}; ${bodies.map((b, i) => `if (k === ${i}) { ${b} }`).join(' ')} }`;
          const [m] = await verifyManyMetered(sb, [{ task: { ...task, budget }, answer }]);
          expect(m!.budget).toBe(budget);
          expect(m!.steps!).toBeLessThanOrEqual(budget + SLACK);
          expect(m!.verdict.reason?.length ?? 0).toBeLessThanOrEqual(400);
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe('native work (the QuickJS module metered, sandbox/meter.mjs)', () => {
  // Steps whose native work is large: each used to run until the 1 s wall-clock safety net (or for
  // minutes, between two reads of the clock); now each stops at what its budget allows.
  const heavy = [
    "const x = new Array(1e4).fill('abcdefgh'); for (;;) JSON.stringify(x)",
    'for (;;) new Array(1e4).fill(0)',
    "const x = new Array(1e4).fill('ab'); for (;;) x.join(',')",
    "for (;;) console.log('x'.repeat(1e5))",
    'const x = new Array(2e4).fill(0); for (;;) x.indexOf(1)',
  ];
  it.each(heavy)('%s: stops at its budget of native work or memory', async (body) => {
    const budget = 20_000;
    const [m] = await sb.runTasksMetered!([{ program: `function f() { ${body} }`, inputs: [[]], budget }]);
    expect(m!.results[0]).toMatchObject({
      ok: false,
      detail: expect.stringMatching(/^exceeded its (budget of 20000 steps; its native work|memory cap)/),
    });
    // What one native operation does past the units (the memory cap bounds it) is the only excess.
    expect(m!.native!).toBeLessThanOrEqual(budget * NATIVE_PER_STEP + 1_000_000);
    expect(m!.steps).toBeLessThanOrEqual(budget);
  });

  it('an answer stopped by its native work is counted the steps it took, never more than its budget', async () => {
    // String building: ~16 native units a step, so 5,000 steps' units run out after ~4,000 steps.
    const program = "function f() { let s = ''; for (;;) s += 'x' }";
    const [m] = await sb.runTasksMetered!([{ program, inputs: [[]], budget: 5000 }]);
    expect(m!.results[0]).toMatchObject({ ok: false, detail: expect.stringMatching(/its native work passed/) });
    expect(m!.steps).toBeLessThan(5000);
  });

  it('plain code is bounded by its steps alone, exactly as before', async () => {
    const [m] = await sb.runTasksMetered!([
      { program: 'function f() { let t = 0; for (;;) t += t % 7 }', inputs: [[]], budget: 50_000 },
    ]);
    expect(m!.results[0]).toMatchObject({ ok: false, detail: 'exceeded its budget of 50000 steps' });
    expect(m!.steps).toBe(50_000);
    expect(m!.native!).toBeLessThan((50_000 * NATIVE_PER_STEP) / 2);
  });

  it("an answer's native work does not depend on the garbage earlier jobs left (collected between jobs)", async () => {
    const job = {
      program: 'function f(a) { const o = {}; for (let i = 0; i < 30; i++) o["k" + i] = [i, { v: a }]; return 1 }',
      inputs: [[1], [2], [3]],
      budget: 20_000,
    };
    const litter = { program: 'function f() { return 1 }', inputs: [[]] };
    const natives: number[] = [];
    for (let i = 0; i < 12; i++) {
      const runs = await sb.runTasksMetered!([...Array.from({ length: 30 }, () => litter), job]);
      natives.push(runs[30]!.native!);
    }
    // (a collection inside the job would add ~10^5-10^6 units; the heap's history moves it by a few)
    expect(Math.max(...natives) - Math.min(...natives), JSON.stringify(natives)).toBeLessThan(500);
  });

  it("one allocation past the answer's memory cap fails with 'memory'; without a budget the sandbox's cap applies", async () => {
    const program = 'function f() { return new Array(1e5).fill(0).length }';
    const [capped] = await sb.runTasksMetered!([{ program, inputs: [[]], budget: 20_000 }]);
    expect(capped!.results[0]).toMatchObject({
      ok: false,
      reason: 'memory',
      detail: expect.stringMatching(/its memory cap of \d+ bytes/),
    });
    const [larger] = await sb.runTasksMetered!([{ program, inputs: [[]], budget: 1_000_000 }]);
    expect(larger!.results[0]).toEqual({ ok: true, value: 1e5 });
    expect(await sb.run(program, [])).toEqual({ ok: true, value: 1e5 });
  });
});

describe('String.prototype.repeat inside the sandbox (built by doubling for long results)', () => {
  it('gives what the native repeat gives', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ maxLength: 6 }),
        fc.oneof(fc.integer({ min: 0, max: 6000 }), fc.double({ min: 0, max: 3000, noNaN: true })),
        async (s, n) => {
          const r = await sb.run('function f(s, n) { return s.repeat(n) }', [s, n]);
          const want = s.repeat(n);
          if (JSON.stringify(want).length > sb.limits.maxOutputBytes)
            expect(r).toMatchObject({ ok: false, reason: 'output-too-large' });
          else expect(r).toEqual({ ok: true, value: want });
        },
      ),
      { numRuns: 60 },
    );
  });
  it('keeps the native errors and receivers', async () => {
    const r = await sb.run(
      'function f() { const err = (g) => { try { return g() } catch (e) { return e.name + ": " + e.message } }; ' +
        'return [err(() => "x".repeat(-1)), err(() => "x".repeat(Infinity)), err(() => "xy".repeat(2 ** 29)), err(() => String.prototype.repeat.call(null, 3)), ' +
        'String.prototype.repeat.call(12, 3), "ab".repeat({ valueOf() { return 3 } }), "ab".repeat(), "x".repeat(1e6).length, String.prototype.repeat.name] }',
      [],
    );
    expect(r).toEqual({
      ok: true,
      value: [
        'RangeError: invalid repeat count',
        'RangeError: invalid repeat count',
        'RangeError: invalid string length',
        expect.stringMatching(/^TypeError/),
        '121212',
        'ababab',
        '',
        1e6,
        'repeat',
      ],
    });
  });
});
