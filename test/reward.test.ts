// Reward shaping for the update (src/reward.ts): exact answers keep 1, wrong numeric deduction answers
// earn less than any right one, and with shaping off the verifiers' rewards pass through unchanged.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { trainingReward } from '../src/reward.js';
import type { DeductionTask, Task } from '../src/task.js';

const deduction = (output: DeductionTask['output']): Task => ({
  id: 't', type: 'deduction', family: 'arith', level: 0, skills: [], program: 'function f(a) { return a; }',
  hash: 'h', parent: null, proposer: 'generator', input: [1], output,
});

describe('trainingReward', () => {
  it('is the verdict when shaping is off, for any answer', () => {
    fc.assert(fc.property(fc.integer({ min: -99, max: 99 }), fc.string(), fc.constantFrom(0, 1), (out, answer, r) => {
      expect(trainingReward(deduction(out), answer, { reward: r }, { numericPartial: 0 })).toBe(r);
    }));
  });
  it('gives a wrong number partial / (1 + distance), below 1 and falling with the distance', () => {
    fc.assert(fc.property(fc.integer({ min: -99, max: 99 }), fc.integer({ min: 1, max: 50 }), (out, d) => {
      const cfg = { numericPartial: 0.5 };
      const near = trainingReward(deduction(out), String(out + d), { reward: 0 }, cfg);
      const far = trainingReward(deduction(out), String(out + d + 1), { reward: 0 }, cfg);
      expect(near).toBeCloseTo(0.5 / (1 + d), 12);
      expect(far).toBeLessThan(near);
      expect(near).toBeLessThan(1);
    }));
  });
  it('keeps a right answer at 1 and gives nothing extra to non-numbers or non-numeric tasks', () => {
    const cfg = { numericPartial: 0.5 };
    expect(trainingReward(deduction(7), '7', { reward: 1 }, cfg)).toBe(1);
    expect(trainingReward(deduction(7), 'true', { reward: 0, reason: 'wrong' }, cfg)).toBe(0);
    expect(trainingReward(deduction(7), '"7"', { reward: 0 }, cfg)).toBe(0);
    expect(trainingReward(deduction(true), '1', { reward: 0 }, cfg)).toBe(0);
    expect(trainingReward({ ...deduction(7), type: 'abduction' } as Task, '[7]', { reward: 0 }, cfg)).toBe(0);
  });
});
