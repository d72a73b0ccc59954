// Generators against the real sandbox: every family × level × task type validates, the reference
// answer verifies, a perturbed wrong answer does not, the sandbox agrees with the generators'
// reference interpreter, generateTask is deterministic by seed, and materialise's rejections.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createRng } from '../core/rng.js';
import { referenceAnswer, CODE_TASK_TYPES, type CodeTask, type Json, type Task, type TaskDraft } from '../core/task.js';
import { createSandbox, type Sandbox } from '../sandbox/index.js';
import { verifyAnswer } from '../sandbox/testing.js';
import { propose, TaskArchive } from '../src/run/index.js';
import { drawReference, families, generateTask, materialise, mutate, REJECT_REASONS } from '../generators/index.js';

let sb: Sandbox;
beforeAll(async () => {
  sb = await createSandbox({ workers: 2 });
});
afterAll(async () => {
  await sb?.close();
});

const cells = families.flatMap((f) => Array.from({ length: f.levels }, (_, level) => ({ family: f.id, level })));

function wrongLiteral(x: Json): Json {
  if (typeof x === 'number') return x + 1;
  if (typeof x === 'boolean') return !x;
  if (typeof x === 'string') return x + 'x';
  if (Array.isArray(x)) return [...x, 0];
  if (x === null) return 0;
  return { ...x, zz: 1 };
}

async function wrongAnswer(task: Task): Promise<string | null> {
  if (task.type === 'deduction') return JSON.stringify(wrongLiteral(task.output));
  if (task.type === 'induction') return `() => ${JSON.stringify(task.visible[0]!.output)}`;
  if (task.type !== 'abduction') return null;
  // Abduction: a nudged argument list whose output really differs (none may exist nearby).
  for (let i = 0; i < task.input.length; i++) {
    const args = task.input.map((a, j) => (j === i ? wrongLiteral(a) : a));
    const r = await sb.run(task.program, args);
    if (r.ok && JSON.stringify(r.value) !== JSON.stringify(task.output)) return JSON.stringify(args);
  }
  return null;
}

describe('generated tasks in the sandbox', () => {
  it.each(cells)(
    '$family level $level: validates, reference verifies, wrong answer fails, matches the interpreter',
    async ({ family, level }) => {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 0, max: 2 ** 31 }), async (seed) => {
          for (const type of CODE_TASK_TYPES) {
            const task = await generateTask(sb, { family, level, type, rng: createRng(seed) });
            expect(task).toMatchObject({ family, level, type, proposer: 'generator', parent: null });
            expect((await verifyAnswer(sb, task, referenceAnswer(task))).reward).toBe(1);
            const wrong = await wrongAnswer(task);
            if (wrong !== null) expect((await verifyAnswer(sb, task, wrong)).reward, wrong).toBe(0);
            // The generators' reference interpreter and QuickJS agree on the first draft of this seed.
            const ref = drawReference(family, createRng(seed), level, type);
            const m = await materialise(sb, ref.draft);
            expect(m.ok, JSON.stringify(m)).toBe(true);
            if (m.ok) {
              const t = m.task as CodeTask;
              const outs = t.type === 'induction' ? [...t.visible, ...t.hidden].map((e) => e.output) : [t.output];
              expect(outs).toEqual(ref.outputs);
            }
          }
          const again = await generateTask(sb, { family, level, type: 'deduction', rng: createRng(seed) });
          const first = await generateTask(sb, { family, level, type: 'deduction', rng: createRng(seed) });
          expect(again).toEqual(first);
        }),
        { numRuns: 2 },
      );
    },
  );

  it('mutated drafts keep their lineage through materialise', async () => {
    const rng = createRng('mutants');
    let accepted = 0;
    for (const f of families) {
      const task = await generateTask(sb, { family: f.id, level: 1, type: 'deduction', rng });
      const d = mutate(rng, task);
      const m = await materialise(sb, d);
      if (m.ok) {
        accepted++;
        expect(m.task.parent).toEqual({ id: task.id, op: d.parent!.op });
        expect(m.task.proposer).toBe('mutation');
      } else expect(REJECT_REASONS).toContain(m.reason);
    }
    expect(accepted).toBeGreaterThan(families.length / 2);
  });
});

