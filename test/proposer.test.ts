// The learned grammar proposer (docs/proposers.md): its chooser is a distribution
// over the grammar's options, the fixed chooser draws exactly what the generators always drew,
// novelty is judged on the canonical hash, REINFORCE moves preferences toward learnable tasks, the
// state resumes exactly, and a trained proposer's drafts still pass the sandbox about as often as
// the fixed generators'.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createRng, type Rng } from '../core/rng.js';
import { TASK_TYPES, type Task } from '../core/task.js';
import { canonicalHash, drawReference, families, FIXED_CHOOSER, materialise, tokenize } from '../generators/index.js';
import {
  buckets,
  LEARNED_PROPOSER,
  LearnedProposer,
  learnedProposerConfigSchema,
  preferenceRows,
  probabilities,
  TracingChooser,
} from '../proposers/index.js';
import { createSandbox, type Sandbox } from '../sandbox/index.js';
import { loadPreset } from '../src/run/config.js';

const BASE_TYPES = TASK_TYPES.filter((t) => t === 'deduction' || t === 'abduction' || t === 'induction');
const config = (over: object = {}) => learnedProposerConfigSchema.parse({ enabled: true, ...over });

/** Renames every variable the program declares (but f): the same program to the canonical hash. */
function rename(program: string): string {
  let out = program;
  const toks = tokenize(program).filter((t) => t.local && !t.shorthand && t.text !== 'f');
  for (const t of toks.reverse()) out = out.slice(0, t.at) + `r_${t.text}` + out.slice(t.end);
  return out;
}

describe('the chooser', () => {
  it('gives a probability distribution at every choice point (weight 0 stays 0)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.double({ min: 0, max: 5, noNaN: true }), { minLength: 8, maxLength: 8 }),
        fc.array(fc.double({ min: -20, max: 20, noNaN: true }), { minLength: 8, maxLength: 8 }),
        (labels, ws, prefs) => {
          const weights = labels.map((_, i) => ws[i]!);
          if (!weights.some((w) => w > 0)) weights[0] = 1;
          const at = Object.fromEntries(labels.map((l, i) => [l, prefs[i]!]));
          const p = probabilities({ pt: at }, 'pt', labels, weights);
          expect(p.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
          p.forEach((x, i) => {
            expect(x).toBeGreaterThanOrEqual(0);
            if (weights[i] === 0) expect(x).toBe(0);
          });
        },
      ),
    );
  });

  it("with no preferences, gives the fixed weights' probabilities", () => {
    expect(probabilities({}, 'prod:int', ['add', 'sub', 'neg'], [1, 1, 0.5])).toEqual(
      [0.4, 0.4, 0.2].map((x) => expect.closeTo(x, 12)),
    );
  });

  it('splits an integer range into buckets that cover it once', () => {
    fc.assert(
      fc.property(fc.integer({ min: -50, max: 50 }), fc.integer({ min: 0, max: 60 }), (lo, span) => {
        const bs = buckets(lo, lo + span);
        const covered = bs.flatMap((b) => Array.from({ length: b.hi - b.lo + 1 }, (_, i) => b.lo + i));
        expect(covered).toEqual(Array.from({ length: span + 1 }, (_, i) => lo + i));
      }),
    );
  });
});

const armArb = fc.constantFrom(
  ...families
    .flatMap((f) =>
      Array.from({ length: f.levels }, (_, level) => BASE_TYPES.map((type) => ({ family: f.id, level, type }))),
    )
    .flat(),
);

describe('the seam', () => {
  it('with the fixed chooser, draws exactly what the generators draw, from the same rng calls', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 - 1 }), armArb, (seed, arm) => {
        const a = createRng(seed);
        const b = createRng(seed);
        const plain = drawReference(arm.family, a, arm.level, arm.type);
        const fixed = drawReference(arm.family, b, arm.level, arm.type, FIXED_CHOOSER);
        expect(fixed).toEqual(plain);
        expect(b.state()).toEqual(a.state());
      }),
      { numRuns: 150 },
    );
  });

  it('leaves the fixed weights in place after a learned draw (the chooser is set around one draw only)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 - 1 }), armArb, (seed, arm) => {
        drawReference(
          arm.family,
          createRng(seed + 1),
          arm.level,
          arm.type,
          new TracingChooser({ 'prod:int': { mul: 3 } }),
        );
        expect(drawReference(arm.family, createRng(seed), arm.level, arm.type)).toEqual(
          drawReference(arm.family, createRng(seed), arm.level, arm.type, FIXED_CHOOSER),
        );
      }),
      { numRuns: 40 },
    );
  });

  it('records every choice of the kept candidate with a valid option', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 - 1 }), armArb, (seed, arm) => {
        const chooser = new TracingChooser({}, 4);
        drawReference(arm.family, createRng(seed), arm.level, arm.type, chooser);
        expect(chooser.refused.length).toBeLessThanOrEqual(4);
        for (const c of [...chooser.trace, ...chooser.refused.flat()]) {
          expect(c.labels.length).toBe(c.weights.length);
          expect(c.chosen).toBeGreaterThanOrEqual(0);
          expect(c.weights[c.chosen]!).toBeGreaterThan(0);
        }
      }),
      { numRuns: 60 },
    );
  });
});

