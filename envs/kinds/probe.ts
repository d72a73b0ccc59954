// probe: a hidden f (an induction task's program). The agent calls f to learn what it does, then
// submits a program; the reward is the share of hidden tests it passes (1 only when all pass).
import { z } from 'zod';
import { valueType, type Json } from '../../core/task.js';
import type { ProbeSpec } from '../types.js';
import {
  action,
  argList,
  callHidden,
  callText,
  checkArgList,
  exampleText,
  programArg,
  randomArgs,
  randomValue,
  resultText,
  scoreProgram,
  submitOutcome,
  type KindImpl,
} from './common.js';

export const probe: KindImpl<ProbeSpec> = {
  kind: 'probe',
  source: 'induction',
  tools: [
    {
      name: 'call',
      description:
        'Call the hidden function f on an argument list and see what it returns. Each call uses one of the call budget.',
      args: z.object({ args: argList }),
    },
    {
      name: 'submit',
      description: 'Submit a program for f; it is checked on hidden tests and the episode ends.',
      args: z.object({ program: programArg }),
    },
  ],
  budgets: (level) => ({ calls: 6 + 2 * level, turns: 7 + 2 * level }),
  async build(_sandbox, task, base) {
    if (task.type !== 'induction') return 'probe is built from an induction task';
    const tests = [...task.visible, ...task.hidden];
    return { spec: { ...base, kind: 'probe', tests }, question: JSON.stringify(tests.map((t) => t.input)) };
  },
  prompt(spec, seed) {
    const shown = spec.tests[Math.abs(Math.trunc(seed)) % spec.tests.length]!;
    return [
      `A hidden JavaScript function f (family ${spec.family}, level ${spec.level}) takes ${spec.argTypes.length} argument(s) of type ${spec.argTypes.join(', ')}.`,
      `Find out what it does: call it with the call tool (at most ${spec.budgets.calls} calls), then submit a program that declares function f and behaves the same.`,
      `It is checked on ${spec.tests.length} hidden tests; the reward is the share it passes. One example: ${exampleText(shown)}.`,
    ].join('\n');
  },
  check: (spec, name, args) => (name === 'call' ? checkArgList(spec.argTypes, args.args) : null),
  async act(sandbox, spec, name, args) {
    if (name === 'call') {
      const a = args.args as Json[];
      return { text: `${callText(a)} = ${resultText(await callHidden(sandbox, spec, a))}` };
    }
    return submitOutcome(await scoreProgram(sandbox, spec, spec.tests, args.program as string));
  },
  reference: (spec) => [action('call', { args: spec.tests[0]!.input }), action('submit', { program: spec.program })],
  random(spec, rng, callsLeft) {
    if (callsLeft > 0 && rng.bool(0.8)) return action('call', { args: randomArgs(rng, spec.argTypes) });
    const out = randomValue(rng, valueType(spec.tests[0]!.output));
    const params = spec.argTypes.map((_, i) => `a${i}`).join(', ');
    return action('submit', { program: `function f(${params}) { return ${JSON.stringify(out)}; }` });
  },
};
