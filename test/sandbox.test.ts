import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, DEFAULT_LIMITS, verifyAnswer, verifyMany, runTwice } from '../sandbox/index.js';
import type { Sandbox } from '../sandbox/index.js';
import type { AbductionTask, DeductionTask, InductionTask } from '../core/task.js';

let sb: Sandbox;
beforeAll(async () => {
  sb = await createSandbox({ workers: 2 });
});
afterAll(async () => {
  await sb.close();
});

const base = { id: 't', family: 'test', level: 0, skills: [], hash: 'h', parent: null, proposer: 'test' };

describe('sandbox run', () => {
  it('has the documented default limits', () => {
    expect(DEFAULT_LIMITS).toEqual({
      timeoutMs: 50,
      memoryBytes: 16 << 20,
      stackBytes: 256 << 10,
      maxOutputBytes: 64 << 10,
    });
    expect(sb.limits).toEqual(DEFAULT_LIMITS);
  });

  it('calls f with the arguments and deep-copies the JSON result out', async () => {
    expect(await sb.run('function f(a, b) { return a + b }', [2, 3])).toEqual({ ok: true, value: 5 });
    expect(await sb.run('function f(xs) { return xs.map((x) => ({ x, y: [x, "s"] })) }', [[1, 2]])).toEqual({
      ok: true,
      value: [
        { x: 1, y: [1, 's'] },
        { x: 2, y: [2, 's'] },
      ],
    });
    expect(await sb.run('const f = (o) => Object.keys(o).sort()', [JSON.parse('{"b":1,"a":2,"__proto__":3}')])).toEqual(
      { ok: true, value: ['__proto__', 'a', 'b'].sort() },
    );
  });

  it('follows the result rule: -0 is 0, non-JSON values are non-serialisable', async () => {
    expect(await sb.run('function f() { return -0 }', [])).toEqual({ ok: true, value: 0 });
    for (const expr of [
      'undefined',
      'NaN',
      'Infinity',
      '-Infinity',
      '() => 1',
      'Symbol()',
      '10n',
      'new Map()',
      '[1,,2]',
      '[undefined]',
      '{a: undefined}',
      '(() => { const o = {}; o.o = o; return o })()',
    ]) {
      const r = await sb.run(`function f() { return ${expr} }`, []);
      expect(r, expr).toMatchObject({ ok: false, reason: 'non-serialisable' });
    }
  });

  it('classifies failures', async () => {
    expect(await sb.run('function f( {', [])).toMatchObject({ ok: false, reason: 'syntax' });
    expect(await sb.run('function g() {}', [])).toMatchObject({ ok: false, reason: 'no-function' });
    expect(await sb.run('function f() { return null.x }', [])).toMatchObject({ ok: false, reason: 'runtime-error' });
    expect(await sb.run('function f() { for (;;) {} }', [])).toMatchObject({ ok: false, reason: 'timeout' });
    expect(await sb.run('function f(n) { return f(n + 1) }', [0])).toMatchObject({ ok: false, reason: 'stack' });
    expect(await sb.run('function f() { return "x".repeat(100000) }', [])).toMatchObject({
      ok: false,
      reason: 'output-too-large',
    });
    expect(await sb.run('function f() { return new Array(1e8).fill(0).length }', [])).toMatchObject({
      ok: false,
      reason: 'memory',
    });
  });

  it('is deterministic: fixed Date, seeded Math.random', async () => {
    const p = 'function f() { return [Date.now(), new Date().toISOString(), Math.random(), Math.random()] }';
    const a = await sb.run(p, []);
    const b = await sb.run(p, []);
    expect(a).toEqual(b);
    expect(a.ok && (a.value as unknown[]).slice(0, 2)).toEqual([1735689600000, '2025-01-01T00:00:00.000Z']);
  });

  it('runMany keeps job order', async () => {
    const jobs = Array.from({ length: 300 }, (_, i) => ({ program: 'function f(x) { return x * x }', args: [i] }));
    const rs = await sb.runMany(jobs);
    expect(rs.filter((r) => !r.ok)).toEqual([]);
    expect(rs.map((r) => (r.ok ? r.value : null))).toEqual(jobs.map((_, i) => i * i));
  });
});

describe('verifiers', () => {
  const ded: DeductionTask = {
    ...base,
    type: 'deduction',
    program: 'function f(a) { return a.length }',
    input: [[1, 2, 3]],
    output: 3,
  };
  const abd: AbductionTask = {
    ...base,
    type: 'abduction',
    program: 'function f(a, b) { return a * b }',
    input: [3, 4],
    output: 12,
  };
  const ind: InductionTask = {
    ...base,
    type: 'induction',
    program: 'function f(x) { return x * 2 + 1 }',
    visible: [
      { input: [1], output: 3 },
      { input: [2], output: 5 },
    ],
    hidden: [
      { input: [10], output: 21 },
      { input: [-3], output: -5 },
    ],
    message: 'linear',
  };

  it('deduction', async () => {
    expect((await verifyAnswer(sb, ded, ' 3 ')).reward).toBe(1);
    expect((await verifyAnswer(sb, ded, '4')).reward).toBe(0);
    const bad = await verifyAnswer(sb, ded, '3x');
    expect(bad.reward).toBe(0);
    expect(bad.reason).toMatch(/malformed/);
  });

  it('abduction accepts any argument list that reproduces the output', async () => {
    expect((await verifyAnswer(sb, abd, '[3, 4]')).reward).toBe(1);
    expect((await verifyAnswer(sb, abd, '[6,2]')).reward).toBe(1);
    expect((await verifyAnswer(sb, abd, '[6,3]')).reward).toBe(0);
    expect((await verifyAnswer(sb, abd, '12')).reason).toMatch(/argument list/);
  });

  it('induction accepts declarations, arrows and function expressions', async () => {
    for (const a of [
      'function f(x) { return 2 * x + 1 }',
      'x => x * 2 + 1',
      '(x) => { return x + x + 1 }',
      'function (y) { return y * 2 + 1 }',
      '```js\nfunction f(x){return x*2+1}\n```',
    ]) {
      expect(await verifyAnswer(sb, ind, a), a).toMatchObject({ reward: 1, passed: 4, total: 4 });
    }
    expect(await verifyAnswer(sb, ind, 'x => x * 2 + (x > 5 ? 0 : 1)')).toMatchObject({
      reward: 0,
      passed: 3,
      total: 4,
    });
    expect((await verifyAnswer(sb, ind, 'x => {')).reason).toMatch(/^syntax/);
    expect((await verifyAnswer(sb, ind, '')).reason).toMatch(/malformed/);
  });

  it('verifyMany batches mixed tasks and never throws', async () => {
    const vs = await verifyMany(sb, [
      { task: ded, answer: '3' },
      { task: abd, answer: '[2, 6]' },
      { task: ind, answer: 'x => 2*x+1' },
      { task: ind, answer: 'x => { while (true) {} }' },
      { task: abd, answer: '[' },
    ]);
    expect(vs.map((v) => v.reward)).toEqual([1, 1, 1, 0, 0]);
    expect(vs[3]!.reason).toMatch(/^timeout/);
  });
});

describe('validation', () => {
  it('runTwice returns outputs for a deterministic program', async () => {
    expect(await runTwice(sb, 'function f(x) { return x + 1 }', [[1], [2]])).toEqual({ ok: true, outputs: [2, 3] });
  });
  it('runTwice reports failures with their reason', async () => {
    expect(await runTwice(sb, 'function f(x) { for(;;){} }', [[1]])).toMatchObject({ ok: false, reason: 'timeout' });
  });
});
