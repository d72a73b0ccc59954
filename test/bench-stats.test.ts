// The benchmarks' statistics (bench/stats.ts): intervals hold the mean, the paired test is exact and
// symmetric, and seeds are drawn, distinct.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { bootstrapMean, drawSeeds, mean, median, pairedDifference, seedsArg, signFlipTest } from '../bench/stats.js';
import { createRng } from '../core/rng.js';

const sample = fc.array(fc.double({ min: -10, max: 10, noNaN: true }), { minLength: 1, maxLength: 12 });

describe('bootstrapMean', () => {
  it('holds the sample mean, inside the sample range, and is deterministic for a seed', () => {
    fc.assert(
      fc.property(sample, fc.integer(), (xs, seed) => {
        const a = bootstrapMean(xs, { reps: 300, rng: createRng(seed) });
        const b = bootstrapMean(xs, { reps: 300, rng: createRng(seed) });
        expect(a).toEqual(b);
        expect(a.lo).toBeLessThanOrEqual(a.mean);
        expect(a.hi).toBeGreaterThanOrEqual(a.mean);
        expect(a.lo).toBeGreaterThanOrEqual(Math.min(...xs) - 1e-9);
        expect(a.hi).toBeLessThanOrEqual(Math.max(...xs) + 1e-9);
        expect(a.mean).toBeCloseTo(mean(xs), 9);
      }),
      { numRuns: 60 },
    );
  });

  it('narrows as the sample grows', () => {
    const rng = createRng(3);
    const draw = (n: number) => Array.from({ length: n }, () => rng.next());
    const small = bootstrapMean(draw(8)),
      large = bootstrapMean(draw(800));
    expect(large.hi - large.lo).toBeLessThan(small.hi - small.lo);
  });

  it('of a constant sample is that point', () => {
    expect(bootstrapMean([0.5, 0.5, 0.5])).toMatchObject({ mean: 0.5, lo: 0.5, hi: 0.5, n: 3 });
  });
});

describe('signFlipTest', () => {
  it('is exact for small n: 8 positive differences give 2/256', () => {
    expect(signFlipTest([1, 2, 3, 4, 5, 6, 7, 8])).toBeCloseTo(2 / 256, 12);
  });

  it('gives 1 when the differences cancel, and is a probability symmetric in sign', () => {
    expect(signFlipTest([1, -1, 2, -2])).toBe(1);
    fc.assert(
      fc.property(sample, (xs) => {
        const p = signFlipTest(xs);
        expect(p).toBeGreaterThan(0);
        expect(p).toBeLessThanOrEqual(1);
        expect(signFlipTest(xs.map((x) => -x))).toBeCloseTo(p, 12);
      }),
      { numRuns: 60 },
    );
  });

  it('samples sign assignments beyond 20 pairs and still finds a clear shift', () => {
    const xs = Array.from({ length: 30 }, (_, i) => 1 + (i % 3));
    const p = signFlipTest(xs, { reps: 2000, rng: createRng(1) });
    expect(p).toBeLessThan(0.01);
    expect(p).toBeGreaterThan(0);
  });
});

describe('pairedDifference', () => {
  it('is the mean of a − b, and refuses samples of different lengths', () => {
    const d = pairedDifference([0.6, 0.7, 0.8], [0.5, 0.5, 0.5]);
    expect(d.mean).toBeCloseTo(0.2, 12);
    expect(d.lo).toBeGreaterThan(0);
    expect(d.p).toBeCloseTo(2 / 8, 12);
    expect(() => pairedDifference([1], [1, 2])).toThrow(/differ in length/);
  });
});

describe('drawSeeds', () => {
  it('draws distinct seeds in range', () => {
    const seeds = drawSeeds(8);
    expect(new Set(seeds).size).toBe(8);
    for (const s of seeds) expect(s).toBeGreaterThanOrEqual(1);
  });
});

describe('median', () => {
  it('is the middle value, or the mean of the two middle ones; NaN for none', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });
});

describe('seedsArg', () => {
  it('gives a list back as given, and random:N as N drawn seeds', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 999_999 }), { minLength: 1, maxLength: 6 }), (xs) => {
        expect(seedsArg(xs.join(','))).toEqual({ seeds: xs, drawn: false });
      }),
    );
    const r = seedsArg('random:3');
    expect(r.drawn).toBe(true);
    expect(new Set(r.seeds).size).toBe(3);
  });
  it('refuses anything else with one line naming it', () => {
    for (const bad of ['', 'x', '1,,2', '-1', '1.5', 'random:x'])
      expect(() => seedsArg(bad)).toThrow(/^--seeds: expected random:N or a list of integers, got ".*"$/);
  });
});
