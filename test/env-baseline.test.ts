// The trivial baseline of held-out environments (src/run/env-arms.ts envBaseline): the better of the
// random valid-action policy and the best single constant submission over the whole set.
import { describe, expect, it } from 'vitest';
import { envBaseline, type EnvProbe } from '../src/run/testing.js';

const probe = (random: number, constant: number[]): EnvProbe =>
  ({ arm: { family: 'arith', level: 0, type: 'search' }, spec: {}, random, constant }) as unknown as EnvProbe;

describe('envBaseline', () => {
  it('is the random policy where no constant does better', () => {
    expect(envBaseline([probe(1, [0, 0, 0]), probe(0, [0, 0, 0]), probe(1, [0, 0, 0]), probe(0, [0, 0, 0])])).toBe(0.5);
  });
  it('is the best constant where it beats the random policy', () => {
    expect(envBaseline([probe(0, [1, 0, 0]), probe(0, [1, 0, 0]), probe(1, [0, 0, 0]), probe(0, [1, 0, 0])])).toBe(
      0.75,
    );
  });
  it('takes one constant for the whole set, not the best per environment', () => {
    expect(envBaseline([probe(0, [1, 0, 0]), probe(0, [0, 1, 0]), probe(0, [0, 0, 1]), probe(0, [0, 0, 0])])).toBe(
      0.25,
    );
  });
  it('is 0 for an empty set', () => {
    expect(envBaseline([])).toBe(0);
  });
});
