// GRPO-family losses against golden values from test/fixtures/grpo_golden.py (numpy, float64), on the
// cpu backend and on tensorflow (test/solver-backends.ts says when).
import { readFileSync } from 'node:fs';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { beforeAll, describe, expect, it } from 'vitest';
import { itOn, named, TENSORFLOW_SKIP, useBackend } from './solver-backends.js';
import { advantages, type LossType, overlongPenalty, policyLoss } from '../src/solver/testing.js';

interface Golden {
  inputs: { logp: number[][]; old: number[][]; ref: number[][]; mask: number[][]; rewards: number[][] };
  advantages: Record<'group' | 'batch' | 'none', number[]>;
  advMixed: number[];
  cases: {
    type: LossType;
    adv: 'group' | 'mixed';
    epsLow: number;
    epsHigh: number;
    beta: number;
    maxLen: number;
    loss: number;
  }[];
}
const golden = JSON.parse(readFileSync(new URL('./fixtures/grpo_golden.json', import.meta.url), 'utf8')) as Golden;

beforeAll(async () => {
  await tf.setBackend('cpu');
});

describe('advantages', () => {
  for (const scale of ['group', 'batch', 'none'] as const) {
    it(`${scale} scaling matches numpy (incl. an all-equal group → 0)`, () => {
      const got = advantages(golden.inputs.rewards, scale).flat();
      got.forEach((v, i) => expect(v).toBeCloseTo(golden.advantages[scale][i]!, 9));
    });
  }
  it('all-equal group has zero advantage under every scaling', () => {
    for (const s of ['group', 'batch', 'none'] as const) expect(advantages([[0.3, 0.3, 0.3]], s)[0]).toEqual([0, 0, 0]);
  });
});

for (const backend of ['cpu', 'tensorflow'] as const)
  describe(`policyLoss golden values on ${backend}`, () => {
    const it = itOn(backend);
    beforeAll(async () => {
      if (!(backend === 'tensorflow' && TENSORFLOW_SKIP)) await useBackend(backend);
    });
    const { logp, old, ref, mask } = golden.inputs;
    for (const c of golden.cases) {
      it(named(backend, `${c.type} adv=${c.adv} ε=[${c.epsLow}, ${c.epsHigh}] β=${c.beta}`), () => {
        const adv = c.adv === 'group' ? golden.advantages.group : golden.advMixed;
        const out = tf.tidy(() => {
          const r = policyLoss(
            {
              logp: tf.tensor2d(logp),
              old: tf.tensor2d(old),
              ref: tf.tensor2d(ref),
              mask: tf.tensor2d(mask),
              adv: tf.tensor1d(adv),
            },
            { type: c.type, epsLow: c.epsLow, epsHigh: c.epsHigh, beta: c.beta, maxLen: c.maxLen },
          );
          return [r.loss, r.clipFraction, r.kl].map((t) => t.dataSync()[0]!);
        });
        expect(Math.abs(out[0]! - c.loss)).toBeLessThan(2e-5 * Math.max(1, Math.abs(c.loss)));
        expect(out[1]).toBeGreaterThanOrEqual(0);
        expect(out[1]).toBeLessThanOrEqual(1);
        if (c.beta === 0) expect(out[2]).toBe(0);
        else expect(out[2]).toBeGreaterThan(0);
      });
    }

    it(named(backend, 'ratio 1 gives loss −mean advantage (grpo) and zero clip fraction'), () => {
      const r = tf.tidy(() => {
        const lp = tf.tensor2d([
          [-1, -2],
          [-0.5, -0.1],
        ]);
        const o = policyLoss(
          { logp: lp, old: lp.clone(), mask: tf.ones([2, 2]) as tf.Tensor2D, adv: tf.tensor1d([1, -1]) },
          { type: 'grpo', epsLow: 0.2, epsHigh: 0.2, beta: 0, maxLen: 2 },
        );
        return [o.loss.dataSync()[0]!, o.clipFraction.dataSync()[0]!];
      });
      expect(r[0]).toBeCloseTo(0, 6);
      expect(r[1]).toBe(0);
    });
  });

describe('overlong penalty', () => {
  it('is 0, then a linear ramp, then −1', () => {
    expect(overlongPenalty(10, 40, 8)).toBe(0);
    expect(overlongPenalty(32, 40, 8)).toBe(0);
    expect(overlongPenalty(36, 40, 8)).toBeCloseTo(-0.5);
    expect(overlongPenalty(40, 40, 8)).toBeCloseTo(-1);
    expect(overlongPenalty(41, 40, 8)).toBe(-1);
  });
});
