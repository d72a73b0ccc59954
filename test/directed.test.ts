// Directed mutation and crossover (generators/directed.ts): every operator's children, over drawn
// families, levels and seeds, are sound (the sandbox ran them and their outputs are the program's),
// labelled by their own program (generators/label.ts), record their parent and operator, and are
// never hash-equal to a held-out task; each operator moves the knob it names, in its direction.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRng } from '../core/rng.js';
import type { DeductionTask } from '../core/task.js';
import {
  crossover,
  DIRECTED_OPS,
  directedMutate,
  directedOps,
  FRONTIER_PROPOSER,
  generateTask,
  labelProgram,
  materialise,
  type DirectedOp,
} from '../generators/index.js';
import { createSandbox, type Sandbox } from '../sandbox/index.js';

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await createSandbox({ workers: 2 });
});
afterAll(async () => {
  await sandbox.close();
});

const draw = (family: string, level: number, seed: number): Promise<DeductionTask> =>
  generateTask(sandbox, {
    family,
    level,
    type: 'deduction',
    rng: createRng(`directed/${seed}`),
  }) as Promise<DeductionTask>;

const ALL_OPS: DirectedOp[] = [...DIRECTED_OPS.harder, ...DIRECTED_OPS.easier];

describe('directed mutation', () => {
  it('makes sound, self-labelled children that name their parent and never equal a held-out task', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('arith', 'logic'),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 0, max: 1e6 }),
        fc.constantFrom(...ALL_OPS),
        async (family, level, seed, op) => {
          const parent = await draw(family, level, seed);
          if (!directedOps(parent, DIRECTED_OPS.harder.includes(op as never) ? 'harder' : 'easier').includes(op))
            return;
          let draft;
          try {
            draft = directedMutate(createRng(seed), parent, op);
          } catch (e) {
            // The one refusal: no level of the family admits the child.
            expect((e as Error).message).toMatch(/no level of/);
            return;
          }
          expect(draft.parent).toEqual({ id: parent.id, op });
          expect(draft.proposer).toBe(FRONTIER_PROPOSER);
          const label = labelProgram(family, draft.program, draft.inputs);
          expect([draft.level, [...draft.skills].sort()]).toEqual([label.level, label.skills]);
          const res = await materialise(sandbox, draft, new Set());
          if (!res.ok) return; // refused like any draft (e.g. an output that does not change with its input)
          const child = res.task as DeductionTask;
          expect(child.id).not.toBe(parent.id);
          expect([child.level, child.skills]).toEqual([draft.level, draft.skills]);
          // held out: the same child is refused where its hash is in the held-out set
          const again = await materialise(sandbox, draft, new Set([child.id]));
          expect(again.ok).toBe(false);
          if (!again.ok) expect(again.reason).toBe('duplicate');
        },
      ),
      { numRuns: 60, seed: 42 },
    );
  });

  it('moves each knob in its direction', async () => {
    const parent = await draw('arith', 1, 7);
    const literals = (p: string) => (p.match(/\b\d+\b/g) ?? []).map(Number).reduce((a, b) => a + b, 0);
    const nodes = (p: string) => (p.match(/[+\-*]/g) ?? []).length;
    const magnitude = (xs: unknown[][]) => xs.flat().reduce((a: number, x) => a + Math.abs(Number(x)), 0);
    for (let seed = 0; seed < 20; seed++) {
      const rng = () => createRng(seed);
      const ops = new Set([...directedOps(parent, 'harder'), ...directedOps(parent, 'easier')]);
      expect(ops.size).toBeGreaterThanOrEqual(4); // so that the checks below run
      const inputs = [parent.input];
      if (ops.has('raise-constant'))
        expect(literals(directedMutate(rng(), parent, 'raise-constant').program)).toBeGreaterThan(
          literals(parent.program),
        );
      if (ops.has('lower-constant'))
        expect(literals(directedMutate(rng(), parent, 'lower-constant').program)).toBeLessThan(
          literals(parent.program),
        );
      if (ops.has('grow-node'))
        expect(nodes(directedMutate(rng(), parent, 'grow-node').program)).toBe(nodes(parent.program) + 1);
      if (ops.has('prune-node'))
        expect(nodes(directedMutate(rng(), parent, 'prune-node').program)).toBe(nodes(parent.program) - 1);
      if (ops.has('widen-inputs'))
        expect(magnitude(directedMutate(rng(), parent, 'widen-inputs').inputs)).toBeGreaterThan(magnitude(inputs));
      if (ops.has('narrow-inputs'))
        expect(magnitude(directedMutate(rng(), parent, 'narrow-inputs').inputs)).toBeLessThan(magnitude(inputs));
    }
  });

  it('refuses an operator that cannot change the task, in one line', async () => {
    const parent = await draw('logic', 0, 3);
    expect(directedOps(parent, 'harder')).not.toContain('raise-constant');
    expect(() => directedMutate(createRng(1), parent, 'raise-constant')).toThrow(/does not apply/);
  });
});

describe('crossover', () => {
  it('makes sound, self-labelled children of two tasks that never equal a held-out task (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('arith', 'logic'),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 0, max: 1e6 }),
        async (family, level, seed) => {
          const [a, b] = [await draw(family, level, seed), await draw(family, level, seed + 1)];
          let draft;
          try {
            draft = crossover(createRng(seed), a, b);
          } catch (e) {
            expect((e as Error).message).toMatch(/^crossover: no expression|no level of/);
            return;
          }
          expect(draft.parent).toEqual({ id: a.id, op: 'crossover', mate: b.id });
          const label = labelProgram(family, draft.program, draft.inputs);
          expect([draft.level, draft.skills]).toEqual([label.level, label.skills]);
          const res = await materialise(sandbox, draft, new Set());
          if (!res.ok) return;
          const again = await materialise(sandbox, draft, new Set([res.task.id]));
          expect(again.ok ? 'admitted' : again.reason).toBe('duplicate');
        },
      ),
      { numRuns: 40, seed: 7 },
    );
  });

  it("puts one of b's expressions into a, reading only a's parameters, and records both parents", async () => {
    let made = 0;
    for (let seed = 0; seed < 20; seed++) {
      const a = await draw('arith', 2, seed);
      const b = await draw('arith', 2, seed + 100);
      let draft;
      try {
        draft = crossover(createRng(seed), a, b);
      } catch (e) {
        expect((e as Error).message).toMatch(/crossover|no level of/);
        continue;
      }
      made++;
      expect(draft.parent).toEqual({ id: a.id, op: 'crossover', mate: b.id });
      expect(draft.program).not.toBe(a.program);
      expect(draft.inputs).toEqual([a.input]);
      const label = labelProgram('arith', draft.program, draft.inputs);
      expect(draft.level).toBe(label.level);
    }
    expect(made).toBeGreaterThan(10);
    const [logic, arith] = [await draw('logic', 1, 1), await draw('arith', 1, 1)];
    expect(() => crossover(createRng(1), logic, arith)).toThrow(/not of one family/);
  });
});
