// The built-in solver plays agentic environments (docs/DESIGN.md, "Environments"): where the
// environment room (envs/) and the solver (src/solver/) meet. The solver reads a compact first
// prompt (the same information as the environment's prompt, in the compact rendering it reads tasks
// in), writes actions in its action language (episodes.ts: `call([3])`, `submit(a=>a+1)`,
// `run_tests(...)`), each turned into the environment's tool call here; the environment's tool
// results are appended in a compact rendering (solverObservation), the trajectory keeping the
// environment's own text. Multi-turn GRPO trains it on groups of episodes of the same environment,
// rewarded at the end.
import { createRng } from '../../core/rng.js';
import type { Json } from '../../core/task.js';
import { Env, type EnvAction, type EnvSpec, type Trajectory } from '../../envs/index.js';
import { compactProgram, tokenize } from '../../generators/index.js';
import type { Sandbox } from '../../sandbox/index.js';
import {
  parseAction,
  turnContext,
  type ActionTool,
  type EpisodeRows,
  type TrainablePolicy,
  type Turn,
} from '../solver/index.js';

const ascii = (s: string): string =>
  s.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
const args = (xs: Json[]): string => xs.map((x) => JSON.stringify(x)).join(',');

/**
 * The tools as the solver writes them after the turns played so far: argument lists as typed
 * literals (f's argument types), programs as program text. Once the calls are spent, or on the last
 * turn, submit alone: a call then would end the episode over budget, and the solver writes valid
 * actions only, as the random valid-action policy does (every turn so far was a call: a submit ends
 * the episode). A candidate program already run, or an argument list already called, is not
 * offered again: the episode is deterministic, so its result is already in the transcript.
 */
export function solverTools(spec: EnvSpec, turns: readonly Turn[] = []): ActionTool[] {
  const all = toolsAt(spec);
  if (turns.length >= Math.min(spec.budgets.calls, spec.budgets.turns - 1))
    return all.filter((t) => t.name === 'submit');
  const run = turns.flatMap((t) => parseAction(all, t.action)?.arg ?? []);
  // a tool whose every candidate was run is refused whole (the grammar finds no completion)
  return all.map((t) => (t.name === 'submit' || run.length === 0 ? t : { ...t, except: run }));
}

function toolsAt(spec: EnvSpec): ActionTool[] {
  const list = `[${spec.argTypes.join(',')}]`;
  switch (spec.kind) {
    case 'probe':
      return [
        { name: 'call', arg: list },
        { name: 'submit', arg: 'program' },
      ];
    case 'search':
      return [
        { name: 'call', arg: list },
        { name: 'submit', arg: list },
      ];
    case 'repair': {
      const oneOf = oneTokenEdits(compactProgram(spec.buggy));
      return [
        { name: 'run_tests', arg: 'program', oneOf },
        { name: 'submit', arg: 'program', oneOf },
      ];
    }
  }
}

/** Binary operators a one-token edit may put in place of another (a wider set than the bug operators' siblings). */
const EDIT_OPERATORS = ['+', '-', '*', '/', '%', '<', '<=', '>', '>=', '===', '!==', '&&', '||'];

/**
 * Repair's programs as the solver writes them: the shown program with one token changed (a binary
 * operator into another of EDIT_OPERATORS, an integer literal moved by 1 to 3), so that writing a
 * candidate fix is choosing an edit and copying the rest, as the random valid-action policy's
 * candidates are random edits. The environment still receives, runs and verifies the whole program.
 */
export function oneTokenEdits(program: string): string[] {
  const out = new Set<string>();
  for (const t of tokenize(program)) {
    const put = (text: string) => out.add(program.slice(0, t.at) + text + program.slice(t.at + t.text.length));
    if (EDIT_OPERATORS.includes(t.text)) for (const op of EDIT_OPERATORS) if (op !== t.text) put(op);
    if (t.kind === 'num' && /^\d+$/.test(t.text))
      for (const d of [-3, -2, -1, 1, 2, 3]) if (Number(t.text) + d >= 0) put(String(Number(t.text) + d));
  }
  out.delete(program);
  return [...out].sort();
}

/**
 * The first prompt in the compact rendering (generators/render.ts): a one-letter kind, the program
 * or what is shown of it (probe: f's family and level, and its argument types), `@`, the target or examples as `in>out` (repair's failing ones as
 * `in>out!got`). Episode `seed` picks probe's shown example as the environment's own prompt does.
 */
export function solverPrompt(spec: EnvSpec, seed: number): string {
  switch (spec.kind) {
    case 'search':
      return ascii(`S:${compactProgram(spec.program)}@${JSON.stringify(spec.target)}`);
    case 'probe': {
      const shown = spec.tests[Math.abs(Math.trunc(seed)) % spec.tests.length]!;
      // the family and level, as the environment's prompt names them: they say which programs f is among
      return ascii(
        `P:${spec.family}/${spec.level}:${spec.argTypes.join(',')}@${args(shown.input)}>${JSON.stringify(shown.output)}`,
      );
    }
    case 'repair': // a failing test as `in>expected!got`, as the environment reports it
      return ascii(
        `R:${compactProgram(spec.buggy)}@${spec.visible.map((e, i) => `${args(e.input)}>${JSON.stringify(e.output)}${spec.got?.[i] == null ? '' : `!${spec.got[i]}`}`).join(';')}`,
      );
  }
}

/**
 * A tool result as the solver reads it, compact as its first prompt is, so that a transcript of
 * several calls fits its context: a call's `f(x) = y` becomes `=y`; a test run's report becomes one
 * mark per visible test in the prompt's order, `+` for a pass and `!got` for a failure (the prompt's
 * own notation). Other text (what ends an episode, which no later turn reads) stays as it is.
 */
