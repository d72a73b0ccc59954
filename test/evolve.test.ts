// The frontier proposer's controller (curricula/evolve.ts): it fills its share of the batch with
// children of band tasks at h, directed by each parent's solve rate; its bandit moves toward the
// operators whose children stay in the band; children never count toward h's promotion; its state
// restores to the same picks; and a config that turns it on without level-frontier is refused.
import { describe, expect, it } from 'vitest';
import { createRng } from '../core/rng.js';
import {
  createController,
  curriculumConfigSchema,
  EvolveController,
  LevelFrontierController,
  type Arm,
  type ArmResult,
  type Pick,
} from '../curricula/index.js';
import { DIRECTED_OPS } from '../generators/index.js';

const arms: Arm[] = [0, 1, 2].map((level) => ({ family: 'arith', level, type: 'deduction' }));
const ctx = (step = 1) => ({ step, arms });

function scored(taskId: string, level: number, solved: number, g = 4, child?: string): ArmResult {
  const rewards = Array.from({ length: g }, (_, i) => (i < solved ? 1 : 0));
  return {
    arm: { family: 'arith', level, type: 'deduction' },
    taskId,
    step: 1,
    rewards,
    solveRate: solved / g,
    meanAbsAdvantage: 0,
    ...(child ? { child: { op: child } } : {}),
  };
}

const mutations = (picks: Pick[]) => picks.filter((p): p is Extract<Pick, { kind: 'mutate' }> => p.kind === 'mutate');

describe('the frontier proposer (evolve)', () => {
  it('fills its share with children of band tasks at h, harder for a parent solved more often than not', () => {
    const c = new EvolveController(new LevelFrontierController({ minPrompts: 100 }), { share: 0.5 });
    expect(mutations(c.pick(64, createRng(1), ctx()))).toHaveLength(0); // no band task yet
    c.update([scored('easy', 0, 3), scored('hard', 0, 1), scored('none', 0, 0), scored('all', 0, 4)]);
    const picks = c.pick(400, createRng(2), ctx());
    const kids = mutations(picks);
    expect(kids.length / picks.length).toBeGreaterThan(0.4);
    expect(kids.length / picks.length).toBeLessThan(0.6);
    expect(new Set(kids.map((k) => k.taskId))).toEqual(new Set(['easy', 'hard']));
    const harder: readonly string[] = DIRECTED_OPS.harder;
    const easier: readonly string[] = DIRECTED_OPS.easier;
    for (const k of kids.filter((k) => k.op !== 'crossover')) {
      expect(k.op).toSatisfy((op: string) => (k.taskId === 'easy' ? harder : easier).includes(op));
    }
    for (const k of kids.filter((k) => k.op === 'crossover')) expect(k.mate).not.toBe(k.taskId);
    // every other pick is level-frontier's fresh task at h = 0
    expect(picks.filter((p) => p.kind === 'new').every((p) => p.arm.level === 0)).toBe(true);
  });

  it('takes parents at h only (or `near` levels below), and drops a task whose latest scoring leaves the band', () => {
    const c = new EvolveController(new LevelFrontierController({ minPrompts: 1, promoteAt: 0.5 }), { share: 1 });
    c.update([scored('low', 0, 2)]); // h: 0 → 1 (half of the answers at h)
    c.update([scored('up', 1, 1)]);
    expect(c.frontier()).toEqual({ 'arith/deduction': 1 });
    expect(new Set(mutations(c.pick(50, createRng(3), ctx())).map((k) => k.taskId))).toEqual(new Set(['up']));
    c.update([scored('up', 1, 4)]);
    expect(c.snapshot().band.map((e) => e.taskId)).toEqual(['low']);
    const near = new EvolveController(new LevelFrontierController({ minPrompts: 1, promoteAt: 0.5 }), {
      share: 1,
      near: 1,
    });
    near.update([scored('low', 0, 2)]);
    expect(new Set(mutations(near.pick(50, createRng(3), ctx())).map((k) => k.taskId))).toEqual(new Set(['low']));
  });

  it("does not let children raise h: RLVE's rule stays on fresh tasks", () => {
    const c = new EvolveController(new LevelFrontierController({ minPrompts: 2, promoteAt: 0.9 }), { share: 0.5 });
    c.update([scored('k1', 0, 4, 4, 'prune-node'), scored('k2', 0, 4, 4, 'crossover')]);
    expect(c.frontier()).toEqual({ 'arith/deduction': 0 });
    c.update([scored('f1', 0, 4), scored('f2', 0, 4)]);
    expect(c.frontier()).toEqual({ 'arith/deduction': 1 });
  });

  it('learns which operator keeps children in the band', () => {
    const c = new EvolveController(new LevelFrontierController({ minPrompts: 1000 }), { share: 1 });
    const rng = createRng(4);
    let id = 0;
    for (let round = 0; round < 30; round++) {
      c.update([scored(`p${round}`, 0, 2)]);
      const results = mutations(c.pick(16, rng, ctx(round))).map((k) =>
        scored(`c${id++}`, 0, k.op === 'lower-constant' ? 2 : 0, 4, k.op),
      );
      c.update(results);
    }
    const ops = mutations(c.pick(400, createRng(5), ctx(40))).map((k) => k.op);
    const share = ops.filter((op) => op === 'lower-constant').length / ops.length;
    expect(share).toBeGreaterThan(0.5);
    expect(c.snapshot().values['arith/deduction/0']!['lower-constant']!.mean).toBeGreaterThan(0.4);
  });

  it('restores to the same picks (exact resume)', () => {
    const make = () => new EvolveController(new LevelFrontierController({ minPrompts: 2 }), { share: 0.5 });
    const a = make();
    a.update([scored('x', 0, 1), scored('y', 0, 3), scored('z', 0, 2, 4, 'grow-node')]);
    const b = make();
    b.restore(JSON.parse(JSON.stringify(a.state())));
    expect(b.pick(64, createRng(6), ctx())).toEqual(a.pick(64, createRng(6), ctx()));
    expect(b.state()).toEqual(a.state());
    expect(() => b.restore({ name: 'replay', version: 1 })).toThrow(/evolve/);
  });

  it('is off unless asked, and refuses a controller without h in one line naming the field', () => {
    expect(curriculumConfigSchema.parse({}).evolve).toBeUndefined();
    const on = curriculumConfigSchema.parse({ controller: 'level-frontier', evolve: { share: 0.25 } });
    expect(createController(on, arms).frontier?.()).toEqual({});
    const bad = curriculumConfigSchema.safeParse({ controller: 'learnability', evolve: { share: 0.25 } });
    expect(bad.success).toBe(false);
    expect(bad.error!.issues[0]!.path).toEqual(['evolve', 'share']);
    expect(bad.error!.issues[0]!.message).toMatch(/level-frontier/);
    expect(curriculumConfigSchema.safeParse({ evolve: { share: 2 } }).success).toBe(false);
  });
});
