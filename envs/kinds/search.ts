// search: find an argument list x with f(...x) = y for a visible f (an abduction task's program and
// output). The agent may call f; it submits x, checked by the abduction verifier.
import { z } from 'zod';
import type { AbductionTask, Json } from '../../core/task.js';
import { verifyAnswer } from '../../sandbox/index.js';
import type { SearchSpec } from '../types.js';
import {
  action,
  argList,
  callHidden,
  callText,
  checkArgList,
  clip,
  isHostile,
  randomArgs,
  resultText,
  taskBase,
  type KindImpl,
} from './common.js';

export const search: KindImpl<SearchSpec> = {
  kind: 'search',
  source: 'abduction',
  tools: [
    {
      name: 'call',
      description: 'Call f on an argument list and see what it returns. Each call uses one of the call budget.',
      args: z.object({ x: argList }),
    },
    {
      name: 'submit',
      description: 'Submit an argument list x with f(...x) equal to the target; the episode ends.',
      args: z.object({ x: argList }),
    },
  ],
  budgets: (level) => ({ calls: 8 + 4 * level, turns: 9 + 4 * level }),
  async build(_sandbox, task, base) {
    if (task.type !== 'abduction') return 'search is built from an abduction task';
    return {
      spec: { ...base, kind: 'search', target: task.output, answer: task.input },
      question: JSON.stringify(task.output),
    };
  },
  prompt: (spec) =>
    [
      `Find an argument list x (${spec.argTypes.length} argument(s) of type ${spec.argTypes.join(', ')}) such that f(...x) returns ${clip(JSON.stringify(spec.target), 200)}, where`,
      spec.program,
      `You may call f (at most ${spec.budgets.calls} calls), then submit x.`,
    ].join('\n'),
  check: (spec, _name, args) => checkArgList(spec.argTypes, args.x),
  async act(sandbox, spec, name, args) {
    const x = args.x as Json[];
    if (name === 'call') return { text: `${callText(x)} = ${resultText(await callHidden(sandbox, spec, x))}` };
    const task: AbductionTask = {
      ...taskBase(spec),
      type: 'abduction',
      input: spec.answer,
      output: spec.target,
    };
    const v = await verifyAnswer(sandbox, task, JSON.stringify(x));
    if (v.reward === 1) return { end: true, reward: 1, text: `${callText(x)} gives the target` };
    const reason = isHostile(v.reason)
      ? `hostile: the argument list hit a limit (${v.reason})`
      : clip(v.reason ?? 'wrong', 200);
    return { end: true, reward: 0, reason, text: `${callText(x)} does not give the target` };
  },
  reference: (spec) => [action('call', { x: spec.answer }), action('submit', { x: spec.answer })],
  random: (spec, rng, callsLeft) =>
    action(callsLeft > 0 && rng.bool(0.8) ? 'call' : 'submit', { x: randomArgs(rng, spec.argTypes) }),
};
