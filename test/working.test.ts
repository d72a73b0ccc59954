// A deduction's working (generators/working.ts, core/working.ts) and how the solver writes it
// (src/solver/work-grammar.ts): the template comes from the program alone, the values of a right
// working end on the task's output, the solver's grammar allows exactly the template's text and
// typed values in holes, and what it writes reads back to the answer it verifies.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createRng } from '../core/rng.js';
import { isWorkShape, workParts, workShape } from '../core/working.js';
import { createSandbox, type Sandbox } from '../sandbox/index.js';
import { generateTask, taskWorking, working, workingShape } from '../generators/index.js';
import { answerFromView, answerInView, answerTokenIds, grammarFor } from '../src/solver/index.js';
import { allowedTokens, decode, EOS, stepToken, tokenText } from '../src/solver/testing.js';
import { referenceWorking, taskPrompt, trainingReward } from '../src/run/testing.js';
import type { Task } from '../core/task.js';

let sb: Sandbox;
beforeAll(async () => {
  sb = await createSandbox({ workers: 2 });
});
afterAll(async () => {
  await sb?.close();
});

const STYLES = ['names', 'values'] as const;

/**
 * Walks a working's tokens through the solver's masks: each must be allowed; returns the free
 * (chosen) ones. The budget leaves room past the working's own length: a fixed one (200 tokens)
 * refused the last tokens of the longest arith level-4 workings, whose masks must end them in time.
 */
function walk(shape: string, ids: number[]): { free: number; forced: number } {
  const g = grammarFor(shape);
  const budget = Math.max(200, ids.length + 32);
  let state = g.start();
  let free = 0;
  let forced = 0;
  ids.forEach((id, k) => {
    const mask = allowedTokens(shape, state, budget - k);
    expect(mask[id], `token ${JSON.stringify(tokenText(id))} at ${k} of ${decode(ids)}`).toBe(1);
    if (mask.reduce((a, b) => a + b, 0) > 1) free++;
    else forced++;
    if (id !== EOS) state = stepToken(g, state, tokenText(id))!;
  });
  return { free, forced };
}

describe('the working of a deduction', () => {
  it.each(['arith', 'logic'].flatMap((family) => [0, 1, 2, 3, 4].map((level) => ({ family, level }))))(
    '$family level $level: every task has one, it ends on the output, and the solver writes it in its grammar',
    async ({ family, level }) => {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 0, max: 2 ** 31 }), async (seed) => {
          const task = await generateTask(sb, { family, level, type: 'deduction', rng: createRng(seed) });
          if (task.type !== 'deduction') throw new Error('a deduction was asked for');
          for (const style of STYLES) {
            const w = taskWorking(task, style)!;
            expect(w, `${style}: ${task.program}`).not.toBeNull();
            expect(w.values.at(-1)).toEqual(task.output);
            const shape = workShape(w.parts);
            expect(workParts(shape).filter((p) => typeof p !== 'string')).toHaveLength(w.values.length);
            const ids = answerTokenIds(shape, JSON.stringify(w.values))!;
            expect(ids).not.toBeNull();
            const { free } = walk(shape, ids);
            // the holes' tokens are the only choices (a bool is one, an int its sign, digits and end)
            expect(free).toBeGreaterThanOrEqual(w.values.length);
            const written = answerInView(shape, JSON.stringify(w.values));
            expect(decode(ids.slice(0, -1))).toBe(written);
            expect(answerFromView(shape, written)).toBe(JSON.stringify(task.output));
          }
        }),
        { numRuns: 8 },
      );
    },
  );

  it('is a function of the program: the same template for other inputs, other values', () => {
    const program = 'function f(a, b) { return a * b - a; }';
    const one = working(program, [8, 8], 'names')!;
    const two = working(program, [3, -2], 'names')!;
    expect(one.parts).toEqual(two.parts);
    expect(one.parts).toEqual(['a*b=', { hole: 'int' }, ';$1-a=', { hole: 'int' }]);
    expect([one.values, two.values]).toEqual([
      [64, 56],
      [-6, -9],
    ]);
    expect(answerInView(workShape(working(program, [8, 8], 'values')!.parts), '[8,8,64,64,8,56]')).toBe(
      '+08*+08=+64;+64-+08=+56',
    );
  });

  it('writes floor division, calls, conditionals, definitions and a returned name as steps', () => {
    const w = working(
      'function f(a) { const t1 = Math.floor(a / 3); return t1 > -3 ? Math.abs(t1) : -a; }',
      [-7],
      'names',
    )!;
    expect(answerInView(workShape(w.parts), JSON.stringify(w.values))).toBe(
      'floor(a/3)=-03;$1>-3=false;abs($1)=+03;-a=+07;$2?$3:$4=+07',
    );
    expect(working('function f(p, q) { return q; }', [true, false], 'names')!.values).toEqual([false]);
  });

  it('has none outside pure integer and boolean expressions', () => {
    expect(
      working('function f(a) { let s = 0; for (let i = 0; i < a; i++) s += i; return s; }', [3], 'names'),
    ).toBeNull();
    expect(working('function f(s) { return s.length; }', ['ab'], 'names')).toBeNull();
    expect(working('function f(a) { return a / 2; }', [3], 'names')).toBeNull(); // '/' alone: only floor division is a step
    expect(working('not a program (', [], 'names')).toBeNull();
  });

  it('never lets a token span a text and a hole: `-` then `-04`, not `--`', () => {
    const w = working('function f(a) { return -a; }', [4], 'values')!;
    const shape = workShape(w.parts);
    const ids = answerTokenIds(shape, JSON.stringify(w.values))!;
    expect(ids.map(tokenText)).toEqual(['-', '+', '0', '4', '=', '-', '0', '4', '']);
    walk(shape, ids);
  });
});

