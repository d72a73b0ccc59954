// Reward shaping for the update (src/run/training-reward.ts): exact answers keep 1, wrong deduction answers earn
// less than any right one (numeric distance or right leading characters), and with shaping off the
// verifiers' rewards pass through unchanged.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { trainingReward } from '../src/run/testing.js';
import type { DeductionTask, Task } from '../core/task.js';

const deduction = (output: DeductionTask['output']): Task => ({
  id: 't',
  type: 'deduction',
  family: 'arith',
  level: 0,
  skills: [],
  program: 'function f(a) { return a; }',
  hash: 'h',
  parent: null,
  proposer: 'generator',
  input: [1],
  output,
});

describe('trainingReward', () => {
  it('is the verdict when shaping is off, for any answer', () => {
    fc.assert(
      fc.property(fc.integer({ min: -99, max: 99 }), fc.string(), fc.constantFrom(0, 1), (out, answer, r) => {
        expect(trainingReward(deduction(out), answer, { reward: r }, { numericPartial: 0, prefixPartial: 0 })).toBe(r);
      }),
    );
  });
  it('gives a wrong number partial / (1 + distance), below 1 and falling with the distance', () => {
    fc.assert(
      fc.property(fc.integer({ min: -99, max: 99 }), fc.integer({ min: 1, max: 50 }), (out, d) => {
        const cfg = { numericPartial: 0.5, prefixPartial: 0 };
        const near = trainingReward(deduction(out), String(out + d), { reward: 0 }, cfg);
        const far = trainingReward(deduction(out), String(out + d + 1), { reward: 0 }, cfg);
        expect(near).toBeCloseTo(0.5 / (1 + d), 12);
        expect(far).toBeLessThan(near);
        expect(near).toBeLessThan(1);
      }),
    );
  });
  it('keeps a right answer at 1 and gives nothing extra to non-numbers or non-numeric tasks', () => {
    const cfg = { numericPartial: 0.5, prefixPartial: 0 };
    expect(trainingReward(deduction(7), '7', { reward: 1 }, cfg)).toBe(1);
    expect(trainingReward(deduction(7), 'true', { reward: 0, reason: 'wrong' }, cfg)).toBe(0);
    expect(trainingReward(deduction(7), '"7"', { reward: 0 }, cfg)).toBe(0);
    expect(trainingReward(deduction(true), '1', { reward: 0 }, cfg)).toBe(0);
    expect(trainingReward({ ...deduction(7), type: 'abduction' } as Task, '[7]', { reward: 0 }, cfg)).toBe(0);
  });

  it('gives a wrong answer partial · (right leading characters as the solver writes them, sign and two digits) / (longer length), below 1', () => {
    const cfg = { numericPartial: 0, prefixPartial: 0.5 };
    // 21 is written +21: the answer 2 (+02) has its sign right, 25 (+25) its sign and tens
    expect(trainingReward(deduction(21), '2', { reward: 0 }, cfg)).toBeCloseTo(0.5 / 3, 12);
    expect(trainingReward(deduction(21), '25', { reward: 0 }, cfg)).toBeCloseTo((0.5 * 2) / 3, 12);
    expect(trainingReward(deduction(21), '215', { reward: 0 }, cfg)).toBeCloseTo((0.5 * 3) / 4, 12);
    expect(trainingReward(deduction(21), '12', { reward: 0 }, cfg)).toBeCloseTo(0.5 / 3, 12);
    expect(trainingReward(deduction(21), '-21', { reward: 0 }, cfg)).toBe(0);
    expect(trainingReward(deduction(-3), '-4', { reward: 0 }, cfg)).toBeCloseTo((0.5 * 2) / 3, 12);
    expect(trainingReward(deduction(true), 'false', { reward: 0 }, cfg)).toBe(0);
    expect(trainingReward(deduction('abc'), '"abd"', { reward: 0 }, cfg)).toBeCloseTo((0.5 * 3) / 5, 12);
    expect(trainingReward({ ...deduction(7), type: 'abduction' } as Task, '[7]', { reward: 0 }, cfg)).toBe(0);
  });
  it('never gives a wrong answer as much as a right one, and credits a longer right prefix more', () => {
    fc.assert(
      fc.property(fc.integer({ min: -999, max: 999 }), fc.string({ maxLength: 6 }), (out, tail) => {
        const cfg = { numericPartial: 0.9, prefixPartial: 0.9 };
        const ref = String(out);
        for (let n = 0; n <= ref.length; n++) {
          const answer = ref.slice(0, n) + tail;
          if (answer === ref) continue;
          const r = trainingReward(deduction(out), answer, { reward: 0 }, cfg);
          expect(r).toBeGreaterThanOrEqual(0);
          expect(r).toBeLessThan(1);
          if (n > 0 && tail.length === 0) {
            expect(r).toBeGreaterThanOrEqual(trainingReward(deduction(out), ref.slice(0, n - 1), { reward: 0 }, cfg));
          }
        }
        expect(trainingReward(deduction(out), ref, { reward: 1 }, cfg)).toBe(1);
      }),
    );
  });
});
