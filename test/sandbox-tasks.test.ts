// The per-task context (runTasks): one fresh context per task, all of its calls in it, in order.
// What one task does is invisible to the next; within a task, state kept between calls is visible,
// which runTwice must catch; limits still apply to each call as if it ran alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, runTwice, verifyMany } from '../sandbox/index.js';
import type { RunResult, Sandbox } from '../sandbox/index.js';
import type { AbductionTask, InductionTask } from '../core/task.js';
import { HOSTILE, NORMAL } from './hostile/corpus.js';

let sb: Sandbox;
beforeAll(async () => {
  // One worker, so that consecutive tasks share the very same runtime.
  sb = await createSandbox({ workers: 1 });
});
afterAll(async () => {
  await sb.close();
});

const values = (rs: RunResult[]) => rs.map((r) => (r.ok ? r.value : r.reason));
const base = { id: 't', family: 'test', level: 0, skills: [], hash: 'h', parent: null, proposer: 'test' };

describe('runTasks: one fresh context per task', () => {
  it('runs every call of a task, in order, in one context', async () => {
    const [rs] = await sb.runTasks!([
      { program: 'let calls = 0; function f(x) { calls++; return [x, calls] }', inputs: [[1], [2], [3]] },
    ]);
    expect(values(rs!)).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
    ]);
  });

  it('pollution by one task (top level or inside f) is invisible to the next task', async () => {
    const polluter = {
      program:
        'Object.prototype.polluted = "top"; function f(x) { Array.prototype.map = () => ["hacked"]; globalThis.leak = x; ' +
        'JSON.parse = () => [7]; Object.prototype.polluted = "call"; return [1].map((y) => y) }',
      inputs: [[1], [2]],
    };
    const probe = {
      program:
        'function f(x) { return [x, typeof leak, ({}).polluted === undefined, [1, 2].map((y) => y * 2), JSON.parse("[1]")] }',
      inputs: [[5], [6]],
    };
    const [a, b] = await sb.runTasks!([polluter, probe]);
    // Inside the polluting task, its own changes are visible to its later calls…
    expect(values(a!)).toEqual([['hacked'], ['hacked']]);
    // …and never to the next task on the same runtime.
    expect(values(b!)).toEqual([
      [5, 'undefined', true, [2, 4], [1]],
      [6, 'undefined', true, [2, 4], [1]],
    ]);
    expect(await sb.run(NORMAL.program, NORMAL.args)).toEqual({ ok: true, value: NORMAL.value });
  });

  it('a call that meets a limit mid-task fails alone; the calls after it still run', async () => {
    const program =
      'function f(k) { if (k === "loop") for (;;) {} if (k === "deep") return f(k); if (k === "big") return new Array(1e8).fill(0); ' +
      'if (k === "throw") throw new Error("no"); if (k === "undef") return undefined; return k }';
    const [rs] = await sb.runTasks!([
      {
        program,
        inputs: [['a'], ['loop'], ['b'], ['deep'], ['c'], ['big'], ['d'], ['throw'], ['e'], ['undef'], ['f']],
      },
    ]);
    expect(values(rs!)).toEqual([
      'a',
      'timeout',
      'b',
      'stack',
      'c',
      'memory',
      'd',
      'runtime-error',
      'e',
      'non-serialisable',
      'f',
    ]);
  });

  it('limits apply per call, not per task', async () => {
    // Each call takes a good part of its deadline; together they take many deadlines.
    const program = 'function f(n) { let t = 0; for (let i = 0; i < n; i++) t = (t + i * i) % 1000003; return t }';
    const inputs = Array.from({ length: 12 }, () => [150_000]);
    const [rs] = await sb.runTasks!([{ program, inputs }], { timeoutMs: 2000 });
    expect(rs!.every((r) => r.ok)).toBe(true);
  });

  it('large tasks come back whole (batches of arguments and results)', async () => {
    const inputs = Array.from({ length: 1500 }, (_, i) => [i, 'x'.repeat(300)]);
    const [rs] = await sb.runTasks!([{ program: 'function f(i, s) { return { i, s: s + i } }', inputs }]);
    expect(rs!.length).toBe(1500);
    rs!.forEach((r, i) => expect(r).toEqual({ ok: true, value: { i, s: 'x'.repeat(300) + i } }));
  });

  it('a top-level failure fails every call of the task alike', async () => {
    const [a, b, c] = await sb.runTasks!([
      { program: 'function f( {', inputs: [[1], [2]] },
      { program: 'throw new Error("top"); function f() { return 1 }', inputs: [[1], [2]] },
      { program: 'function g() { return 1 }', inputs: [[1], [2]] },
    ]);
    expect(values(a!)).toEqual(['syntax', 'syntax']);
    expect(values(b!)).toEqual(['runtime-error', 'runtime-error']);
    expect(values(c!)).toEqual(['no-function', 'no-function']);
  });

  it('every hostile program, run as a task of three calls, ends each call as it ends alone', async () => {
    const quick = HOSTILE.filter((h) => !(h.limits?.timeoutMs && h.limits.timeoutMs > 1000));
    const tasks = quick.map((h) => ({ program: h.program, inputs: [h.args ?? [], h.args ?? [], h.args ?? []] }));
    const results = await sb.runTasks!(tasks.concat([{ program: NORMAL.program, inputs: [NORMAL.args] }]));
    quick.forEach((h, t) => {
      for (const r of results[t]!) {
        if (typeof h.expect === 'string' || Array.isArray(h.expect)) {
          const allowed: string[] = typeof h.expect === 'string' ? [h.expect] : [...h.expect];
          // Serialising a giant result is native work that the deadline's step count does not see;
          // on a starved machine the wall clock's safety net (20× the deadline) may stop it first.
          if (allowed.includes('output-too-large')) allowed.push('timeout');
          expect(allowed, `${h.name}: ${JSON.stringify(r)}`).toContain((r as { reason?: string }).reason);
        } else {
          expect(r, h.name).toEqual({ ok: true, value: h.expect.value });
        }
      }
    });
    expect(results[quick.length]).toEqual([{ ok: true, value: NORMAL.value }]);
  }, 60_000);
});

