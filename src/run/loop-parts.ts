// The parts of one step of the autonomous loop (src/run/loop.ts) that are not the step itself:
// verifying groups of answers, a probe round, checkpoints, and the per-step metrics of the agents,
// the environments and the level frontier.
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isSolved } from '../../core/rules.js';
import type { DetailedVerdict, Sandbox } from '../../sandbox/index.js';
import { answerShape, referenceAnswer, type Skill, type Task } from '../../core/task.js';
import { passAtK, type LlmPolicy, type ProposalRecord } from '../agents/index.js';
import { probeScores, type Probe } from './probes.js';
import { mean } from '../../core/stats.js';
import { scoreEnvProbes, type EnvProbe, type PlayedEnvs } from './env-arms.js';
import { answerTokenIds, type Policy, type PolicyPrompt, type TrainablePolicy } from '../solver/index.js';
import type { RunStore } from './records/store.js';
import { verifyTasks } from './verification.js';

/**
 * A note, once per family × level × type above the tables, where a fresh task's reference answer is
 * longer than the built-in solver's maxAnswerLen, in its answer tokens (docs/solver-view.md), or not
 * writable by its answer grammar: it cannot write it (docs/levels.md). The task is served all the
 * same (a chat-model solver or a trainer has no such limit).
 */
export function solverFit(
  maxAnswerLen: number,
  tabled: ReadonlyMap<string, number>,
  log: (line: string) => void,
): (task: Task) => void {
  const noted = new Set<string>();
  return (task) => {
    const key = `${task.family} level ${task.level} ${task.type}`;
    if (task.level < (tabled.get(task.family) ?? Infinity) || noted.has(key)) return;
    const answer = referenceAnswer(task);
    if (answer.length <= maxAnswerLen) return; // a token is at least one character
    const ids = answerTokenIds(answerShape(task), answer);
    if (ids !== null && ids.length - 1 <= maxAnswerLen) return;
    noted.add(key);
    const what =
      ids === null
        ? 'a reference answer its answer grammar cannot write'
        : `a reference answer of ${ids.length - 1} tokens, past its maxAnswerLen ${maxAnswerLen}`;
    log(`${key}: ${what}: the built-in solver cannot write such answers (solver.model.maxAnswerLen)`);
  };
}

/** What a checkpoint's loop.json holds besides the policy's files. */
export interface Checkpoint {
  step: number;
  rng: [number, number, number, number];
  controller: unknown;
  mastery: unknown;
  /** The learned proposer's preferences and baselines (only when it is on). */
  proposer?: unknown;
  /** The self-play proposer's drafts waiting for a reward (only in self-play). */
  selfPlay?: unknown;
}

/** Verifies G answers per task in one batch; verdicts[g][i] is that of answers[g][i], to tasks[g]. */
export async function verifyGroups(sandbox: Sandbox, tasks: Task[], answers: string[][]): Promise<DetailedVerdict[][]> {
  const flat = await verifyTasks(
    sandbox,
    answers.flatMap((group, g) => group.map((answer) => ({ task: tasks[g]!, answer }))),
  );
  let next = 0;
  return answers.map((group) => group.map(() => flat[next++]!));
}

/**
 * Greedy decoding on the held-out probes, and greedy episodes on the held-out environments (played
 * by the built-in solver, `transformer`): accuracy overall and per skill (with its trivial
 * baseline), and per arm.
 */
export async function runProbes(
  policy: Policy,
  transformer: TrainablePolicy | null,
  sandbox: Sandbox,
  probes: Probe[],
  envProbes: EnvProbe[],
  skills: Skill[],
  ask: (task: Task) => PolicyPrompt,
) {
  const answers = await policy.greedy(probes.map((p) => ask(p.task)));
  const verdicts = await verifyTasks(
    sandbox,
    probes.map((p, i) => ({ task: p.task, answer: answers[i]! })),
  );
  const scores = probeScores(probes, verdicts, skills);
  if (envProbes.length === 0) return scores;
  if (!transformer) throw new Error('held-out environments are played by the built-in solver, not a chat model');
  const env = await scoreEnvProbes(transformer, sandbox, envProbes);
  return {
    ...scores,
    overall: mean([...verdicts.map((v) => (isSolved(v.reward) ? 1 : 0)), ...env.solved]),
    perSkill: new Map([...scores.perSkill, ...env.perSkill]),
    perArm: { ...scores.perArm, ...env.perArm },
  };
}

/** A step's environment episodes in its metrics: how many, their mean reward and solve rate, turns per episode. */
export function envMetrics(played: PlayedEnvs): Record<string, number> {
  const eps = played.groups.flat();
  return {
    'env.episodes': eps.length,
    'env.meanReward': mean(eps.map((e) => e.reward)),
    'env.solveRate': mean(played.results.map((r) => r.solveRate)),
    'env.turns': mean(eps.map((e) => e.turns.length)),
  };
}

export async function checkpoint(
  store: RunStore,
  policy: Policy,
  runId: string,
  step: number,
  state: Checkpoint,
): Promise<void> {
  const id = `step-${String(step).padStart(6, '0')}`;
  const final = join(store.dir, 'checkpoints', id);
  const tmp = `${final}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  await policy.save(tmp);
  writeFileSync(join(tmp, 'loop.json'), JSON.stringify(state));
  rmSync(final, { recursive: true, force: true });
  renameSync(tmp, final);
  const at = new Date().toISOString();
  store.addCheckpoint(id, step, final, at);
  store.appendOutbox(step, [{ kind: 'checkpoint', runId, id, step, path: final }]);
}

/** Per-step metrics of the LLM agents: proposals by outcome, tokens, pass@k of an evaluated solver. */
export function agentMetrics(
  ctx: { proposer: unknown; llmSolver: LlmPolicy | null; config: { group: number } },
  proposals: ProposalRecord[],
  rewards: number[][],
): Record<string, number> {
  const out: Record<string, number> = {};
  if (ctx.proposer) {
    out.proposals = proposals.length;
    for (const p of proposals) out[`proposals.${p.outcome}`] = (out[`proposals.${p.outcome}`] ?? 0) + 1;
    out['proposer.tokens'] = proposals.reduce((a, p) => a + p.inputTokens + p.outputTokens, 0);
  }
  if (ctx.llmSolver) {
    out.passAt1 = passAtK(rewards, 1);
    out[`passAt${ctx.config.group}`] = passAtK(rewards, ctx.config.group);
    const calls = ctx.llmSolver.takeCalls();
    out['solver.calls'] = calls.length;
    out['solver.tokens'] = calls.reduce((a, c) => a + c.tokens.input + c.tokens.output, 0);
    out['solver.failedCalls'] = calls.filter((c) => c.error).length;
  }
  return out;
}
