// An episode of an environment: reset(seed) gives the first prompt and the tools, step(action) runs
// one tool call. Every way an action can go wrong ends the episode with reward 0 and a reason: an
// unknown tool, arguments that are not JSON or do not fit the schema or f's types, more calls or
// turns than the budget, a program that hits a sandbox limit (loops, floods output, recursion,
// memory). Nothing an episode does outlives it: every program runs in a fresh sandbox context.
import type { Sandbox } from '../sandbox/index.js';
import { KINDS } from './kinds/index.js';
import { clip, toolSchema, type KindImpl } from './kinds/common.js';
import type { EnvAction, EnvObservation, EnvSpec, StepResult, ToolSchema, Trajectory } from './types.js';

export const kindOf = (spec: EnvSpec): KindImpl => KINDS[spec.kind] as KindImpl;

/** The tools of an environment kind, in the OpenAI function-calling shape. */
export const toolsOf = (spec: EnvSpec): ToolSchema[] => kindOf(spec).tools.map(toolSchema);

export class Env {
  private traj: Trajectory | null = null;
  private calls = 0;

  constructor(
    readonly spec: EnvSpec,
    private readonly sandbox: Sandbox,
  ) {}

  /** Starts (or restarts) an episode. */
  reset(seed = 0): EnvObservation {
    const obs = { text: kindOf(this.spec).prompt(this.spec, seed), tools: toolsOf(this.spec) };
    const s = this.spec;
    this.traj = {
      envId: s.id,
      kind: s.kind,
      family: s.family,
      level: s.level,
      seed,
      prompt: obs.text,
      tools: obs.tools,
      steps: [],
      reward: 0,
      done: false,
    };
    this.calls = 0;
    return obs;
  }

  get done(): boolean {
    return this.traj?.done ?? false;
  }

  /** The episode so far (a copy). */
  trajectory(): Trajectory {
    if (!this.traj) throw new Error('no episode: call reset first');
    return structuredClone(this.traj);
  }

  async step(action: EnvAction): Promise<StepResult> {
    const t = this.traj;
    if (!t) throw new Error('step before reset: call reset first');
    const budgets = this.spec.budgets;
    if (t.done)
      return {
        observation: 'the episode is over',
        reward: t.reward,
        done: true,
        info: { turn: t.steps.length, callsLeft: budgets.calls - this.calls, reason: t.reason },
      };
    const kind = kindOf(this.spec);
    const name = typeof action?.name === 'string' ? action.name : '';
    const raw = typeof action?.arguments === 'string' ? action.arguments : safeJson(action?.arguments);
    const end = (observation: string, reward: number, reason?: string): StepResult =>
      this.record(name, raw, observation, reward, true, reason);
    if (t.steps.length >= budgets.turns) return end('no turns left', 0, `budget: more than ${budgets.turns} turns`);
    const tool = kind.tools.find((x) => x.name === name);
    if (!tool)
      return end(
        `unknown tool ${clip(JSON.stringify(name), 60)}`,
        0,
        `malformed: unknown tool ${clip(JSON.stringify(name), 60)} (tools: ${kind.tools.map((x) => x.name).join(', ')})`,
      );
    let args: unknown;
    try {
      args = typeof action.arguments === 'string' ? JSON.parse(action.arguments) : action.arguments;
    } catch (e) {
      return end(
        'the arguments are not JSON',
        0,
        `malformed: arguments are not JSON (${clip((e as Error).message, 100)})`,
      );
    }
    const parsed = tool.args.safeParse(args);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      return end(
        'the arguments do not fit the tool',
        0,
        `malformed: ${name}.${issue.path.join('.') || '(arguments)'}: ${issue.message}`,
      );
    }
    const bad = kind.check(this.spec, name, parsed.data);
    if (bad) return end('the arguments do not fit f', 0, `malformed: ${name}: ${bad}`);
    if (name !== 'submit') {
      if (this.calls >= budgets.calls) return end('no calls left', 0, `budget: more than ${budgets.calls} calls`);
      this.calls++;
    }
    const out = await kind.act(this.sandbox, this.spec, name, parsed.data);
    return out.end ? end(out.text, out.reward, out.reason) : this.record(name, raw, out.text, 0, false);
  }

  private record(
    name: string,
    args: string,
    observation: string,
    reward: number,
    done: boolean,
    reason?: string,
  ): StepResult {
    const t = this.traj!;
    t.steps.push({
      action: { name, arguments: args },
      observation,
      reward,
      done,
      ...(reason === undefined ? {} : { reason }),
    });
    if (done) {
      t.done = true;
      t.reward = reward;
      if (reason !== undefined) t.reason = reason;
    }
    const info = {
      turn: t.steps.length,
      callsLeft: this.spec.budgets.calls - this.calls,
      ...(reason === undefined ? {} : { reason }),
    };
    return { observation, reward, done, info };
  }
}

function safeJson(x: unknown): string {
  try {
    return JSON.stringify(x) ?? 'null';
  } catch {
    return '"(arguments that are not JSON)"';
  }
}