describe('verification and validation with per-task contexts', () => {
  it('verifyMany: G answers to one abduction task share its context; each is judged on its own', async () => {
    const task: AbductionTask = {
      ...base,
      type: 'abduction',
      program: 'function f(a, b) { if (a < 0) for (;;) {} return a * b }',
      input: [3, 4],
      output: 12,
    };
    const other: AbductionTask = { ...task, id: 'u', program: 'function f(a, b) { return a + b }', output: 7 };
    const answers = ['[3, 4]', '[2, 6]', '[-1, 1]', '[1, 1]', '[12, 1]', '[', '[3, 4, 5]'];
    const vs = await verifyMany(sb, [
      ...answers.map((answer) => ({ task, answer })),
      { task: other, answer: '[3, 4]' },
      { task: other, answer: '[3, 3]' },
    ]);
    expect(vs.map((v) => v.reward)).toEqual([1, 1, 0, 0, 1, 0, 1, 1, 0]);
    expect(vs[2]!.reason).toMatch(/^timeout/);
    expect(vs[5]!.reason).toMatch(/^malformed/);
  });

  it('verifyMany: an induction answer that pollutes builtins cannot touch other answers', async () => {
    const ind: InductionTask = {
      ...base,
      type: 'induction',
      program: 'function f(x) { return x * 2 }',
      visible: [{ input: [1], output: 2 }],
      hidden: [{ input: [5], output: 10 }],
      message: 'double',
    };
    const vs = await verifyMany(sb, [
      { task: ind, answer: 'x => { Number.prototype.valueOf = () => 0; Object.prototype.toJSON = () => 2; return 2 }' },
      { task: ind, answer: 'x => x + x' },
      { task: ind, answer: 'function f(x) { return JSON.stringify({ a: x }) === `{"a":${x}}` ? x * 2 : -1 }' },
    ]);
    expect(vs.map((v) => v.reward)).toEqual([0, 1, 1]);
  });

  it('verifyMany: identical answers to one task are verified once and get the same verdict', async () => {
    // A stateful program (runTwice would reject it) shows that a repeat does not run after its twin.
    const task: AbductionTask = {
      ...base,
      type: 'abduction',
      program: 'let n = 0; function f(x) { n++; return n === 1 ? x : -1 }',
      input: [5],
      output: 5,
    };
    const vs = await verifyMany(sb, [
      { task, answer: '[5]' },
      { task, answer: ' [ 5 ] ' },
      { task, answer: '[5]' },
      { task, answer: '[6]' },
    ]);
    expect(vs.map((v) => v.reward)).toEqual([1, 1, 1, 0]);
    const ind: InductionTask = {
      ...base,
      type: 'induction',
      program: 'function f(x) { return x + 1 }',
      visible: [{ input: [1], output: 2 }],
      hidden: [{ input: [2], output: 3 }],
      message: 'inc',
    };
    const iv = await verifyMany(sb, [
      { task: ind, answer: 'x => x + 1' },
      { task: ind, answer: 'x => x + 1' },
      { task: ind, answer: 'x => x' },
    ]);
    expect(iv).toEqual([
      { reward: 1, passed: 2, total: 2 },
      { reward: 1, passed: 2, total: 2 },
      expect.objectContaining({ reward: 0, passed: 0, total: 2 }),
    ]);
  });

  it('runTwice catches state kept between calls (order-dependent programs)', async () => {
    const counter = await runTwice(sb, 'let c = 0; function f(x) { return x + c++ }', [[1], [2], [3]]);
    expect(counter).toMatchObject({ ok: false, reason: 'nondeterministic' });
    // With a single input, order cannot tell: the repeated call does.
    const memo = await runTwice(
      sb,
      'const seen = new Set(); function f(x) { if (seen.has(x)) return "again"; seen.add(x); return "first" }',
      [[1]],
    );
    expect(memo).toMatchObject({ ok: false, reason: 'nondeterministic' });
    const random = await runTwice(sb, 'function f(x) { return Math.floor(Math.random() * 1000) }', [[1], [2]]);
    expect(random).toMatchObject({ ok: false, reason: 'nondeterministic' });
    const polluting = await runTwice(
      sb,
      'function f(x) { const r = [x].map((y) => y + 1)[0]; Array.prototype.map = function () { return [0] }; return r }',
      [[1], [2]],
    );
    expect(polluting).toMatchObject({ ok: false, reason: 'nondeterministic' });
    // A harmless cache that does not change results is fine.
    const cache = await runTwice(
      sb,
      'const m = new Map(); function f(x) { if (!m.has(x)) m.set(x, x * x); return m.get(x) }',
      [[1], [2], [3]],
    );
    expect(cache).toEqual({ ok: true, outputs: [1, 4, 9] });
  });
});