describe('a prompt with a working', () => {
  const task = (): Task =>
    ({
      id: 'x',
      type: 'deduction',
      family: 'arith',
      level: 1,
      skills: [],
      program: 'function f(a, b) { return a * b - a; }',
      input: [8, 8],
      output: 56,
      hash: 'x',
      parent: null,
      proposer: 'generator',
    }) as unknown as Task;

  it('carries the template only when the solver writes its working', () => {
    expect(taskPrompt(task(), 'D:8,8@(a,b)=>a*b-a').work).toBeUndefined();
    const p = taskPrompt(task(), 'D:8,8@(a,b)=>a*b-a', 'names');
    expect(isWorkShape(p.work!)).toBe(true);
    expect(p.work).toBe(workingShape(task(), 'names'));
    expect(p.shape).toBe('int');
  });

  it("is credited for training by the share of the right working written from its start, the verifier's reward unchanged", () => {
    const t = task();
    const shape = workingShape(t, 'values')!;
    const reference = referenceWorking(t, shape, 'values')!;
    expect(reference).toBe('+08*+08=+64;+64-+08=+56');
    const cfg = { numericPartial: 0, prefixPartial: 0.5 };
    const wrong = { reward: 0, reason: 'wrong' };
    const credit = (written: string) =>
      trainingReward(t, answerFromView(shape, written), wrong, cfg, { written, reference });
    // The first step right, the second wrong: more than the same wrong answer alone earns.
    const firstRight = '+08*+08=+64;+64-+08=+55';
    expect(credit(firstRight)).toBeCloseTo((0.5 * 22) / 23);
    expect(trainingReward(t, '55', wrong, cfg)).toBeCloseTo((0.5 * 2) / 3);
    // A wrong copy of the first operand: little credit, whatever the answer.
    expect(credit('+07*+08=+56;+56-+07=+49')).toBeCloseTo((0.5 * 2) / 23);
    expect(trainingReward(t, '56', { reward: 1 }, cfg, { written: reference, reference })).toBe(1);
    expect(referenceWorking(t, undefined, 'values')).toBeNull();
  });
});
