// The hostile corpus: every program is contained, ends with its typed reason, and the next task on
// the same worker is unaffected; the host and the pool stay healthy.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandbox } from '../sandbox/index.js';
import type { Sandbox } from '../sandbox/index.js';
import { HOSTILE, NORMAL } from './hostile/corpus.js';

let sb: Sandbox;
beforeAll(async () => {
  // One worker, so that the normal task after each hostile one runs on the very same runtime.
  sb = await createSandbox({ workers: 1, graceMs: 1000 });
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
    const label = typeof h.expect === 'string' ? h.expect : Array.isArray(h.expect) ? h.expect.join(' or ') : 'contained';
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
    const jobs = Array.from({ length: 30 }, (_, i) => ({ program: 'function f(x) { return x + 1 }', args: [i] as [number] }));
    jobs[10] = { program: 'function f() { return /^(a+)+$/.test("a".repeat(40) + "b") }', args: [0] };
    jobs[20] = { program: 'function f() { for (;;) {} }', args: [0] };
    const rs = await sb.runMany(jobs);
    rs.forEach((r, i) => {
      if (i === 10 || i === 20) expect(r).toMatchObject({ ok: false, reason: 'timeout' });
      else expect(r).toEqual({ ok: true, value: i + 1 });
    });
  });
});
