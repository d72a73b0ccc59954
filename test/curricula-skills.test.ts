import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { meanAbsAdvantage } from '../curricula/testing.js';
import { isZeroVariance, solveRate } from '../core/rules.js';
import {
  createGate,
  newlyOpened,
  openArms,
  unlockedSkills,
  type GateSkill,
  type GatingInput,
} from '../curricula/testing.js';
import { createMasteryTracker, emptyMastery, masteryStep, MasteryTracker } from '../curricula/testing.js';
import { armKey, type Arm } from '../curricula/testing.js';

// A small taxonomy: per family a chain of skills, one per level, each requiring the one below;
// level-2 skills of family b also require a.1 (cross-family prerequisite).
const skills: GateSkill[] = ['a', 'b'].flatMap((f) =>
  [0, 1, 2, 3].map((level) => ({
    id: `${f}.${level}`,
    level,
    requires: level === 0 ? [] : [`${f}.${level - 1}`, ...(f === 'b' && level === 2 ? ['a.1'] : [])],
  })),
);
const arms: Arm[] = ['a', 'b'].flatMap((family) =>
  [0, 1, 2, 3].map((level) => ({ family, level, type: 'deduction' as const })),
);
const input: GatingInput = {
  skills,
  armSkills: (arm) => skills.filter((s) => s.id.startsWith(arm.family) && s.level <= arm.level).map((s) => s.id),
};
const keys = (xs: Arm[]) => xs.map((a) => `${a.family}/${a.level}`).sort();

describe('skill gating', () => {
  it('opens roots from the start and more arms as skills get mastered', () => {
    expect(keys(openArms(arms, input, []))).toEqual(['a/0', 'b/0']);
    expect(keys(openArms(arms, input, ['a.0']))).toEqual(['a/0', 'a/1', 'b/0']);
    expect(keys(openArms(arms, input, ['a.0', 'b.0', 'b.1']))).toEqual(['a/0', 'a/1', 'b/0', 'b/1']); // b.2 also needs a.1
    expect(keys(newlyOpened(arms, input, ['a.0', 'b.0', 'b.1'], ['a.0', 'a.1', 'b.0', 'b.1']))).toEqual(['a/2', 'b/2']);
    expect([...unlockedSkills(skills, ['a.0'])].sort()).toEqual(['a.0', 'a.1', 'b.0']);
  });
  it('is monotone in the mastered set, and roots are always open', () => {
    const ids = skills.map((s) => s.id);
    fc.assert(
      fc.property(fc.subarray(ids), fc.subarray(ids), (m1, extra) => {
        const small = new Set(openArms(arms, input, m1).map(armKey));
        const big = new Set(openArms(arms, input, [...m1, ...extra]).map(armKey));
        for (const k of small) expect(big.has(k)).toBe(true);
        expect(small.has('a/0/deduction') && small.has('b/0/deduction')).toBe(true);
        // An arm is open iff every prerequisite of its skills is mastered or one of its own level's.
        const m = new Set(m1);
        const level = (id: string) => skills.find((s) => s.id === id)!.level;
        for (const a of arms) {
          const own = input.armSkills(a).filter((id) => level(id) === a.level);
          const want = input
            .armSkills(a)
            .every((id) => skills.find((s) => s.id === id)!.requires.every((r) => m.has(r) || own.includes(r)));
          expect(small.has(armKey(a))).toBe(want);
        }
      }),
    );
  });
  it('does not gate an arm on the prerequisites it teaches itself (arith.sub needs arith.add, both level 0)', () => {
    // c.add and c.sub are level 0 (c.sub requires c.add); c.nested (level 1) requires both. Family
    // d has a plain root, so an open d/0 keeps openArms' fallback (the lowest level) out of it.
    const same: GateSkill[] = [
      { id: 'd.x', level: 0, requires: [] },
      { id: 'c.add', level: 0, requires: [] },
      { id: 'c.sub', level: 0, requires: ['c.add'] },
      { id: 'c.nested', level: 1, requires: ['c.add', 'c.sub'] },
    ];
    const cArms: Arm[] = ['c', 'd'].flatMap((family) =>
      [0, 1].map((level) => ({ family, level, type: 'deduction' as const })),
    );
    const cInput: GatingInput = {
      skills: same,
      armSkills: (arm) => same.filter((s) => s.id.startsWith(arm.family) && s.level <= arm.level).map((s) => s.id),
    };
    expect(keys(openArms(cArms, cInput, []))).toEqual(['c/0', 'd/0', 'd/1']);
    expect(keys(openArms(cArms, cInput, ['c.add']))).toEqual(['c/0', 'd/0', 'd/1']);
    expect(keys(openArms(cArms, cInput, ['c.add', 'c.sub']))).toEqual(['c/0', 'c/1', 'd/0', 'd/1']);
  });
  it('never returns nothing, and a disabled gate opens everything', () => {
    const rootless: GatingInput = { skills: [{ id: 'x', level: 0, requires: ['y'] }], armSkills: () => ['x'] };
    expect(keys(openArms(arms, rootless, []))).toEqual(['a/0', 'b/0']);
    expect(createGate({ ...input, enabled: false }).open(arms, [])).toHaveLength(arms.length);
    expect(keys(createGate(input).open(arms, new Set(['a.0'])))).toEqual(['a/0', 'a/1', 'b/0']);
  });
});

