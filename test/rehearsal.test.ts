import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  controllerNames,
  createController,
  curriculumConfigSchema,
  masteredSkills,
  type ControllerName,
} from '../curricula/index.js';
import { RehearsalWrapper, withRehearsal } from '../curricula/testing.js';
import {
  armKey,
  type Arm,
  type ArmResult,
  type Controller,
  type MasteredSkill,
  type Pick,
} from '../curricula/testing.js';
import { UniformController } from '../curricula/testing.js';
import { createRng } from '../core/rng.js';
import { skill } from './curricula-fixtures.js';
import { CODE_TASK_TYPES } from '../core/task.js';

const allArms = (families: number, levels: number): Arm[] => {
  const out: Arm[] = [];
  for (let f = 0; f < families; f++)
    for (let l = 0; l < levels; l++) for (const type of CODE_TASK_TYPES) out.push({ family: `f${f}`, level: l, type });
  return out;
};
const result = (arm: Arm, taskId: string, step: number, solveRate: number): ArmResult => ({
  arm,
  taskId,
  step,
  rewards: [],
  solveRate,
  meanAbsAdvantage: 0,
});

/** An inner controller that only ever picks one arm, so that any other pick is a rehearsal. */
class OneArm implements Controller {
  readonly name = 'one-arm';
  constructor(readonly arm: Arm) {}
  pick(n: number): Pick[] {
    return Array.from({ length: n }, () => ({ kind: 'new' as const, arm: { ...this.arm } }));
  }
  update(): void {}
  state(): unknown {
    return null;
  }
  restore(): void {}
}

describe('rehearsal', () => {
  it('never picks a closed arm, and rehearses only the open arms of mastered skills', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer(),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.array(fc.boolean(), { minLength: 27, maxLength: 27 }),
        fc.array(fc.boolean(), { minLength: 27, maxLength: 27 }),
        (families, levels, seed, share, openMask, masteredMask) => {
          const arms = allArms(families, levels);
          const open = arms.filter((_, i) => openMask[i]);
          if (open.length === 0) return;
          // Mastered skills name arms that may be closed: those must never be picked.
          const mastered: MasteredSkill[] = arms
            .filter((_, i) => masteredMask[i])
            .map((a) => ({ skillId: armKey(a), arms: [a] }));
          const inner = new OneArm(open[0]!);
          const c = new RehearsalWrapper(inner, share);
          const openKeys = new Set(open.map(armKey));
          const rehearsable = new Set(mastered.map((m) => armKey(m.arms[0]!)).filter((k) => openKeys.has(k)));
          const rng = createRng(seed);
          for (let step = 1; step <= 5; step++) {
            const picks = c.pick(16, rng, { step, arms: open, mastered });
            expect(picks).toHaveLength(16);
            for (const p of picks) {
              expect(openKeys.has(armKey(p.arm))).toBe(true);
              if (armKey(p.arm) !== armKey(open[0]!)) expect(rehearsable.has(armKey(p.arm))).toBe(true);
            }
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('respects its share on average', () => {
    fc.assert(
      fc.property(fc.integer(), fc.double({ min: 0.05, max: 0.95, noNaN: true }), (seed, share) => {
        const arms = allArms(2, 1);
        const c = new RehearsalWrapper(new OneArm(arms[0]!), share);
        const mastered = [{ skillId: 'f1.x', arms: [arms[3]!] }];
        const rng = createRng(seed);
        const n = 4000;
        const picks = c.pick(n, rng, { step: 1, arms, mastered });
        const rehearsed = picks.filter((p) => armKey(p.arm) === armKey(arms[3]!)).length / n;
        // 4000 Bernoulli draws: 5 standard deviations are at most 0.04.
        expect(Math.abs(rehearsed - share)).toBeLessThan(0.04);
      }),
      { numRuns: 40 },
    );
  });

  it('does not rehearse, nor draw from the rng, when nothing open is mastered', () => {
    fc.assert(
      fc.property(
        fc.integer(),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.boolean(),
        (seed, share, closedMastery) => {
          const arms = allArms(2, 2);
          const open = arms.slice(0, 6);
          const mastered = closedMastery ? [{ skillId: 'f1.x', arms: [arms[9]!] }] : [];
          const a = createRng(seed);
          const b = createRng(seed);
          const wrapped = new RehearsalWrapper(new UniformController(), share).pick(8, a, {
            step: 1,
            arms: open,
            mastered,
          });
          const plain = new UniformController().pick(8, b, { step: 1, arms: open });
          expect(wrapped).toEqual(plain);
          expect(a.state()).toEqual(b.state());
        },
      ),
      { numRuns: 100 },
    );
  });

  it('is deterministic with the rng and checkpoints as its inner controller', () => {
    for (const name of controllerNames as readonly ControllerName[]) {
      const arms = allArms(2, 2);
      const mastered = [{ skillId: 'f0.x', arms: arms.slice(0, 3) }];
      const make = () => createController(curriculumConfigSchema.parse({ controller: name, rehearsal: 0.3 }), arms);
      const run = (c: Controller, seed: number, from: number, to: number) => {
        const rng = createRng(seed);
        const out: Pick[][] = [];
        for (let step = from; step <= to; step++) {
          const picks = c.pick(6, rng, { step, arms, mastered });
          c.update(picks.map((p, i) => result(p.arm, `t${step}-${i}`, step, ((step * 7 + i) % 5) / 4)));
          out.push(picks);
        }
        return out;
      };
      const a = make();
      const b = make();
      expect(run(a, 5, 1, 6)).toEqual(run(b, 5, 1, 6));
      const restored = make();
      restored.restore(JSON.parse(JSON.stringify(a.state())));
      expect(run(restored, 9, 7, 10)).toEqual(run(a, 9, 7, 10));
    }
  });

  it('is off at 0, and off around the uniform and hardest baselines', () => {
    const inner = new UniformController();
    expect(withRehearsal(inner, 0)).toBe(inner);
    expect(curriculumConfigSchema.parse({}).rehearsal).toBeGreaterThan(0);
    const arms = allArms(1, 1);
    for (const name of ['uniform', 'hardest'] as const) {
      expect(
        createController(curriculumConfigSchema.parse({ controller: name, rehearsal: 0.5 }), arms),
      ).not.toBeInstanceOf(RehearsalWrapper);
    }
    expect(
      createController(curriculumConfigSchema.parse({ controller: 'learnability', rehearsal: 0.5 }), arms),
    ).toBeInstanceOf(RehearsalWrapper);
  });

  it('gives each mastered skill the open arms of its own family and level', () => {
    const arms = allArms(2, 3);
    const skills = [skill('f0', 0, 'a'), skill('f0', 1, 'b'), skill('f1', 2, 'c')];
    const out = masteredSkills(new Set(['f0.b', 'f1.c']), skills, arms);
    expect(out.map((m) => m.skillId)).toEqual(['f0.b', 'f1.c']);
    expect(out[0]!.arms.map(armKey)).toEqual(CODE_TASK_TYPES.map((t) => `f0/1/${t}`));
    expect(out[1]!.arms.map(armKey)).toEqual(CODE_TASK_TYPES.map((t) => `f1/2/${t}`));
    expect(masteredSkills(new Set(), skills, arms)).toEqual([]);
  });
});
