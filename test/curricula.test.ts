import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { banditUpdate, BanditController } from '../curricula/testing.js';
import { hardestArms } from '../curricula/testing.js';
import { controllerNames, createController, curriculumConfigSchema, type ControllerName } from '../curricula/index.js';
import { LadderController } from '../curricula/testing.js';
import { LearnabilityController } from '../curricula/testing.js';
import { ProgressController } from '../curricula/testing.js';
import { replayProbabilities, ReplayController, type ArchiveEntry } from '../curricula/testing.js';
import { armKey, type Arm, type ArmResult, type Controller } from '../curricula/testing.js';
import { UniformController } from '../curricula/testing.js';
import { normalise, slope, softmax } from '../curricula/testing.js';
import { createRng, type Rng } from '../core/rng.js';
import { CODE_TASK_TYPES } from '../core/task.js';

const allArms = (families: number, levels: number, types = 3): Arm[] => {
  const out: Arm[] = [];
  for (let f = 0; f < families; f++)
    for (let l = 0; l < levels; l++)
      for (const type of CODE_TASK_TYPES.slice(0, types)) out.push({ family: `f${f}`, level: l, type });
  return out;
};

const result = (
  arm: Arm,
  taskId: string,
  step: number,
  solveRate: number,
  meanAbsAdvantage = 2 * solveRate * (1 - solveRate),
): ArmResult => ({
  arm,
  taskId,
  step,
  rewards: [],
  solveRate,
  meanAbsAdvantage,
});

const make = (name: ControllerName, arms: Arm[], extra: Record<string, unknown> = {}): Controller =>
  createController(curriculumConfigSchema.parse({ controller: name, ...extra }), arms);

/** Drives a controller for `steps` steps with pseudo-random outcomes; returns every pick. */
function drive(
  c: Controller,
  arms: Arm[],
  open: (step: number) => Arm[],
  rng: Rng,
  outcomes: Rng,
  steps: number,
  from = 1,
  batch = 4,
) {
  const picks: unknown[] = [];
  for (let step = from; step < from + steps; step++) {
    const ps = c.pick(batch, rng, { step, arms: open(step) });
    picks.push(ps);
    c.update(
      ps.map((p, i) => {
        const sr = Math.floor(outcomes.next() * 9) / 8;
        return result(p.arm, p.kind === 'new' ? `t${step}-${i}` : p.taskId, step, sr);
      }),
    );
  }
  return picks;
}