describe('novelty', () => {
  it('is judged on the canonical hash: a renamed program is not novel', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 - 1 }), armArb, (seed, arm) => {
        const { draft } = drawReference(arm.family, createRng(seed), arm.level, arm.type);
        const renamed = rename(draft.program);
        if (/function f\(\w/.test(draft.program)) expect(renamed).not.toBe(draft.program);
        const p = new LearnedProposer(config());
        expect(p.isNovel(canonicalHash(draft.program))).toBe(true);
        p.note({ hash: canonicalHash(draft.program) });
        expect(p.isNovel(canonicalHash(renamed))).toBe(false);
      }),
      { numRuns: 60 },
    );
  });
});

describe('learning', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await createSandbox({ workers: 2 });
  });
  afterAll(() => sandbox.close());

  const arm = { family: 'arith', level: 1, type: 'deduction' as const };
  /** A stand-in solver: it solves a task with a product 1 time in 4 (learnable), every other task always. */
  const rewardsFor = (t: Task): number[] => (t.program.includes('*') ? [1, 0, 0, 0] : [1, 1, 1, 1]);

  async function train(p: LearnedProposer, rng: Rng, rounds: number, seen: Set<string>): Promise<Task[]> {
    const all: Task[] = [];
    for (let r = 0; r < rounds; r++) {
      const tasks: Task[] = [];
      for (let i = 0; i < 8; i++) tasks.push(await p.generate(sandbox, arm, rng.fork(`${r}/${i}`), seen, 20));
      p.learn(tasks.map((t) => ({ taskId: t.id, rewards: rewardsFor(t) })));
      all.push(...tasks);
    }
    return all;
  }

  it('moves its preferences toward the choices of learnable tasks, and marks its tasks as its own', async () => {
    const p = new LearnedProposer(config({ lr: 0.3 }));
    const tasks = await train(p, createRng(7), 12, new Set());
    expect(tasks.every((t) => t.proposer === LEARNED_PROPOSER)).toBe(true);
    const mul = preferenceRows(p.state()).find(
      (r) => r.arm === 'arith/1/deduction' && r.point === 'prod:int' && r.option === 'mul',
    )!;
    expect(mul.learned).toBeGreaterThan(mul.fixed + 0.1);
  });

  it("resumes exactly from its saved state (with the run's tasks noted again, as the loop does)", async () => {
    const a = new LearnedProposer(config());
    const seenA = new Set<string>();
    const before = await train(a, createRng(11), 3, seenA);
    const b = new LearnedProposer(config());
    b.restore(JSON.parse(JSON.stringify(a.state())) as unknown);
    for (const t of before) b.note(t);
    const seenB = new Set(seenA);
    const afterA = await train(a, createRng(12), 3, seenA);
    const afterB = await train(b, createRng(12), 3, seenB);
    expect(afterB).toEqual(afterA);
    expect(b.state()).toEqual(a.state());
  });

  it('refuses a state that is not its own, naming what it got', () => {
    expect(() => new LearnedProposer(config()).restore({ version: 99 })).toThrow(/version 2 \(got version 99\)/);
  });

  it('keeps drafting programs the sandbox accepts about as often as the fixed generators do', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 2 ** 31 - 1 }), async (seed) => {
        const p = new LearnedProposer(config({ lr: 0.3 }));
        await train(p, createRng(seed), 6, new Set());
        const prefs = p.state().arms['arith/1/deduction']!.prefs;
        let ok = { learned: 0, fixed: 0 };
        const n = 40;
        for (let i = 0; i < n; i++) {
          const l = drawReference(
            arm.family,
            createRng(`${seed}/${i}`),
            arm.level,
            arm.type,
            new TracingChooser(prefs),
          ).draft;
          const f = drawReference(arm.family, createRng(`${seed}/${i}`), arm.level, arm.type).draft;
          ok = {
            learned: ok.learned + ((await materialise(sandbox, l)).ok ? 1 : 0),
            fixed: ok.fixed + ((await materialise(sandbox, f)).ok ? 1 : 0),
          };
        }
        expect(ok.learned / n).toBeGreaterThanOrEqual(ok.fixed / n - 0.1);
      }),
      { numRuns: 3 },
    );
  });

  it('rejects a bad proposer config naming the field', () => {
    expect(() => loadPreset('smoke', { proposer: { learned: { enabled: true, lr: -1 } } })).toThrow(
      /proposer\.learned\.lr/,
    );
    expect(() => loadPreset('smoke', { proposer: { learnd: {} } })).toThrow(/proposer/);
    expect(loadPreset('smoke').proposer).toBeUndefined();
  });
});
