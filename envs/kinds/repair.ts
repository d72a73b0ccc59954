// repair: a program with a bug planted by a mutation operator (the original is the reference). The
// agent sees the buggy program and visible tests, runs candidates against them, and submits a fix;
// the reward is the share of hidden tests it passes.
import { z } from 'zod';
import type { Rng } from '../../core/rng.js';
import type { InductionTask } from '../../core/task.js';
import { applicableOps, mutate } from '../../generators/index.js';
import type { RepairSpec } from '../types.js';
import {
  action,
  clip,
  exampleText,
  isHostile,
  programArg,
  programShapeError,
  resultText,
  runAll,
  scoreProgram,
  submitOutcome,
  taskBase,
  type KindImpl,
} from './common.js';
import { deepEqual, normaliseProgram } from '../../sandbox/index.js';

/** The bug-planting operators: they change behaviour in place (wrap and change-input do not plant a bug). */
export const BUG_OPS = ['swap-operator', 'perturb-constant'] as const;

/** A random edit of the buggy program, the random policy's candidate (sometimes it is the fix). */
function randomEdit(spec: RepairSpec, rng: Rng): string {
  const task: InductionTask = {
    ...taskBase(spec),
    type: 'induction',
    program: spec.buggy,
    visible: spec.visible,
    hidden: [],
    message: '',
  };
  try {
    return mutate(rng, task, rng.pick(BUG_OPS)).program;
  } catch {
    return spec.buggy;
  }
}

export const repair: KindImpl<RepairSpec> = {
  kind: 'repair',
  source: 'induction',
  tools: [
    {
      name: 'run_tests',
      description:
        'Run a candidate program on the visible tests and see which pass. Each run uses one of the call budget.',
      args: z.object({ program: programArg }),
    },
    {
      name: 'submit',
      description: 'Submit the repaired program; it is checked on hidden tests and the episode ends.',
      args: z.object({ program: programArg }),
    },
  ],
  budgets: (level) => ({ calls: 3 + level, turns: 4 + level }),
  async build(sandbox, task, base, rng) {
    if (task.type !== 'induction') return 'repair is built from an induction task';
    const ops = applicableOps(task).filter((op): op is (typeof BUG_OPS)[number] =>
      (BUG_OPS as readonly string[]).includes(op),
    );
    if (ops.length === 0) return 'no bug operator applies (no integer literal, no operator with a sibling)';
    const bug = rng.pick(ops);
    let buggy: string;
    try {
      buggy = mutate(rng, task, bug).program;
    } catch (e) {
      return `${bug} does not apply: ${(e as Error).message}`;
    }
    // The bug must show: it fails a visible test (so run_tests reveals it) and a hidden one (so
    // submitting the buggy program unchanged does not pass).
    const failures = async (tests: InductionTask['visible']) => {
      const rs = await runAll(
        sandbox,
        buggy,
        tests.map((e) => e.input),
        base.stepBudget,
      );
      return rs.map((r, i) => (r.ok && deepEqual(r.value, tests[i]!.output) ? null : resultText(r)));
    };
    const got = await failures(task.visible);
    if (got.every((g) => g === null)) return `the ${bug} bug passes every visible test`;
    if ((await failures(task.hidden)).every((g) => g === null)) return `the ${bug} bug passes every hidden test`;
    return {
      spec: { ...base, kind: 'repair', buggy, bug, visible: task.visible, got, tests: task.hidden },
      question: buggy,
    };
  },
  prompt: (spec) =>
    [
      `This JavaScript function has a bug (family ${spec.family}, level ${spec.level}):`,
      spec.buggy,
      `It should pass these tests:`,
      ...spec.visible.map(
        (e, i) => `  ${exampleText(e)}${spec.got?.[i] == null ? '' : `, but it returns ${spec.got[i]}`}`,
      ),
      `Run candidate fixes with run_tests (at most ${spec.budgets.calls} runs), then submit the repaired program; it is checked on ${spec.tests.length} hidden tests.`,
    ].join('\n'),
  check: (_spec, _name, args) => programShapeError(args.program as string),
  async act(sandbox, spec, name, args) {
    const program = args.program as string;
    if (name === 'submit') return submitOutcome(await scoreProgram(sandbox, spec, spec.tests, program));
    const n = normaliseProgram(program);
    if (!n.ok) return { end: true, reward: 0, reason: `malformed: ${n.reason}`, text: n.reason };
    const results = await runAll(
      sandbox,
      n.program,
      spec.visible.map((e) => e.input),
      spec.stepBudget,
    );
    const limit = results.find((r) => !r.ok && isHostile(r.reason));
    if (limit && !limit.ok)
      return {
        end: true,
        reward: 0,
        reason: `hostile: the tested program hit a limit (${limit.reason})`,
        text: `rejected: ${clip(limit.detail, 160)}`,
      };
    const lines = results.map((r, i) => {
      const e = spec.visible[i]!;
      const pass = r.ok && deepEqual(r.value, e.output);
      return `test ${i + 1}: ${pass ? 'pass' : 'FAIL'} ${exampleText(e)}${pass ? '' : `, got ${resultText(r)}`}`;
    });
    const passed = lines.filter((l) => / pass /.test(l)).length;
    return { text: clip([`${passed} of ${results.length} visible tests pass`, ...lines].join('\n')) };
  },
  reference: (spec) => [action('run_tests', { program: spec.program }), action('submit', { program: spec.program })],
  random: (spec, rng, callsLeft) =>
    action(callsLeft > 0 && rng.bool(0.75) ? 'run_tests' : 'submit', { program: randomEdit(spec, rng) }),
};
