// A family passes level d at a probe round when the mastery rule holds on level d's held-out set and
// on every skill of the family at levels ≤ d (docs/levels.md). The rule's properties: it never passes
// on a set a trivial policy scores as well, or without the margin over its baseline; it is monotone
// in the accuracies. Then what a run records of it (`level.<family>/<d>`, `passed.<family>`) and how
// the readers (cogen skills, the run's summary) turn those rows into each family's climb.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { levelPassed, masteryConfigSchema, masteryBar, minProbes, type LevelProbe } from '../curricula/testing.js';
import { climbOf, levelsPassedOf, levelSetMetrics } from '../src/run/testing.js';

const defaults = masteryConfigSchema.parse({});

/** A probe result of n probes: k solved, a trivial policy solving b of them. */
const probe = fc.record({ n: fc.integer({ min: 0, max: 40 }), k: fc.nat(), b: fc.nat() }).map(({ n, k, b }) => ({
  probes: n,
  accuracy: n === 0 ? 0 : (k % (n + 1)) / n,
  baseline: n === 0 ? 0 : (b % (n + 1)) / n,
}));
/** Mostly sets that can pass, so that the properties are not about sets that never do. */
const strong = fc
  .record({
    n: fc.integer({ min: 17, max: 40 }),
    b: fc.integer({ min: 0, max: 10 }),
    gap: fc.integer({ min: 0, max: 3 }),
  })
  .map(({ n, b, gap }) => ({ probes: n, baseline: b / n, accuracy: (n - gap) / n }));
const anyProbe = fc.oneof(strong, probe);
const levels = fc
  .array(fc.record({ set: anyProbe, own: fc.array(anyProbe, { maxLength: 3 }) }), { minLength: 1, maxLength: 5 })
  .map((ls) =>
    // a level requires its own skills and those of the levels below
    ls.map((l, d): LevelProbe => ({ level: d, set: l.set, skills: ls.slice(0, d + 1).flatMap((x) => x.own) })),
  );
const options = fc.oneof(
  fc.constant(defaults),
  fc
    .record({ learnAt: fc.integer({ min: 5, max: 10 }), margin: fc.integer({ min: 2, max: 5 }) })
    .map((o) => masteryConfigSchema.parse({ learnAt: o.learnAt / 10, margin: o.margin / 10, forgetBelow: 0 })),
);