describe('controllers pick only open arms', () => {
  it.each(controllerNames)('%s', (name) => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0, max: 2 ** 31 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (families, levels, seed, explore) => {
          const arms = allArms(families, levels);
          const c = make(name, arms, { explore, replay: { fraction: 0.6, mutateFraction: 0.5 } });
          const rng = createRng(seed);
          const gate = createRng(seed + 1);
          const outcomes = createRng(seed + 2);
          const archived = new Set<string>();
          for (let step = 1; step <= 12; step++) {
            let open = arms.filter(() => gate.bool(0.6));
            if (open.length === 0) open = [arms[0]!];
            const keys = new Set(open.map(armKey));
            const n = rng.int(0, 6);
            const ps = c.pick(n, rng, { step, arms: open });
            expect(ps).toHaveLength(n);
            for (const p of ps) {
              expect(keys.has(armKey(p.arm))).toBe(true);
              if (p.kind !== 'new') expect(archived.has(p.taskId)).toBe(true);
            }
            const results = ps.map((p, i) => {
              const id = p.kind === 'new' ? `t${step}-${i}` : `${p.taskId}${p.kind === 'mutate' ? `-m${step}` : ''}`;
              archived.add(id);
              return result(p.arm, id, step, Math.floor(outcomes.next() * 9) / 8);
            });
            c.update(results);
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('hardest picks the highest open level of each family', () => {
    const arms = allArms(2, 4);
    const open = arms.filter((a) => !(a.family === 'f0' && a.level === 3));
    expect(new Set(hardestArms(open).map((a) => `${a.family}/${a.level}`))).toEqual(new Set(['f0/2', 'f1/3']));
    const ps = make('hardest', arms).pick(50, createRng(3), { step: 1, arms: open });
    for (const p of ps) expect(p.arm.level).toBe(p.arm.family === 'f0' ? 2 : 3);
  });

  it('every controller refuses an empty set of open arms with a clear error', () => {
    for (const name of controllerNames)
      expect(() => make(name, []).pick(1, createRng(1), { step: 1, arms: [] })).toThrow(/no open arms/);
  });
});

describe('probabilities are valid distributions', () => {
  const weights = fc.array(fc.oneof(fc.double({ min: 0, max: 1e6, noNaN: true }), fc.constant(0)), {
    minLength: 1,
    maxLength: 30,
  });
  it('normalise and softmax', () => {
    fc.assert(
      fc.property(weights, fc.double({ min: 1e-3, max: 10, noNaN: true }), (ws, tau) => {
        for (const ps of [normalise(ws), softmax(ws, tau)]) {
          expect(ps).toHaveLength(ws.length);
          for (const p of ps) expect(p >= 0 && p <= 1 && Number.isFinite(p)).toBe(true);
          expect(ps.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
        }
      }),
    );
  });
  it('replay distribution mixes rank and staleness', () => {
    const entry = fc.record({
      taskId: fc.string({ minLength: 1, maxLength: 5 }),
      score: fc.double({ min: 0, max: 1, noNaN: true }),
      lastStep: fc.integer({ min: 0, max: 100 }),
      count: fc.constant(1),
      arm: fc.constant<Arm>({ family: 'a', level: 0, type: 'deduction' }),
    });
    fc.assert(
      fc.property(
        fc.array(entry, { minLength: 1, maxLength: 20 }),
        fc.double({ min: 1e-3, max: 5, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (es, t, rho) => {
          const ps = replayProbabilities(es as ArchiveEntry[], 100, t, rho);
          for (const p of ps) expect(p >= 0 && p <= 1 + 1e-12).toBe(true);
          expect(ps.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
          if (rho === 0) {
            // Rank only: a strictly higher score never gets a lower probability.
            for (let i = 0; i < es.length; i++)
              for (let j = 0; j < es.length; j++)
                if (es[i]!.score > es[j]!.score) expect(ps[i]!).toBeGreaterThanOrEqual(ps[j]!);
          }
        },
      ),
    );
  });
  it('bandit probabilities are softmax(Q/τ)', () => {
    const arms = allArms(1, 3, 1);
    const b = new BanditController({ alpha: 0.5, tau: 0.4 });
    b.update([result(arms[0]!, 'x', 1, 0.5, 0.5)]);
    const ps = b.probabilities({ step: 2, arms });
    const e = [Math.exp(0.25 / 0.4), 1, 1];
    const z = e[0]! + 2;
    expect(ps[0]).toBeCloseTo(e[0]! / z, 12);
    expect(ps[1]).toBeCloseTo(1 / z, 12);
  });
});

describe('learnability', () => {
  it('arm value = mean over recent tasks of (1 − p if 0 < p < 1 else 0)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.integer({ min: 0, max: 8 }).map((k) => k / 8),
          { minLength: 1, maxLength: 30 },
        ),
        fc.integer({ min: 1, max: 10 }),
        (ps, window) => {
          const arm: Arm = { family: 'a', level: 0, type: 'deduction' };
          const c = new LearnabilityController({ window });
          ps.forEach((p, i) => c.update([result(arm, `t${i}`, i, p)]));
          const recent = ps.slice(-window).map((p) => (p > 0 && p < 1 ? 1 - p : 0));
          expect(c.value(armKey(arm))).toBeCloseTo(recent.reduce((a, b) => a + b, 0) / recent.length, 12);
        },
      ),
    );
  });
  it('unvisited arms get the exploration weight, spent arms the floor', () => {
    const arms = allArms(1, 3, 1);
    const c = new LearnabilityController({ unvisited: 0.5, floor: 0.02, temperature: 1 });
    c.update([result(arms[0]!, 'a', 1, 1), result(arms[1]!, 'b', 1, 0.25)]);
    expect(c.weights({ step: 2, arms })).toEqual([0.02, 0.75, 0.5]);
  });
  it('follows mastery: its fresh picks avoid the mastered skills, and practice is worth nothing', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.integer({ min: 1, max: 7 }).map((k) => k / 8),
          { minLength: 1, maxLength: 8 },
        ),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        (ps, seed) => {
          const arms = allArms(1, 2, 1);
          const c = new LearnabilityController({ floor: 0.02, temperature: 1 });
          // The same solve rates, as learning on arm 0 and as practice on arm 1.
          ps.forEach((p, i) =>
            c.update([result(arms[0]!, `a${i}`, i, p), { ...result(arms[1]!, `b${i}`, i, p), practice: true }]),
          );
          expect(c.value(armKey(arms[1]!))).toBe(0);
          expect(c.value(armKey(arms[0]!))).toBeGreaterThan(0);
          const mastered = [{ skillId: 'f0.x', arms: [arms[1]!] }];
          for (const pick of c.pick(8, createRng(seed), { step: 9, arms, mastered }))
            expect(pick).toEqual({ kind: 'new', arm: pick.arm, avoid: ['f0.x'] });
          for (const pick of c.pick(8, createRng(seed), { step: 9, arms })) expect(pick).not.toHaveProperty('avoid');
        },
      ),
    );
  });
});