describe('mastery', () => {
  // A probe set large enough and with a zero trivial baseline: only learnAt and forgetBelow decide.
  const probe = (accuracy: number) => ({ accuracy, baseline: 0, probes: 100 });
  const probes = (accs: Record<string, number>) =>
    Object.fromEntries(Object.entries(accs).map(([k, a]) => [k, probe(a)]));
  it('emits events only on crossings, with hysteresis', () => {
    const t = new MasteryTracker({ learnAt: 0.8, forgetBelow: 0.5 });
    expect(t.observe(1, { s: probe(0.79) })).toEqual([]);
    expect(t.observe(2, { s: probe(0.8) })).toEqual([
      { skillId: 's', event: 'learned', step: 2, accuracy: 0.8, baseline: 0 },
    ]);
    expect(t.observe(3, new Map([['s', probe(0.9)]]))).toEqual([]);
    expect(t.observe(4, { s: probe(0.5) })).toEqual([]); // not below 0.5
    expect(t.observe(5, { s: probe(0.49) })).toEqual([
      { skillId: 's', event: 'forgotten', step: 5, accuracy: 0.49, baseline: 0 },
    ]);
    expect(t.observe(6, { s: probe(0.7) })).toEqual([]);
    expect(t.observe(7, { s: probe(1) })).toEqual([
      { skillId: 's', event: 'learned', step: 7, accuracy: 1, baseline: 0 },
    ]);
    expect(t.state().firstLearned).toEqual({ s: 2 });
  });
  it('agrees with a reference model on random probe sequences; state round-trips', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.dictionary(
            fc.constantFrom('x', 'y', 'z'),
            fc.integer({ min: 0, max: 10 }).map((k) => k / 10),
          ),
          { maxLength: 30 },
        ),
        fc.integer({ min: 5, max: 10 }).map((k) => k / 10),
        fc.integer({ min: 0, max: 5 }).map((k) => k / 10),
        (rounds, learnAt, forgetBelow) => {
          const t = createMasteryTracker({ learnAt, forgetBelow });
          const ref = new Map<string, boolean>();
          rounds.forEach((accs, step) => {
            const evs = t.observe(step, probes(accs));
            const want = [];
            for (const id of Object.keys(accs).sort()) {
              const a = accs[id]!;
              if (!ref.get(id) && a >= learnAt) {
                ref.set(id, true);
                want.push({ skillId: id, event: 'learned', step, accuracy: a, baseline: 0 });
              } else if (ref.get(id) && (a < forgetBelow || a === 0)) {
                ref.set(id, false);
                want.push({ skillId: id, event: 'forgotten', step, accuracy: a, baseline: 0 });
              }
            }
            expect(evs).toEqual(want);
            expect([...t.mastered()].sort()).toEqual(
              [...ref]
                .filter(([, v]) => v)
                .map(([k]) => k)
                .sort(),
            );
            const copy = createMasteryTracker({ learnAt, forgetBelow });
            copy.restore(JSON.parse(JSON.stringify(t.state())));
            expect(copy.state()).toEqual(t.state());
          });
        },
      ),
    );
  });
  it('masteryStep is pure', () => {
    const s0 = emptyMastery();
    const r = masteryStep(s0, 1, { a: probe(1) });
    expect(s0).toEqual(emptyMastery());
    expect(r.state.mastered).toEqual({ a: 1 });
  });
});

describe('dynamic sampling', () => {
  it('finds the groups with zero reward variance, and only those have zero advantage', () => {
    const groups = [[1, 1, 1], [0, 1, 0], [0, 0], [0.5, 0.5], [0.5, 0.25], []];
    expect(groups.map((g) => isZeroVariance(g))).toEqual([true, false, true, true, false, true]);
    fc.assert(
      fc.property(fc.array(fc.constantFrom(0, 0.5, 1), { maxLength: 8 }), (g) => {
        expect(isZeroVariance(g)).toBe(new Set(g).size <= 1);
        expect(meanAbsAdvantage(g) > 0).toBe(!isZeroVariance(g));
      }),
    );
  });
  it('solve rate and mean |advantage| (2p(1−p) for pass/fail)', () => {
    const r = [1, 0, 0, 1, 1, 0, 0, 0];
    expect(solveRate(r)).toBe(3 / 8);
    expect(meanAbsAdvantage(r)).toBeCloseTo(2 * (3 / 8) * (5 / 8), 12);
    expect(meanAbsAdvantage([1, 1])).toBe(0);
    expect(meanAbsAdvantage([1, 0], true)).toBeCloseTo(1, 12);
  });
});