describe('a family passes a level (the mastery rule on every set the level requires)', () => {
  it('passes only where each required set passes the mastery rule on enough probes (property)', () => {
    fc.assert(
      fc.property(levels, options, (ls, opts) => {
        const d = levelPassed(ls, opts);
        expect(d).toBeGreaterThanOrEqual(-1);
        if (d < 0) return;
        for (const set of [ls[d]!.set, ...ls[d]!.skills]) {
          if (set === undefined) throw new Error('a level with an unmeasured skill passed');
          expect(set.probes).toBeGreaterThanOrEqual(minProbes(opts));
          expect(set.accuracy).toBeGreaterThanOrEqual(masteryBar(set.baseline, opts) - 1e-9);
          expect(set.accuracy).toBeGreaterThan(set.baseline);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('never passes when any required set is at its trivial baseline, or below its baseline + margin (property)', () => {
    fc.assert(
      fc.property(
        levels,
        options,
        fc.array(fc.nat(), { minLength: 5, maxLength: 5 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (ls, opts, picks, u) => {
          // In every level one required set scores what a trivial policy scores, or less than the bar.
          const weakened = ls.map((l, d) => {
            const sets = [l.set, ...l.skills];
            const i = picks[d]! % sets.length;
            const s = sets[i]!;
            const low = { ...s, accuracy: u < 0.5 ? s.baseline : u * (masteryBar(s.baseline, opts) - 1e-6) };
            sets[i] = low;
            return { level: l.level, set: sets[0]!, skills: sets.slice(1) };
          });
          expect(levelPassed(weakened, opts)).toBe(-1);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('is monotone in the accuracies: a round with higher accuracies passes at least as high (property)', () => {
    fc.assert(
      fc.property(levels, options, fc.array(fc.nat({ max: 5 }), { minLength: 30, maxLength: 30 }), (ls, opts, ups) => {
        let i = 0;
        const up = (s: LevelProbe['set']) =>
          s.probes === 0 ? s : { ...s, accuracy: Math.min(1, s.accuracy + ups[i++ % ups.length]! / s.probes) };
        const higher = ls.map((l) => ({ level: l.level, set: up(l.set), skills: l.skills.map((s) => s && up(s)) }));
        expect(levelPassed(higher, opts)).toBeGreaterThanOrEqual(levelPassed(ls, opts));
      }),
      { numRuns: 500 },
    );
  });

  it('needs every skill of the levels up to d, and no skill above', () => {
    const pass = { probes: 17, accuracy: 15 / 17, baseline: 8 / 17 };
    const fail = { probes: 17, accuracy: 12 / 17, baseline: 8 / 17 };
    const few = { probes: 16, accuracy: 1, baseline: 0 };
    const at = (set: LevelProbe['set'], skills: LevelProbe['skills'], level = 0): LevelProbe => ({
      level,
      set,
      skills,
    });
    expect(levelPassed([at(pass, [pass, pass])], defaults)).toBe(0);
    expect(levelPassed([at(pass, [pass, fail])], defaults)).toBe(-1);
    expect(levelPassed([at(pass, [pass, undefined])], defaults)).toBe(-1);
    expect(levelPassed([at(few, [pass])], defaults)).toBe(-1);
    // level 1 passes while level 0's own set does not: the highest level passed is 1
    expect(levelPassed([at(fail, [pass]), at(pass, [pass, pass], 1)], defaults)).toBe(1);
    // a skill failing at level 1 keeps level 0 passed
    expect(levelPassed([at(pass, [pass]), at(pass, [pass, fail], 1)], defaults)).toBe(0);
  });
});

describe('what a probe round records of the levels, and what the readers make of it', () => {
  const pass = { probes: 17, accuracy: 15 / 17, baseline: 8 / 17 };
  const fail = { probes: 17, accuracy: 10 / 17, baseline: 8 / 17 };

  it("records each level set's accuracy and each family's highest level passed, on its own skills only", () => {
    const skills = [
      { id: 'a.x', family: 'a', level: 0 },
      { id: 'a.y', family: 'a', level: 1 },
      { id: 'a.unprobed', family: 'a', level: 0 }, // no probe set in this run: not asked for
      { id: 'b.z', family: 'b', level: 0 }, // another family's skill, failing (a prerequisite of a's, say)
    ];
    const perSkill = new Map([
      ['a.x', pass],
      ['a.y', fail],
      ['b.z', fail],
    ]);
    const levels = [
      { family: 'a', level: 1, probe: pass },
      { family: 'a', level: 0, probe: pass },
      { family: 'a', level: 7, probe: pass }, // above the tables: every skill of a counts
      { family: 'b', level: 0, probe: { ...pass, accuracy: 1 } },
    ];
    expect(levelSetMetrics(levels, perSkill, skills, defaults)).toEqual({
      'level.a/0': pass.accuracy,
      'level.a/1': pass.accuracy,
      'level.a/7': pass.accuracy,
      'passed.a': 0,
      'level.b/0': 1,
      'passed.b': -1,
    });
  });

  it("reads each family's climb from a run's rows: the level passed now, when each level was first reached, and h", () => {
    const rows = [
      { step: 10, 'passed.a': -1, 'frontier.a/deduction': 1, 'frontier.ab/deduction': 9 },
      { step: 15, 'frontier.a/deduction': 2 },
      { step: 20, 'passed.a': 1, 'passed.ab': 0 },
      { step: 30, 'passed.a': 0 },
      { step: 40, 'passed.a': 1, 'frontier.a/deduction': 3, 'frontier.a/abduction': 2 },
    ];
    expect(levelsPassedOf(rows)).toEqual({
      a: {
        now: 1,
        firstReached: { 0: 20, 1: 20 },
        changes: [
          [10, -1],
          [20, 1],
          [30, 0],
          [40, 1],
        ],
      },
      ab: { now: 0, firstReached: { 0: 20 }, changes: [[20, 0]] },
    });
    expect(climbOf(rows)).toEqual([
      { family: 'a', passed: 1, since: 20, h: { deduction: 3, abduction: 2 } },
      { family: 'ab', passed: 0, since: 20, h: { deduction: 9 } },
    ]);
    // a run made before level sets has no passed.* rows: no climb to show
    expect(climbOf([{ step: 5, 'eval.arith/5': 0.5 }])).toEqual([]);
  });
});