describe('bandit (SEC)', () => {
  it('Q ← (1−α)Q + α·mean|A| per arm and step', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.double({ min: 0, max: 2, noNaN: true }), { minLength: 1, maxLength: 4 }), {
          minLength: 1,
          maxLength: 20,
        }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (steps, alpha) => {
          const arm: Arm = { family: 'a', level: 0, type: 'deduction' };
          const c = new BanditController({ alpha, tau: 0.4 });
          let q = 0;
          steps.forEach((advs, s) => {
            c.update(advs.map((a, i) => result(arm, `t${s}-${i}`, s, 0.5, a)));
            q = (1 - alpha) * q + (alpha * advs.reduce((x, y) => x + y, 0)) / advs.length;
          });
          expect(c.qOf(armKey(arm))).toBeCloseTo(q, 9);
        },
      ),
    );
    expect(banditUpdate(0.2, 1, 0.5)).toBeCloseTo(0.6, 12);
  });
});

describe('ladder', () => {
  const arms = allArms(2, 4, 2);
  const f0 = (level: number): Arm => ({ family: 'f0', level, type: 'deduction' });
  const feed = (c: LadderController, level: number, rates: number[]) =>
    rates.forEach((r, i) => c.update([result(f0(level), `t${level}-${i}-${r}`, i, r)]));

  it('promotes at ≥ 0.7 over the last k, demotes at ≤ 0.3, holds in between', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10 }), fc.integer({ min: 0, max: 100 }), (k, pct) => {
        const acc = pct / 100;
        const c = new LadderController(arms, { k });
        feed(c, 0, Array(k).fill(1));
        expect(c.levelOf('f0')).toBe(1);
        feed(c, 1, Array(k).fill(acc));
        const expected = acc >= 0.7 ? 2 : acc <= 0.3 ? 0 : 1;
        expect(c.levelOf('f0')).toBe(expected);
        expect(c.levelOf('f1')).toBe(0);
      }),
      // k = 3 at exactly 0.7: the window's mean is 0.6999… in floating point and must still promote.
      {
        examples: [
          [3, 70],
          [3, 30],
        ],
      },
    );
  });
  it('needs k attempts at the current level, ignores other levels, and stays within the levels', () => {
    const c = new LadderController(arms, { k: 4 });
    feed(c, 0, [1, 1, 1]);
    expect(c.levelOf('f0')).toBe(0); // three attempts are not k = 4
    feed(c, 2, [1, 1, 1, 1, 1]); // not the current level: ignored
    expect(c.levelOf('f0')).toBe(0);
    feed(c, 0, [0]); // [1, 1, 1, 0]: 0.75 ≥ 0.7
    expect(c.levelOf('f0')).toBe(1);
    feed(c, 1, [0, 0, 0, 0]);
    expect(c.levelOf('f0')).toBe(0);
    feed(c, 0, [0, 0, 0, 0, 0, 0]);
    expect(c.levelOf('f0')).toBe(0);
    for (let l = 0; l < 6; l++) feed(c, c.levelOf('f0'), [1, 1, 1, 1]);
    expect(c.levelOf('f0')).toBe(3);
  });
  it('picks the current level, or the highest open one below it', () => {
    const c = new LadderController(arms, { k: 1 });
    feed(c, 0, [1]);
    feed(c, 1, [1]);
    expect(c.levelOf('f0')).toBe(2);
    const open = arms.filter((a) => a.family === 'f0' && a.level !== 2);
    for (const p of c.pick(20, createRng(1), { step: 1, arms: open })) expect(p.arm.level).toBe(1);
  });
});

describe('progress (Teacher-Student)', () => {
  it('value = |least-squares slope| of the last window scores', () => {
    const arm: Arm = { family: 'a', level: 0, type: 'deduction' };
    const c = new ProgressController({ window: 4 });
    [0.9, 0, 0.25, 0.5, 0.75].forEach((p, i) => c.update([result(arm, `t${i}`, i, p)]));
    expect(c.value(armKey(arm))).toBeCloseTo(0.25, 12);
    expect(slope([1, 0.5, 0])).toBeCloseTo(-0.5, 12);
  });
});

