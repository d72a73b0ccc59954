// Determinism under load: a worker starved of CPU sees its wall clock run on while it does no work.
// clockJumpsMs simulates that (the workers' clock jumps forward at every read), so these tests have
// no timing in them. Verdicts and step counts must equal an unstarved sandbox's: the deadline is
// counted in steps (steps.mjs), and the wall clock is only a safety net 20× the deadline.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { budgetFor, createSandbox, type Sandbox } from '../sandbox/index.js';
import { runTwiceMetered } from '../sandbox/testing.js';
import { verifyManyMetered } from '../sandbox/testing.js';
import { drawReference, families } from '../generators/index.js';
import { createRng } from '../core/rng.js';
import { CODE_TASK_TYPES, type InductionTask, type Json } from '../core/task.js';

let calm: Sandbox;
let starved: Sandbox;

beforeAll(async () => {
  calm = await createSandbox({ workers: 1 });
  // Every read of the clock: 100 ms more, twice the 50 ms deadline, at every poll in a row.
  starved = await createSandbox({ workers: 1, clockJumpsMs: [100] });
});

afterAll(async () => {
  await calm?.close();
  await starved?.close();
});

const LOOP = 'function f(n) { let t = 0; for (let i = 0; i < n; i++) t += i % 7; return t }';

describe('a starved worker gives the verdicts of a calm one', () => {
  it('validation: the same result and the same cost', async () => {
    const inputs: Json[][] = [[10], [20_000], [3]];
    const a = await runTwiceMetered(calm, LOOP, inputs);
    const b = await runTwiceMetered(starved, LOOP, inputs);
    expect(a.result.ok).toBe(true);
    expect(b).toEqual(a);
  });

  it('verification: an answer near its budget passes, one past it fails on its budget, in both', async () => {
    const near = (await runTwiceMetered(calm, LOOP, [[30_000]])).cost!;
    const out = await calm.run(LOOP, [30_000]);
    if (!out.ok) throw new Error(out.detail);
    const task: InductionTask = {
      id: 't',
      type: 'induction',
      family: 'test',
      level: 0,
      skills: [],
      program: LOOP,
      visible: [{ input: [30_000], output: out.value }],
      hidden: [],
      message: '',
      budget: near + 10,
    } as unknown as InductionTask;
    const items = [
      { task, answer: LOOP },
      { task, answer: 'function f(n) { let t = 0; for (let i = 0; i < 2 * n; i++) t += i % 7; return n }' },
    ];
    const a = await verifyManyMetered(calm, items);
    const b = await verifyManyMetered(starved, items);
    expect(a[0]!.verdict.reward).toBe(1);
    expect(a[1]!.verdict.reason).toMatch(/^timeout: exceeded its budget/);
    expect(b).toEqual(a);
  });

  it('a call past its deadline times out on its steps in both', async () => {
    const prog = 'function f() { let t = 0; for (let i = 0; i < 1e9; i++) t++; return t }';
    const a = await calm.run(prog, []);
    expect(a).toEqual({ ok: false, reason: 'timeout', detail: 'exceeded the 50 ms deadline (500000 steps)' });
    // Starved, its 500,000 steps take 50 polls of the clock: 5 s to it, past the 1 s safety net,
    // which is the one wall-clock verdict left (a pathological case).
    expect(await starved.run(prog, [])).toMatchObject({ ok: false, reason: 'timeout' });
    // The worker is fine after.
    expect(await starved.run(LOOP, [3])).toEqual({ ok: true, value: 3 });
  });

  it('property: generated references, any starvation pattern: the same validation and budgeted verification', async () => {
    const cells = families
      .flatMap((f) =>
        Array.from({ length: f.levels }, (_, level) => CODE_TASK_TYPES.map((type) => ({ family: f.id, level, type }))),
      )
      .flat();
    // A fresh starved sandbox per pattern; the calm one serves them all.
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            cell: fc.constantFrom(...cells),
            seed: fc.integer({ min: 1, max: 1e6 }),
            pad: fc.integer({ min: 0, max: 20_000 }),
          }),
          { minLength: 3, maxLength: 6 },
        ),
        // Jumps around the 50 ms deadline per read (the clock is read every 10,000 steps, so a call
        // of a few steps never reads it: each program is padded with a loop of up to 20,000 steps
        // per call; references take ≤ 57,000). A padded call reads it ≤ 10 times: ≤ 600 ms, short of
        // the 1 s safety net with room for real time on a loaded machine.
        fc.array(fc.integer({ min: 40, max: 60 }), { minLength: 1, maxLength: 4 }),
        async (draws, jumps) => {
          const sb = await createSandbox({ workers: 1, clockJumpsMs: jumps });
          try {
            for (const { cell, seed, pad } of draws) {
              const { draft } = drawReference(cell.family, createRng(seed), cell.level, cell.type);
              // (the outer call only: a recursive f calls the wrapper again)
              const program = `${draft.program}\nconst g$ = f; let d$ = 0; f = function (...a) { if (d$++ === 0) for (let i = 0; i < ${pad}; i++); try { return g$(...a) } finally { d$-- } };`;
              const inputs = draft.inputs as Json[][];
              const a = await runTwiceMetered(calm, program, inputs);
              const b = await runTwiceMetered(sb, program, inputs);
              // (native work varies by a few units with the heap's history: validation and steps must not)
              expect({ ...b, native: null }, `${cell.family} ${cell.level} ${cell.type} ${seed} ${pad}`).toEqual({
                ...a,
                native: null,
              });
              if (a.cost === null) continue;
              const job = [{ program, inputs, budget: budgetFor(a.cost), budgetPer: 'task' as const }];
              // (native work varies by a few units with the heap's history: results and steps must not)
              const [x, y] = [await sb.runTasksMetered!(job), await calm.runTasksMetered!(job)];
              expect(x.map((m) => [m.results, m.steps, m.copied])).toEqual(
                y.map((m) => [m.results, m.steps, m.copied]),
              );
            }
          } finally {
            await sb.close();
          }
        },
      ),
      { numRuns: 6, endOnFailure: true },
    );
  }, 120_000);
});
