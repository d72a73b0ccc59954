// A program's level and skills read from the program (generators/label.ts): every generated task of
// the labelled families is admitted at or below the level it was drawn at, with the skills its
// generator counted; and hand-written programs get the level their operators, depth, parameters
// and inputs call for, or null with a reason (never a throw).
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createRng } from '../core/rng.js';
import { drawReference, labelProgram } from '../generators/index.js';

/** The labelled families' levels that are expression tables (str's level 4 is a loop it builds by hand). */
const CELLS = [
  ...['arith', 'logic', 'bits'].flatMap((family) => [0, 1, 2, 3, 4].map((level) => ({ family, level }))),
  ...[0, 1, 2, 3].map((level) => ({ family: 'str', level })),
];

/** bits.mask's bit test and set, `(a >> k) & 1` and `a | (1 << k)`, are also an & or | over a shift. */
const MASK_PARTS = new Set(['bits.and', 'bits.or', 'bits.shift']);

describe('labelProgram on generated tasks', () => {
  it('admits every deduction task at or below its level, with its skills', () => {
    fc.assert(
      fc.property(fc.constantFrom(...CELLS), fc.integer({ min: 0, max: 2 ** 31 - 1 }), ({ family, level }, seed) => {
        const { draft } = drawReference(family, createRng(seed), level, 'deduction');
        // bits' level 3 has a second shape, a loop counting bits, which no table describes.
        if (family === 'bits' && draft.program.includes('while')) return;
        const label = labelProgram(family, draft.program, draft.inputs);
        expect(label.level, label.why).not.toBeNull();
        expect(label.level!).toBeLessThanOrEqual(level);
        const want = [...draft.skills].sort();
        if (family !== 'bits' || !want.includes('bits.mask')) expect(label.skills).toEqual(want);
        else {
          // A lower level reads a mask as its & or | and shift: the skills agree but for those.
          expect(label.skills.filter((s) => !want.includes(s)).every((s) => MASK_PARTS.has(s))).toBe(true);
          expect(want.filter((s) => !label.skills.includes(s) && s !== 'bits.mask')).toEqual([]);
        }
      }),
      { numRuns: 600 },
    );
  });
});

describe('labelProgram on written programs', () => {
  const arith = (program: string, inputs = [[4]]) => labelProgram('arith', program, inputs);

  it('labels a + 3 on 4 as arith level 0, addition', () => {
    expect(arith('function f(a) { return a + 3; }')).toEqual({ level: 0, skills: ['arith.add'] });
  });

  it('puts floor division at level 2 or above, with the nested skill for two operators', () => {
    const label = arith('function f(a, b) { return Math.floor(a / 3) + b; }', [[4, 5]]);
    expect(label.level).toBeGreaterThanOrEqual(2);
    expect(label.skills).toEqual(['arith.add', 'arith.div', 'arith.nested']);
  });

  it('raises the level for an input outside the lower ranges, and gives null outside every one', () => {
    expect(arith('function f(a) { return a + 3; }', [[15]]).level).toBe(2);
    expect(arith('function f(a) { return a + 3; }', [[-4]]).level).toBe(3);
    const far = arith('function f(a) { return a + 3; }', [[100000]]);
    expect(far.level).toBeNull();
    expect(far.why).toMatch(/outside/);
    expect(far.skills).toEqual(['arith.add']);
  });

  it('gives a mutated program the level of the operator it now has', () => {
    expect(arith('function f(a) { return a % 3; }').level).toBe(2);
    expect(arith('function f(a, b) { return Math.abs(a - b); }', [[4, 5]]).level).toBe(3);
    const logic = (program: string) => labelProgram('logic', program, [[true, false]]);
    expect(logic('function f(p, q) { return p && q; }')).toEqual({ level: 0, skills: ['logic.and'] });
    expect(logic('function f(p, q) { return p !== q; }')).toEqual({ level: 2, skills: ['logic.xor'] });
  });

  it('counts depth and parameters, and reads the definitions of the grown levels', () => {
    expect(arith('function f(a) { return (a + 1) * 2; }').level).toBe(1);
    expect(arith('function f(a, b) { return (a + 1) * (b - 2) + a; }', [[4, 5]]).level).toBe(2);
    expect(arith('function f(a, b, c) { return a + b * c; }', [[1, 2, 3]]).level).toBe(3);
    const chained = arith('function f(a, b, c) { const t1 = a + b; return t1 * c; }', [[1, 2, 3]]);
    expect(chained).toEqual({ level: 6, skills: ['arith.add', 'arith.mul', 'arith.nested'] });
  });

  it('gives null with a reason, not a throw, for garbage, shapes and other families', () => {
    for (const program of ['function f(a) { return a +; }', 'not a program at all', '']) {
      const label = arith(program);
      expect(label.level).toBeNull();
      expect(label.why).toMatch(/\S/);
    }
    expect(arith('function f(a) { let s = 0; while (a > 0) a--; return s; }').level).toBeNull();
    expect(arith('function f(a) { return a.foo(); }').level).toBeNull();
    expect(arith('function f(a) { return a + 3; }', []).level).toBeNull();
    expect(labelProgram('cond', 'function f(a) { return a > 1 ? a : 2; }', [[4]]).why).toMatch(/not labelled/);
  });
});
