// Levels above the tables (docs/levels.md): every native family makes tasks at any level d up to its
// last renderable one, from the rule its taxonomy states; the tasks are sound in the sandbox (the
// reference answer verifies, a problem's near misses fail) at random d ≤ 50; no skill enters above
// level 4; a level past the last is refused in one line.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createRng } from '../core/rng.js';
import { CODE_TASK_TYPES, referenceAnswer, type ProblemTask } from '../core/task.js';
import { createSandbox, verifyMany, type Sandbox } from '../sandbox/index.js';
import {
  allSkills,
  families,
  formatTaxonomy,
  generateTask,
  getFamily,
  getProblemFamily,
  problemFamilies,
  taxonomy,
} from '../generators/index.js';
import { describeRule, grow, lastWithin, TOP } from '../generators/testing.js';

let sb: Sandbox;
beforeAll(async () => {
  sb = await createSandbox({ workers: 2 });
});
afterAll(async () => {
  await sb?.close();
});

const native = [
  ...families.map((f) => ({ id: f.id, kind: 'code' as const, last: f.lastLevel })),
  ...problemFamilies.map((f) => ({ id: f.id, kind: 'problem' as const, last: f.lastLevel })),
];

describe('the rules', () => {
  it('grow a number linearly, in steps, by the logarithm or by a factor, and state it', () => {
    expect([4, 5, 8, 9].map((d) => grow(4, { by: 1, every: 4 }, d))).toEqual([4, 4, 5, 5]);
    expect([0, 4, 5, 6].map((d) => grow(7, { by: 2 }, d))).toEqual([7, 7, 9, 11]);
    expect([5, 6, 7, 11, 19].map((d) => grow(5, { by: 1, log: true }, d))).toEqual([6, 6, 7, 8, 9]);
    expect([4, 9, 14].map((d) => grow(100, { times: 2, every: 5 }, d))).toEqual([100, 200, 400]);
    expect(describeRule(4, { by: 1, every: 4 })).toBe('4 + ⌊(d − 4)/4⌋');
    expect(describeRule(-20, { by: -5 })).toBe('−20 − 5(d − 4)');
    expect(describeRule(5, { by: 1, log: true, max: 13, why: 'it would not fit' })).toBe(
      '5 + ⌊log2(d − 3)⌋ (at most 13: past it it would not fit)',
    );
  });
  it('find the last level within a max exactly', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 50 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 400 }),
        (v, by, every, room) => {
          const rule = { by, every, max: v + room };
          const last = lastWithin(v, rule)!;
          expect(last).toBeGreaterThanOrEqual(TOP);
          expect(grow(v, rule, last)).toBeLessThanOrEqual(rule.max);
          expect(grow(v, rule, last + 1)).toBeGreaterThan(rule.max);
        },
      ),
    );
  });
});

describe('every native family', () => {
  it('tables levels 0-4 and states how its knobs grow above them, rendering at least to level 50', () => {
    for (const f of [...families, ...problemFamilies]) {
      expect(f.levels, f.id).toBe(TOP + 1);
      expect(f.growth.length, f.id).toBeGreaterThan(0);
      for (const line of f.growth) expect(line, f.id).toMatch(/\bd\b/);
      if (f.lastLevel !== null) expect(f.lastLevel, f.id).toBeGreaterThanOrEqual(50);
    }
    const table = formatTaxonomy('table');
    expect(table).toMatch(
      /arith — [^\n]*\n(?: {2}level \d: [^\n]*\n){5} {2}above level 4: definitions 0 \+ ⌊\(d − 4\)\/2⌋/,
    );
    expect(taxonomy().families.find((f) => f.id === 'hanoi')).toMatchObject({ lastLevel: 514, slower: { ratio: 4 } });
  });
  it('lets no skill enter above level 4', () => {
    for (const s of allSkills()) expect(s.level, s.id).toBeLessThanOrEqual(TOP);
  });
  it('refuses a level past its last in one line naming the limit', () => {
    const f = getFamily('recursion');
    expect(() => f.generate(createRng(1), f.lastLevel!, 'deduction')).not.toThrow();
    expect(() => f.generate(createRng(1), f.lastLevel! + 1, 'deduction')).toThrow(
      /^family 'recursion': level \d+ cannot be rendered within the served limits: its step depth would be 13, past 12 [^\n]*; its last level is 83$/,
    );
    const h = getProblemFamily('hanoi');
    expect(() => h.generate(createRng(1), h.lastLevel! + 1)).toThrow(
      /^family 'hanoi': level 515 cannot be rendered[^\n]*64 KiB completion[^\n]*$/,
    );
  });
});

describe('the last level', () => {
  it.each(native)(
    '$id: makes a sound task at its last level, and refuses the next in one line',
    async ({ id, kind, last }) => {
      expect(last, id).not.toBeNull();
      const type = kind === 'code' ? 'induction' : 'problem';
      const task = await generateTask(sb, {
        family: id,
        level: last!,
        type,
        rng: createRng(`last/${id}`),
        attempts: 3,
      });
      const verdicts = await verifyMany(sb, [{ task, answer: referenceAnswer(task) }]);
      expect(verdicts[0]!.reward).toBe(1);
      await expect(generateTask(sb, { family: id, level: last! + 1, type, rng: createRng(1) })).rejects.toThrow(
        new RegExp(
          `^family '${id}': level ${last! + 1} cannot be rendered within the served limits: [^\\n]+; its last level is ${last}$`,
        ),
      );
    },
  );
});

describe('tasks at random levels up to 50', () => {
  it.each(native)(
    '$id: a task at d ≤ 50 validates in the sandbox and its reference answer verifies (a problem rejects its near misses)',
    async ({ id, kind }) => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: 2 ** 31 }),
          fc.integer({ min: 0, max: 50 }),
          fc.constantFrom(...(kind === 'code' ? CODE_TASK_TYPES : (['problem'] as const))),
          async (seed, level, type) => {
            const task = await generateTask(sb, { family: id, level, type, rng: createRng(seed), attempts: 3 });
            expect(task).toMatchObject({ family: id, level, type });
            const failures =
              task.type === 'problem' ? (task as ProblemTask).failures.map((x) => JSON.stringify(x)) : [];
            const verdicts = await verifyMany(
              sb,
              [referenceAnswer(task), ...failures].map((answer) => ({ task, answer })),
            );
            expect(verdicts[0]!.reward, JSON.stringify(verdicts[0])).toBe(1);
            for (const v of verdicts.slice(1)) expect(v.reward).toBeLessThan(1);
          },
        ),
        { numRuns: 12 },
      );
    },
  );
});