describe('replay (PLR + ACCEL)', () => {
  it('archives scored tasks, replays and mutates them, evicts the lowest', () => {
    const arms = allArms(1, 2, 1);
    const c = new ReplayController(new UniformController(), { fraction: 1, mutateFraction: 0.5, archiveSize: 3 });
    // Before anything is archived every pick is fresh.
    expect(c.pick(5, createRng(1), { step: 1, arms }).every((p) => p.kind === 'new')).toBe(true);
    c.update([
      result(arms[0]!, 'a', 1, 0.5),
      result(arms[0]!, 'b', 1, 0.25),
      result(arms[1]!, 'c', 1, 1),
      result(arms[1]!, 'd', 1, 0.875),
      result(arms[0]!, 'e', 1, 0.75),
    ]);
    // Solved tasks (score 0) are not archived; the lowest score (d: 0.125) is evicted past archiveSize.
    expect(
      c
        .entries()
        .map((e) => e.taskId)
        .sort(),
    ).toEqual(['a', 'b', 'e']);
    const ps = c.pick(200, createRng(2), { step: 2, arms });
    expect(ps.every((p) => p.kind !== 'new')).toBe(true);
    const kinds = new Set(ps.map((p) => p.kind));
    expect(kinds).toEqual(new Set(['replay', 'mutate']));
    const counts = new Map<string, number>();
    for (const p of ps) if (p.kind !== 'new') counts.set(p.taskId, (counts.get(p.taskId) ?? 0) + 1);
    expect(counts.get('b')!).toBeGreaterThan(counts.get('e')!); // highest score (0.75) replayed most
  });
});

describe('state round-trips exactly', () => {
  it.each(controllerNames)('%s: save, restore into a fresh controller, continue → identical picks', (name) => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 }), fc.integer({ min: 0, max: 15 }), (seed, before) => {
        const arms = allArms(2, 4);
        const open = (step: number) => arms.filter((a) => a.level <= 1 + Math.floor(step / 5));
        const a = make(name, arms, { explore: 0.2 });
        const rng = createRng(seed);
        const outcomes = createRng(seed ^ 0x5555);
        drive(a, arms, open, rng, outcomes, before);
        const saved = JSON.stringify(a.state());
        const b = make(name, arms, { explore: 0.2 });
        b.restore(JSON.parse(saved));
        expect(JSON.stringify(b.state())).toBe(saved);
        const rngB = createRng(rng.state());
        const outB = createRng(outcomes.state());
        const pa = drive(a, arms, open, rng, outcomes, 10, before + 1);
        const pb = drive(b, arms, open, rngB, outB, 10, before + 1);
        expect(pb).toEqual(pa);
        expect(JSON.stringify(b.state())).toBe(JSON.stringify(a.state()));
      }),
      { numRuns: 15 },
    );
  });
  it('restore rejects another controller’s state', () => {
    expect(() => make('bandit', []).restore(make('ladder', []).state())).toThrow(/not a bandit/);
  });
});

describe('curriculumConfigSchema', () => {
  it('defaults every field', () => {
    const c = curriculumConfigSchema.parse({});
    expect(c.controller).toBe('learnability');
    expect(c.bandit).toEqual({ alpha: 0.5, tau: 0.4, initQ: 0 });
    expect(c.mastery).toEqual({ learnAt: 0.8, forgetBelow: 0.5, margin: 0.3 });
    expect(c.replay.staleness).toBeCloseTo(0.1);
    expect(curriculumConfigSchema.parse(undefined)).toEqual(c);
    expect(curriculumConfigSchema.parse({ ladder: { k: 3 } }).ladder).toEqual({ k: 3, promoteAt: 0.7, demoteAt: 0.3 });
  });
  it('names the field of a bad value', () => {
    const r = curriculumConfigSchema.safeParse({
      controller: 'greedy',
      explore: 2,
      bandit: { tau: 0 },
      replay: { nope: 1 },
      mastery: { learnAt: 0.4 },
    });
    expect(r.success).toBe(false);
    const paths = r.error!.issues.map((i) => i.path.join('.'));
    expect(paths).toEqual(
      expect.arrayContaining(['controller', 'explore', 'bandit.tau', 'replay', 'mastery.forgetBelow']),
    );
  });
  it('createController names and wraps every controller', () => {
    for (const name of controllerNames) expect(make(name, allArms(1, 2)).name).toBe(name);
  });
});
