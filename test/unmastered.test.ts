import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { masteredSkills, unmasteredSkills } from '../curricula/index.js';
import { armKey, UniformController, UnmasteredController, type Arm } from '../curricula/testing.js';
import { createRng } from '../core/rng.js';
import { skill } from './curricula-fixtures.js';

const arm = (family: string, level: number): Arm => ({ family, level, type: 'deduction' });
const arms = [arm('logic', 0), arm('arith', 0), arm('logic', 1)];
const skills = [
  skill('logic', 0, 'and'),
  skill('logic', 0, 'or'),
  skill('logic', 0, 'not'),
  skill('arith', 0, 'add'),
  skill('arith', 0, 'sub'),
  skill('logic', 1, 'xor'),
];
const ids = skills.map((s) => s.id);
const share = (picks: { arm: Arm }[], key: string) => picks.filter((p) => armKey(p.arm) === key).length / picks.length;

/** The pick context the loop builds (src/run/loop.ts) for a set of mastered and masterable skills. */
function context(mastered: string[], masterable = ids, open = arms) {
  const done = new Set(mastered);
  return {
    step: 1,
    arms: open,
    mastered: masteredSkills(done, skills, open),
    unmastered: unmasteredSkills(done, new Set(masterable), skills, open),
  };
}

describe('the unmastered controller', () => {
  it('gives no fresh pick to an arm whose masterable skills are all mastered, while another arm has one left', () => {
    fc.assert(
      fc.property(fc.subarray(ids), fc.subarray(ids), fc.integer(), (mastered, masterable, seed) => {
        const ctx = context(mastered, masterable);
        const live = new Set(ctx.unmastered.flatMap((s) => s.arms.map(armKey)));
        const picks = new UnmasteredController().pick(40, createRng(seed), ctx);
        for (const p of picks) {
          if (live.size > 0) expect(live.has(armKey(p.arm))).toBe(true);
          if (p.kind === 'new' && mastered.length > 0) expect(p.avoid).toEqual(mastered);
        }
      }),
    );
  });

  it('weighs arms by their unmastered skills: 3 : 2 : 1, then 1 : 2 : 1 once two of logic level 0 are mastered', () => {
    const c = new UnmasteredController();
    const picks = c.pick(6000, createRng(7), context([]));
    expect(share(picks, 'logic/0/deduction')).toBeCloseTo(3 / 6, 1);
    expect(share(picks, 'arith/0/deduction')).toBeCloseTo(2 / 6, 1);
    const later = c.pick(6000, createRng(7), context(['logic.and', 'logic.or']));
    expect(share(later, 'logic/0/deduction')).toBeCloseTo(1 / 4, 1);
    expect(share(later, 'arith/0/deduction')).toBeCloseTo(2 / 4, 1);
  });

  it('picks as the uniform controller does when every arm has as many skills to learn', () => {
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        const two = [arm('logic', 0), arm('arith', 0)];
        const ctx = context([], ['logic.and', 'logic.or', 'arith.add', 'arith.sub'], two);
        const ours = new UnmasteredController().pick(64, createRng(seed), ctx);
        const uniform = new UniformController().pick(64, createRng(seed), ctx);
        expect(ours).toEqual(uniform);
      }),
    );
  });

  it('falls back to every open arm when no masterable skill is left to learn', () => {
    const picks = new UnmasteredController().pick(3000, createRng(3), context(ids));
    for (const a of arms) expect(share(picks, armKey(a))).toBeGreaterThan(0.25);
  });

  it('restores only its own state', () => {
    const c = new UnmasteredController();
    c.restore(JSON.parse(JSON.stringify(c.state())));
    expect(() => c.restore({ name: 'uniform', version: 1 })).toThrow(/not a unmastered controller state/);
  });
});
