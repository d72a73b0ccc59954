// The level-frontier controller (curricula/level-frontier.ts): RLVE's rule per family × type, its
// options' schema, levels past the listed arms up to a ceiling, gating, state, and a simulated
// learner without a ceiling that it follows.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createRng } from '../core/rng.js';
import {
  createController,
  curriculumConfigSchema,
  LevelFrontierController,
  levelFrontierOptions,
  type Arm,
  type ArmResult,
} from '../curricula/index.js';
import { simArms, simulate } from '../curricula/testing.js';

const arms = (family: string, levels: number, type: Arm['type'] = 'deduction'): Arm[] =>
  Array.from({ length: levels }, (_, level) => ({ family, level, type }));
/** A scored task at an arm whose G answers solve it `solved` times. */
const result = (arm: Arm, solved: number, g = 8): ArmResult => {
  const rewards = Array.from({ length: g }, (_, i) => (i < solved ? 1 : 0));
  return { arm, taskId: `t${Math.random()}`, step: 1, rewards, solveRate: solved / g, meanAbsAdvantage: 0 };
};
const levelsPicked = (
  c: LevelFrontierController,
  ctx: Parameters<LevelFrontierController['pick']>[2],
  n = 400,
  seed = 1,
) => new Set(c.pick(n, createRng(seed), ctx).map((p) => p.arm.level));