export function solverObservation(text: string): string {
  const lines = text.split('\n');
  if (/^\d+ of \d+ visible tests pass$/.test(lines[0]!)) {
    return ascii(
      lines
        .slice(1)
        .map((l) => (/^test \d+: pass /.test(l) ? '+' : `!${l.slice(l.lastIndexOf(', got ') + 6)}`))
        .join(';'),
    );
  }
  const call = /^f\(.*?\) = ([\s\S]*)$/.exec(text);
  return ascii(call ? `=${call[1]}` : text);
}

/** The environment's action for an action the solver wrote (text outside the language: an unknown tool, which ends the episode as malformed). */
export function toEnvAction(spec: EnvSpec, text: string): EnvAction {
  const a = parseAction(toolsAt(spec), text);
  if (!a) return { name: text.slice(0, 40), arguments: '{}' };
  if (a.tool === 'submit' && spec.kind !== 'search')
    return { name: 'submit', arguments: JSON.stringify({ program: a.arg }) };
  if (a.tool === 'run_tests') return { name: 'run_tests', arguments: JSON.stringify({ program: a.arg }) };
  // an argument list, written as a JSON literal: it goes into the arguments' JSON as it is
  return { name: a.tool, arguments: `{"${spec.kind === 'probe' ? 'args' : 'x'}":${a.arg}}` };
}

/** A played episode: the rows the update trains on, and the environment's trajectory. */
export interface SolverEpisode extends EpisodeRows {
  trajectory: Trajectory;
  turns: Turn[];
}

/** What plays an episode: the built-in solver, or (bench:agentic-clone) a peer model that decodes actions alone. */
export type Actor = Pick<TrainablePolicy, 'decodeActions'>;

/**
 * Plays `group` episodes of each spec together (one batched decode per turn over every episode still
 * running), greedy or sampled. Episode seeds are `seed` (probe's shown example); the policy's own
 * random stream draws the actions, so a fixed policy seed replays the same episodes.
 */
export async function playSolver(
  policy: Actor,
  sandbox: Sandbox,
  specs: EnvSpec[],
  group: number,
  o: { greedy: boolean; seed?: number },
): Promise<SolverEpisode[][]> {
  const seed = o.seed ?? 0;
  const eps = specs.map((spec) =>
    Array.from({ length: group }, () => {
      const env = new Env(spec, sandbox);
      env.reset(seed);
      return { spec, env, prompt: solverPrompt(spec, seed), rows: [] as EpisodeRows['rows'], turns: [] as Turn[] };
    }),
  );
  for (;;) {
    const live = eps.flat().filter((e) => !e.env.done);
    if (live.length === 0) break;
    const rows = await policy.decodeActions(
      live.map((e) => ({ text: turnContext(e.prompt, e.turns), tools: solverTools(e.spec, e.turns) })),
      o.greedy,
    );
    for (const [i, e] of live.entries()) {
      const row = rows[i]!;
      const r = await e.env.step(toEnvAction(e.spec, row.text));
      e.rows.push(row);
      e.turns.push({ action: row.text, observation: solverObservation(r.observation) });
    }
  }
  return eps.map((g) =>
    g.map((e) => {
      const trajectory = e.env.trajectory();
      return { rows: e.rows, reward: trajectory.reward, trajectory, turns: e.turns };
    }),
  );
}

export interface AgenticTrainOptions {
  steps: number;
  /** environments per update, drawn from the pool */
  envsPerStep: number;
  /** episodes per environment (the GRPO group) */
  group: number;
  seed: number;
  onStep?: (s: { step: number; reward: number; success: number; loss: number; groups: number; ms: number }) => void;
}

/** Multi-turn GRPO on a pool of environments: each step plays groups of episodes and updates once. */
export async function trainAgentic(
  policy: TrainablePolicy,
  sandbox: Sandbox,
  pool: EnvSpec[],
  o: AgenticTrainOptions,
): Promise<void> {
  const rng = createRng(`agentic/${o.seed}`);
  for (let step = 0; step < o.steps; step++) {
    const t0 = performance.now();
    const specs = Array.from({ length: o.envsPerStep }, () => rng.pick(pool));
    const groups = await playSolver(policy, sandbox, specs, o.group, { greedy: false, seed: rng.int(0, 1000) });
    const stats = await policy.updateEpisodes(groups, policy.cfg.sampling.temperature);
    const flat = groups.flat();
    o.onStep?.({
      step,
      reward: stats.reward ?? 0,
      success: flat.filter((e) => e.reward === 1).length / flat.length,
      loss: stats.loss,
      groups: stats.groups,
      ms: performance.now() - t0,
    });
  }
}

/**
 * Success rate (reward 1), mean reward and the episodes played: of the greedy policy, one episode per spec, or with
 * `samples` of the sampled policy (the one GRPO trains; greedy decoding is one reading of it), that
 * many episodes per spec.
 */
export async function evaluateSolver(
  policy: Actor,
  sandbox: Sandbox,
  specs: EnvSpec[],
  o: { samples?: number } = {},
): Promise<{ success: number; meanReward: number; endings: Record<string, number>; episodes: SolverEpisode[] }> {
  const eps = (await playSolver(policy, sandbox, specs, o.samples ?? 1, { greedy: !o.samples })).flat();
  const endings: Record<string, number> = {};
  for (const e of eps) {
    const end = e.reward === 1 ? 'solved' : (e.trajectory.reason ?? 'wrong').split(':')[0]!;
    endings[end] = (endings[end] ?? 0) + 1;
  }
  return {
    success: eps.filter((e) => e.reward === 1).length / eps.length,
    meanReward: eps.reduce((a, e) => a + e.reward, 0) / eps.length,
    endings,
    episodes: eps,
  };
}
