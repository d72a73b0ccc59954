// The native problem families against the real sandbox (fast-check over every family × level): the
// witness verifies (1), every near-miss failure scores < 1, drawing is deterministic for a seed, the
// same seed gives the same id (dedup), the instance grows with the level, and the renderings.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createRng } from '../core/rng.js';
import { answerKind, answerShape, referenceAnswer, valueType, type Json, type ProblemTask } from '../core/task.js';
import { createSandbox, verifyMany, type Sandbox } from '../sandbox/index.js';
import { DOMAINS, generateTask, problemFamilies, renderCompact, renderNatural, taxonomy } from '../generators/index.js';

let sb: Sandbox;
beforeAll(async () => {
  sb = await createSandbox({ workers: 2 });
});
afterAll(async () => {
  await sb?.close();
});

const cells = problemFamilies.flatMap((f) => Array.from({ length: f.levels }, (_, level) => ({ family: f.id, level })));

describe('problem families in the sandbox', () => {
  it.each(cells)(
    '$family level $level: the witness scores 1, every failure < 1, same seed same task',
    async ({ family, level }) => {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 0, max: 2 ** 31 }), async (seed) => {
          const task = (await generateTask(sb, {
            family,
            level,
            type: 'problem',
            rng: createRng(seed),
            attempts: 5,
          })) as ProblemTask;
          expect(task).toMatchObject({
            type: 'problem',
            family,
            level,
            verifier: 'program',
            proposer: 'generator',
            parent: null,
          });
          expect(task.failures.length).toBeGreaterThanOrEqual(2);
          expect(task.failures.length).toBeLessThanOrEqual(4);
          const answers = [referenceAnswer(task), ...task.failures.map((x) => JSON.stringify(x))];
          const verdicts = await verifyMany(
            sb,
            answers.map((answer) => ({ task, answer })),
          );
          expect(verdicts[0]!.reward, JSON.stringify(verdicts[0])).toBe(1);
          for (const v of verdicts.slice(1)) {
            expect(v.reward).toBeLessThan(1);
            expect(v.reason).toBeTruthy();
          }
          const again = await generateTask(sb, { family, level, type: 'problem', rng: createRng(seed), attempts: 5 });
          expect(again).toEqual(task);
          const seen = new Set([task.id]);
          await expect(
            generateTask(sb, { family, level, type: 'problem', rng: createRng(seed), seen, attempts: 1 }),
          ).rejects.toThrow(/duplicate/);
          expect(answerKind(task.type)).toBe('literal');
          expect(answerShape(task)).toBe(valueType(task.witness));
          const compact = renderCompact(task);
          expect(compact.startsWith(`P:${family}@`)).toBe(true);
          expect(compact).toMatch(/^[\x20-\x7e]*$/);
          expect(compact.length).toBeLessThanOrEqual(240);
          const natural = renderNatural(task);
          expect(natural).toContain(task.statement);
          expect(natural).toMatch(/Answer with a single JSON literal of this shape, e\.g\. \S/);
        }),
        { numRuns: 4 },
      );
    },
  );
});

describe('verifiers check answers, they do not compare them with the witness', () => {
  // Another valid answer, made from the witness by a change that keeps it valid, scores 1 too.
  const other: Record<string, (t: ProblemTask) => Json> = {
    'graph-colouring': (t) => (t.witness as number[]).map((c) => (t.data as { colours: number }).colours - 1 - c),
    components: (t) => (t.witness as number[]).map((c) => c + 100),
    bezout: (t) => {
      const { a, b } = t.data as { a: number; b: number };
      const [x, y] = t.witness as [number, number];
      let g = a;
      for (let h = b; h;) [g, h] = [h, g % h];
      return [x + b / g, y - a / g];
    },
    'subset-sum': (t) => [...(t.witness as number[])].reverse(),
    'topological-order': (t) => {
      // Swapping two neighbours that no pair orders keeps the order valid.
      const w = [...(t.witness as number[])];
      const edges = (t.data as { edges: number[][] }).edges;
      for (let i = 0; i + 1 < w.length; i++) {
        if (!edges.some(([a, b]) => a === w[i] && b === w[i + 1])) {
          [w[i], w[i + 1]] = [w[i + 1]!, w[i]!];
          break;
        }
      }
      return w;
    },
  };
  it.each(Object.keys(other))('%s', async (family) => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 2 ** 31 }), fc.integer({ min: 0, max: 4 }), async (seed, level) => {
        const task = (await generateTask(sb, {
          family,
          level,
          type: 'problem',
          rng: createRng(seed),
          attempts: 5,
        })) as ProblemTask;
        const answer = other[family]!(task);
        const [v] = await verifyMany(sb, [{ task, answer: JSON.stringify(answer) }]);
        expect(v!.reward, JSON.stringify({ witness: task.witness, answer })).toBe(1);
      }),
      { numRuns: 10 },
    );
  });
});

