// Policies that play an environment without a model: the scripted reference policy (validation, the
// environment's own cost in bench:agentic), a random valid-action policy and constant submissions
// (the floor to beat), and replaying a recorded trajectory (determinism).
import { createRng, type Rng } from '../core/rng.js';
import { valueType, type Json } from '../core/task.js';
import { isSolved } from '../core/rules.js';
import type { Sandbox } from '../sandbox/index.js';
import { Env, kindOf } from './env.js';
import type { EnvAction, EnvObservation, EnvSpec, Trajectory } from './types.js';

/** Chooses the next action from what the episode has shown so far; null stops (the episode stays open). */
export type Policy = (
  obs: EnvObservation,
  history: Trajectory['steps'],
) => EnvAction | null | Promise<EnvAction | null>;

/** Plays one episode from reset(seed) until it ends or the policy stops; the trajectory. */
export async function playEpisode(env: Env, policy: Policy, seed = 0): Promise<Trajectory> {
  const obs = env.reset(seed);
  while (!env.done) {
    const a = await policy(obs, env.trajectory().steps);
    if (!a) break;
    await env.step(a);
  }
  return env.trajectory();
}

/** The reference solution as actions through the environment's own tools, in order. */
export const referenceActions = (spec: EnvSpec): EnvAction[] => kindOf(spec).reference(spec);

/** The scripted reference policy: referenceActions, one per turn. */
export function referencePolicy(spec: EnvSpec): Policy {
  const script = referenceActions(spec);
  return (_obs, history) => script[history.length] ?? null;
}

/** Uniform among valid actions (schema and types hold; it submits once its calls are spent). */
export function randomPolicy(spec: EnvSpec, rng: Rng | number): Policy {
  const r = typeof rng === 'number' ? createRng(rng) : rng;
  const kind = kindOf(spec);
  return (_obs, history) => {
    const calls = history.filter((s) => s.action.name !== 'submit').length;
    return kind.random(spec, r, spec.budgets.calls - calls);
  };
}

/** The constants of each value type the constant submissions write: the k-th submission takes the k-th of each. */
const CONSTANTS: Record<string, Json[]> = {
  int: [0, 1, -1],
  num: [0, 1, -1],
  bool: [false, true, false],
  str: ['', 'a', 'b'],
  arr: [[], [0], [1]],
  null: [null, null, null],
};
export const CONSTANT_SUBMISSIONS = 3;
const constant = (type: string, k: number): Json => CONSTANTS[type]?.[k] ?? {};

/**
 * The k-th constant submission (0 ≤ k < CONSTANT_SUBMISSIONS): one action that ends the episode at
 * once, the same whatever the environment shows. search: each argument the k-th constant of its
 * type; probe: f returning the k-th constant of its output's type; repair: the program as shown.
 * Beside the random valid-action policy, the floor a learned policy must beat: what search's
 * solver once learned was to submit zeros at once (bench/results/agentic.md).
 */
export function constantSubmission(spec: EnvSpec, k: number): EnvAction {
  switch (spec.kind) {
    case 'search':
      return { name: 'submit', arguments: JSON.stringify({ x: spec.argTypes.map((t) => constant(t, k)) }) };
    case 'probe': {
      const out = constant(valueType(spec.tests[0]!.output), k);
      return {
        name: 'submit',
        arguments: JSON.stringify({ program: `function f() { return ${JSON.stringify(out)}; }` }),
      };
    }
    case 'repair':
      return { name: 'submit', arguments: JSON.stringify({ program: spec.buggy }) };
  }
}

/** Whether each constant submission (k = 0 … CONSTANT_SUBMISSIONS − 1) solves the environment: 1 or 0. */
export async function constantSolves(sandbox: Sandbox, spec: EnvSpec): Promise<number[]> {
  const out: number[] = [];
  for (let k = 0; k < CONSTANT_SUBMISSIONS; k++) {
    const env = new Env(spec, sandbox);
    env.reset(0);
    out.push(isSolved((await env.step(constantSubmission(spec, k))).reward) ? 1 : 0);
  }
  return out;
}

/** Replays a recorded trajectory's actions on a fresh episode of the same spec and seed. */
export async function replay(env: Env, recorded: Trajectory): Promise<Trajectory> {
  const actions = recorded.steps.map((s) => s.action);
  return playEpisode(env, (_o, h) => actions[h.length] ?? null, recorded.seed);
}
