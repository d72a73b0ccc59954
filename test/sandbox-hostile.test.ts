// The hostile corpus: every program is contained, ends with its typed reason, and the next task on
// the same worker is unaffected; the host and the pool stay healthy. Hostile induction answers
// (bench/results/sandbox-hostile.md) fail with their reason within their budget (the steps the
// engine reports), with a short reason, and the first limit failure ends the answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, verifyAnswer } from '../sandbox/index.js';
import type { Sandbox } from '../sandbox/index.js';
import { verifyManyMetered } from '../sandbox/testing.js';
import { generateTask } from '../generators/index.js';
import { createRng } from '../core/rng.js';
import type { InductionTask } from '../core/task.js';
import { HOSTILE, HOSTILE_ANSWERS, NORMAL } from './hostile/corpus.js';

/**
 * What an answer may spend past its budget: the interpreter stops at the budget's last step, but
 * the regexp engine checks in only every 10,000 of its own steps.
 */
const SLACK = 10_000;

let sb: Sandbox;
let task: InductionTask;
beforeAll(async () => {
  // One worker, so that the normal task after each hostile one runs on the very same runtime.
  sb = await createSandbox({ workers: 1, graceMs: 1000 });
  task = (await generateTask(sb, { family: 'array', level: 1, type: 'induction', rng: createRng(7) })) as InductionTask;
});
afterAll(async () => {
  await sb.close();
});

describe('hostile corpus', () => {
  it('has at least 40 programs with distinct names', () => {
    expect(HOSTILE.length).toBeGreaterThanOrEqual(40);
    expect(new Set(HOSTILE.map((h) => h.name)).size).toBe(HOSTILE.length);
  });

  for (const h of HOSTILE) {
    const label =
      typeof h.expect === 'string' ? h.expect : Array.isArray(h.expect) ? h.expect.join(' or ') : 'contained';
    it(`${h.name}: ${label}, next task unaffected`, async () => {
      const r = await sb.run(h.program, h.args ?? [], h.limits);
      if (typeof h.expect === 'string' || Array.isArray(h.expect)) {
        const allowed: string[] = typeof h.expect === 'string' ? [h.expect] : h.expect;
        expect(r.ok, JSON.stringify(r)).toBe(false);
        expect(allowed, JSON.stringify(r)).toContain((r as { reason: string }).reason);
        expect(typeof (r as { detail: string }).detail).toBe('string');
      } else {
        expect(r).toEqual({ ok: true, value: h.expect.value });
      }
      expect(await sb.run(NORMAL.program, NORMAL.args)).toEqual({ ok: true, value: NORMAL.value });
    });
  }

  it('leaves the pool healthy for a batch afterwards', async () => {
    const jobs = Array.from({ length: 100 }, (_, i) => ({ program: NORMAL.program, args: [[i, i + 1, i]] }));
    const rs = await sb.runMany(jobs);
    expect(rs.every((r) => r.ok)).toBe(true);
  });

  it('a hostile job in the middle of a batch fails alone', async () => {
    const jobs = Array.from({ length: 30 }, (_, i) => ({
      program: 'function f(x) { return x + 1 }',
      args: [i] as [number],
    }));
    jobs[10] = { program: 'function f() { return /^(a+)+$/.test("a".repeat(40) + "b") }', args: [0] };
    jobs[20] = { program: 'function f() { for (;;) {} }', args: [0] };
    const rs = await sb.runMany(jobs);
    rs.forEach((r, i) => {
      if (i === 10 || i === 20) expect(r).toMatchObject({ ok: false, reason: 'timeout' });
      else expect(r).toEqual({ ok: true, value: i + 1 });
    });
  });
});

describe('hostile answers', () => {
  for (const h of HOSTILE_ANSWERS) {
    const reasons = typeof h.reason === 'string' ? [h.reason] : h.reason;
    it(`${h.name}: ${reasons.join(' or ')}, within its budget, short reason`, async () => {
      const [m] = await verifyManyMetered(sb, [{ task, answer: h.answer }]);
      const v = m!.verdict;
      expect(v.reward).toBe(0);
      expect(
        reasons.some((r) => v.reason!.startsWith(r)),
        v.reason,
      ).toBe(true);
      expect(v.reason!.length).toBeLessThanOrEqual(400);
      expect(m!.steps!).toBeLessThanOrEqual(m!.budget! + SLACK);
      expect(v.total).toBe(task.visible.length + task.hidden.length);
      if (h.ends) expect(v.passed).toBe(0);
      // The next answer on the same worker is unaffected.
      expect((await verifyAnswer(sb, task, task.program)).reward).toBe(1);
    });
  }

  it('the first limit failure ends the answer: later examples do not run', async () => {
    // Fine on the first example, endless on the second: its third example never runs (nor counts).
    const answer = `function f(...a) { globalThis.n = (globalThis.n || 0) + 1; if (globalThis.n === 2) for (;;) {} return (${task.program.replace(/^function f/, 'function')})(...a) }`;
    const [m] = await verifyManyMetered(sb, [{ task, answer }]);
    expect(m!.verdict).toMatchObject({ reward: 0, passed: 1, total: task.visible.length + task.hidden.length });
    expect(m!.verdict.reason).toMatch(/^timeout: exceeded its budget/);
    expect(m!.steps).toBe(m!.budget);
  });

  it('a wrong output lets the remaining examples run (partial score)', async () => {
    const answer = `function f(...a) { globalThis.n = (globalThis.n || 0) + 1; if (globalThis.n === 1) return "wrong"; return (${task.program.replace(/^function f/, 'function')})(...a) }`;
    const [m] = await verifyManyMetered(sb, [{ task, answer }]);
    const total = task.visible.length + task.hidden.length;
    expect(m!.verdict).toMatchObject({ reward: 0, passed: total - 1, total, reason: 'wrong: example 1 differs' });
  });
});