describe('every problem verifier against hostile answers', () => {
  // Wrong types, huge values and prototype keys: 0 with a reason from every family, never a throw
  // out of the sandbox, never 1.
  const hostile = [
    'null',
    '-1',
    '1e300',
    '"' + 'A'.repeat(100_000) + '"',
    JSON.stringify(Array.from({ length: 20_000 }, () => [0, 0])),
    '[[[[[[[[[[[[]]]]]]]]]]]]',
    '{"__proto__": {"length": 2, "0": 1}}',
    '{"colouring": {"__proto__": []}, "oddCycle": null}',
    '[null, null, null]',
    'not a literal',
  ];
  it.each(problemFamilies.map((f) => f.id))('%s', async (family) => {
    const f = problemFamilies.find((x) => x.id === family)!;
    for (const level of [0, f.levels - 1]) {
      const task = await generateTask(sb, {
        family,
        level,
        type: 'problem',
        rng: createRng(`hostile:${family}:${level}`),
      });
      const verdicts = await verifyMany(
        sb,
        hostile.map((answer) => ({ task, answer })),
      );
      verdicts.forEach((v, i) => {
        expect(v.reward, `${family} L${level}: ${hostile[i]!.slice(0, 30)}`).toBe(0);
        expect(v.reason).toBeTruthy();
      });
    }
  });
});

describe('the problem registry', () => {
  it('has at least 24 families in at least 6 domains, each with >= 5 levels, skills with known prerequisites', () => {
    expect(problemFamilies.length).toBeGreaterThanOrEqual(24);
    expect(new Set(problemFamilies.map((f) => f.domain))).toEqual(new Set(DOMAINS));
    const t = taxonomy();
    const ids = new Set(t.skills.map((s) => s.id));
    for (const f of problemFamilies) {
      expect(f.levels).toBeGreaterThanOrEqual(5);
      expect(f.knobs).toHaveLength(f.levels);
      expect(f.skills.length).toBeGreaterThan(0);
      for (const s of f.skills) {
        expect(s.id.startsWith(`${f.id}.`)).toBe(true);
        for (const r of s.requires) expect(ids.has(r), `${s.id} requires ${r}`).toBe(true);
      }
      expect(t.families.find((x) => x.id === f.id)).toMatchObject({ types: ['problem'], domain: f.domain });
    }
  });

  it('draws deterministically by seed and the instance grows with the level (mean size over 40 draws)', () => {
    for (const f of problemFamilies) {
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 2 ** 31 }), fc.integer({ min: 0, max: f.levels - 1 }), (seed, level) => {
          expect(f.generate(createRng(seed), level)).toEqual(f.generate(createRng(seed), level));
        }),
        { numRuns: 10 },
      );
      const sizes = Array.from({ length: f.levels }, (_, level) => {
        const rng = createRng(`size:${f.id}:${level}`);
        let total = 0;
        for (let i = 0; i < 40; i++) total += f.size(f.generate(rng, level).data);
        return total / 40;
      });
      for (let l = 1; l < sizes.length; l++)
        expect(sizes[l], `${f.id}: sizes ${sizes.join(', ')}`).toBeGreaterThanOrEqual(sizes[l - 1]!);
      expect(sizes[sizes.length - 1]).toBeGreaterThan(sizes[0]!);
    }
  });
});