describe('level-frontier', () => {
  it("has RLVE's parameters as defaults, in the controller's schema, and refuses bad ones with the field named", () => {
    expect(levelFrontierOptions.parse({})).toEqual({ promoteAt: 0.9, minPrompts: 8, window: 4, start: 0 });
    expect(curriculumConfigSchema.parse({ controller: 'level-frontier', levelFrontier: {} }).levelFrontier).toEqual({
      promoteAt: 0.9,
      minPrompts: 8,
      window: 4,
      start: 0,
    });
    // absent, it is absent from the config a run stores (older configs stay byte for byte as they were)
    expect(curriculumConfigSchema.parse({ controller: 'level-frontier' })).not.toHaveProperty('levelFrontier');
    const bad = curriculumConfigSchema.safeParse({
      controller: 'level-frontier',
      levelFrontier: { promoteAt: 1.5, windw: 4 },
    });
    expect(bad.success).toBe(false);
    expect(bad.error!.issues.map((i) => i.path.join('.')).sort()).toEqual(['levelFrontier', 'levelFrontier.promoteAt']);
  });

  it('starts at h = 0, draws only from [h − 3, h], and raises h once 8 tasks at h reach 0.9 accuracy', () => {
    const c = new LevelFrontierController();
    const ctx = { step: 1, arms: arms('a', 20) };
    expect(levelsPicked(c, ctx)).toEqual(new Set([0]));
    const climb = (h: number, solved: number) =>
      c.update(Array.from({ length: 8 }, () => result({ family: 'a', level: h, type: 'deduction' }, solved)));
    for (let h = 0; h < 6; h++) climb(h, 8);
    expect(c.frontier()).toEqual({ 'a/deduction': 6 });
    expect(levelsPicked(c, ctx)).toEqual(new Set([3, 4, 5, 6]));
    // 7 of 8 answers (0.875) is below 0.9: the judgement fails, and the count starts again.
    climb(6, 7);
    expect(c.frontier()['a/deduction']).toBe(6);
    // Tasks at other levels never count; 7 tasks at h are not yet enough.
    c.update(Array.from({ length: 20 }, () => result({ family: 'a', level: 5, type: 'deduction' }, 8)));
    c.update(Array.from({ length: 7 }, () => result({ family: 'a', level: 6, type: 'deduction' }, 8)));
    expect(c.frontier()['a/deduction']).toBe(6);
    c.update([result({ family: 'a', level: 6, type: 'deduction' }, 8)]);
    expect(c.frontier()['a/deduction']).toBe(7);
  });

  it('keeps one h per family × type, drawing the key uniformly', () => {
    const c = new LevelFrontierController({ minPrompts: 1 });
    const ctx = { step: 1, arms: [...arms('a', 10), ...arms('a', 10, 'induction'), ...arms('b', 10)] };
    c.pick(1, createRng(1), ctx);
    c.update([result({ family: 'a', level: 0, type: 'induction' }, 8)]);
    expect(c.frontier()).toMatchObject({ 'a/induction': 1 });
    const picks = c.pick(3000, createRng(2), ctx);
    for (const key of ['a/deduction', 'a/induction', 'b/deduction']) {
      const share = picks.filter((p) => `${p.arm.family}/${p.arm.type}` === key).length / picks.length;
      expect(share, key).toBeGreaterThan(0.3);
      expect(share, key).toBeLessThan(0.37);
    }
  });

  it('stops at the listed arms without a ceiling, and climbs past them up to a ceiling with one', () => {
    const climbTo = (
      c: LevelFrontierController,
      ctx: Parameters<LevelFrontierController['pick']>[2],
      steps: number,
    ) => {
      for (let i = 0; i < steps; i++) {
        const picks = c.pick(4, createRng(i), ctx);
        c.update(picks.map((p) => result(p.arm, 8)));
      }
    };
    const capped = new LevelFrontierController({ minPrompts: 1 });
    climbTo(capped, { step: 1, arms: arms('a', 5) }, 60);
    expect(capped.frontier()['a/deduction']).toBe(4);
    const open = new LevelFrontierController({ minPrompts: 1 });
    const ctx = { step: 1, arms: arms('a', 5), ceilings: new Map([['a', 12]]) };
    climbTo(open, ctx, 200);
    expect(open.frontier()['a/deduction']).toBe(12);
    expect(levelsPicked(open, ctx)).toEqual(new Set([9, 10, 11, 12]));
  });

  it('skips levels gating closes in the window, and falls back to the highest open one below h', () => {
    const c = new LevelFrontierController();
    c.restore({
      name: 'level-frontier',
      version: 1,
      keys: { 'a/deduction': { h: 4, prompts: 0, answers: 0, solved: 0 } },
    });
    const all = arms('a', 5);
    expect(levelsPicked(c, { step: 1, arms: all.filter((x) => x.level !== 2) })).toEqual(new Set([1, 3, 4]));
    expect(levelsPicked(c, { step: 1, arms: all.filter((x) => x.level === 0) })).toEqual(new Set([0]));
  });

  it("restores its state exactly and refuses another controller's", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 6 }), fc.integer({ min: 0, max: 8 })), { maxLength: 60 }),
        (scored) => {
          const a = new LevelFrontierController({ minPrompts: 3 });
          a.update(scored.map(([level, solved]) => result({ family: 'a', level, type: 'deduction' }, solved)));
          const b = new LevelFrontierController({ minPrompts: 3 });
          b.restore(JSON.parse(JSON.stringify(a.state())));
          const ctx = { step: 1, arms: arms('a', 7) };
          expect(b.pick(20, createRng(3), ctx)).toEqual(a.pick(20, createRng(3), ctx));
          expect(b.state()).toEqual(a.state());
        },
      ),
    );
    expect(() => new LevelFrontierController().restore({ name: 'ladder', version: 1 })).toThrow(
      /not a level-frontier controller state/,
    );
  });

  it('shows its h through the exploration and rehearsal wrappers', () => {
    const c = createController(curriculumConfigSchema.parse({ controller: 'level-frontier' }), arms('a', 5));
    c.pick(4, createRng(1), { step: 1, arms: arms('a', 5) });
    expect(c.frontier?.()).toEqual({ 'a/deduction': 0 });
    expect(
      createController(curriculumConfigSchema.parse({ controller: 'learnability' }), arms('a', 5)).frontier?.(),
    ).toBeUndefined();
  });

  it('follows a simulated learner whose competence has no bound, within ±2 levels, past level 20', () => {
    const opts = { families: 2, levels: 5, ceiling: 1000, rate: 0.05, group: 8 };
    const r = simulate(
      createController(
        curriculumConfigSchema.parse({ controller: 'level-frontier' }),
        simArms(opts.families, opts.levels),
      ),
      opts,
      3000,
      8,
      createRng('frontier-test'),
    );
    expect(Math.min(...r.competence.at(-1)!)).toBeGreaterThan(20);
    expect(Math.min(...(r.frontier.at(-1)! as number[]))).toBeGreaterThanOrEqual(20);
    r.competence.forEach((c, i) =>
      c.forEach((x, f) => expect(Math.abs(r.frontier[i]![f]! - x), `step ${i + 1}`).toBeLessThanOrEqual(2)),
    );
  });
});