describe('materialise rejections', () => {
  const base: TaskDraft = {
    type: 'deduction',
    family: 'arith',
    level: 0,
    skills: ['arith.add'],
    program: 'function f(a) { return a + 1; }',
    inputs: [[1]],
  };
  const reason = async (d: Partial<TaskDraft>, seen?: Set<string>): Promise<string> => {
    const m = await materialise(sb, { ...base, ...d } as TaskDraft, seen);
    return m.ok ? 'ok' : m.reason;
  };
  it('names the reason from a closed set', async () => {
    expect(await reason({})).toBe('ok');
    expect(await reason({ program: 'const g = 1;' })).toBe('invalid');
    expect(await reason({ inputs: [[1], [2]] })).toBe('invalid');
    expect(await reason({ program: 'function f(a) { return a +; }' })).toBe('error');
    expect(await reason({ program: 'function f(a) { throw new Error("x"); }' })).toBe('error');
    expect(await reason({ program: 'function f(a) { while (true) {} }' })).toBe('timeout');
    expect(await reason({ program: 'function f(a) { return a / 0; }' })).toBe('non-serialisable');
    expect(
      await reason({
        type: 'induction',
        program: 'function f(a) { return 3; }',
        inputs: [[1], [2], [3]],
        visibleCount: 2,
        message: 'm',
      }),
    ).toBe('trivial');
    expect(await reason({ type: 'induction', inputs: [[1], [1], [3]], visibleCount: 2, message: 'm' })).toBe('trivial');
    const seen = new Set<string>();
    expect(await reason({}, seen)).toBe('ok');
    expect(await reason({ program: 'function f(x) {\n  return x + 1;\n}' }, seen)).toBe('duplicate');
    expect(await reason({ inputs: [[2]] }, seen)).toBe('ok');
  });
  it('refuses a deduction already seen without running it; other seen types still run', async () => {
    const closed = await createSandbox({ workers: 1 });
    await closed.close(); // any run on it fails with reason 'sandbox'
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...cells),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.constantFrom(...CODE_TASK_TYPES),
        async ({ family, level }, seed, type) => {
          const { draft } = drawReference(family, createRng(seed), level, type);
          const seen = new Set<string>();
          expect((await materialise(sb, draft, seen)).ok).toBe(true);
          const again = await materialise(closed, draft, seen);
          expect(again.ok ? 'ok' : again.reason).toBe(type === 'deduction' ? 'duplicate' : 'sandbox');
          // unseen, the same draft must run, and the closed sandbox refuses it
          expect(await materialise(closed, draft, new Set())).toMatchObject({ ok: false, reason: 'sandbox' });
        },
      ),
      { numRuns: 40 },
    );
  });
  it('generateTask passes over drafts made only of the skills to avoid, and still gives one where nothing else is left', async () => {
    // arith level 0 holds add, sub and mul tasks, each of one skill: avoiding two leaves the third.
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 2 ** 31 - 1 }), async (seed) => {
        const arm = { family: 'arith', level: 0, type: 'deduction' as const };
        const avoid = new Set(['arith.add', 'arith.sub']);
        const task = await generateTask(sb, { ...arm, rng: createRng(seed), avoid });
        expect(task.skills.some((s) => !avoid.has(s))).toBe(true);
        const again = await generateTask(sb, { ...arm, rng: createRng(seed), avoid });
        expect(again.id).toBe(task.id);
        const all = new Set(['arith.add', 'arith.sub', 'arith.mul']);
        expect((await generateTask(sb, { ...arm, rng: createRng(seed), avoid: all })).skills.length).toBeGreaterThan(0);
      }),
      { numRuns: 20 },
    );
  });
  it('an exhausted arm replays an archived task not made only of the skills to avoid, where it has one', async () => {
    const arm = { family: 'arith', level: 0, type: 'deduction' as const };
    const archive = new TaskArchive();
    for (let i = 0; archive.size < 12; i++) {
      const t = await generateTask(sb, { ...arm, rng: createRng(`archive/${i}`) });
      archive.set(t.id, t);
    }
    const skillsOf = [...archive.values()].flatMap((t) => t.skills);
    expect(skillsOf).toContain('arith.mul');
    // A seen set that has seen everything: every fresh draft is a duplicate, as in an exhausted arm.
    const everything = new (class extends Set<string> {
      override has(): boolean {
        return true;
      }
    })();
    const ctx = {
      step: 1,
      sandbox: sb,
      seen: everything,
      archive,
      probeIds: new Set<string>(),
      proposer: null,
      skills: [],
    };
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 2 ** 31 - 1 }), async (seed) => {
        const pick = { kind: 'new' as const, arm, avoid: ['arith.add', 'arith.sub'] };
        const task = await propose(ctx, pick, createRng(seed), []);
        expect(archive.has(task.id)).toBe(true);
        expect(task.skills).toContain('arith.mul');
      }),
      { numRuns: 10 },
    );
  });
  it('generateTask gives a clear error when no draft is accepted', async () => {
    const seen = new Set<string>();
    // logic level 0 holds under 200 distinct abduction tasks (about 95 programs, 2 outputs each): the seen set exhausts them.
    await expect(async () => {
      for (let i = 0; i < 200; i++)
        await generateTask(sb, { family: 'logic', level: 0, type: 'abduction', rng: createRng(i), seen, attempts: 5 });
    }).rejects.toThrow(/no abduction task for family 'logic' at level 0 after 5 drafts \(duplicate/);
  });
});
