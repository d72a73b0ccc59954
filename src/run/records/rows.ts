// What a run records, in one place for the loop (src/run/loop.ts) and a served run (src/server/): a
// new run's name and its "already exists" refusal, a task as rows and a graph event, a group's result
// for the curriculum, a probe round's mastery events, a proposer's draft, and the run's own graph
// event. The stores (store.ts, and records/ for a served run) write what these return.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { meanAbsAdvantage, type ArmResult, type MasteryEvent } from '../../../curricula/index.js';
import { FRONTIER_PROPOSER, renderCompact, renderNatural } from '../../../generators/index.js';
import type { GraphEvent, GraphTask } from '../../../graphs/index.js';
import { madeOnlyOf, solveRate } from '../../../core/rules.js';
import type { Parent, Task } from '../../../core/task.js';
import type { LearnedDraft } from '../../../proposers/index.js';
import type { ProposalRecord } from '../../agents/index.js';
import type { RunConfig } from '../config.js';
import { StoreError, type StepRecord } from './store.js';

/** A new run's id: when it started, the config's name and seed. */
export function newRunId(config: RunConfig, served = false): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
  return `${stamp}-${config.name}${served ? '-served' : ''}-s${config.seed}`;
}

/** Refuses to make a run whose directory already holds one; `resumeWith` says how it goes on, where it can. */
export function refuseExisting(runsDir: string, runId: string, resumeWith?: string): void {
  if (!existsSync(join(runsDir, runId, 'run.db'))) return;
  const how = resumeWith ? `resume it with ${resumeWith}, or pick another --run-id` : 'pick another --run-id';
  throw new StoreError(`run "${runId}" already exists in ${runsDir}: ${how}`);
}

export function graphTask(task: Task): GraphTask {
  return {
    id: task.id,
    type: task.type,
    family: task.family,
    level: task.level,
    program: task.program,
    skills: task.skills,
    hash: task.hash,
    prompt: renderNatural(task),
    parent: task.parent,
    solveRate: null,
    proposer: task.proposer,
  };
}

/** Tasks first seen at a step: their rows (with both renderings) and their graph events. */
export function newTaskRecords(
  runId: string,
  step: number,
  tasks: readonly Task[],
): { newTasks: StepRecord['newTasks']; outbox: GraphEvent[] } {
  return {
    newTasks: tasks.map((task) => ({ task, compact: renderCompact(task), natural: renderNatural(task) })),
    outbox: tasks.map((task): GraphEvent => ({ kind: 'task', runId, step, task: graphTask(task) })),
  };
}

/** A task's group of rewards as the curriculum sees it. */
export function armResult(task: Task, rewards: number[], step: number, mastered?: ReadonlySet<string>): ArmResult {
  const practice = madeOnlyOf(task.skills, mastered);
  return {
    arm: { family: task.family, level: task.level, type: task.type },
    taskId: task.id,
    step,
    rewards,
    solveRate: solveRate(rewards),
    meanAbsAdvantage: meanAbsAdvantage(rewards, true),
    ...(practice ? { practice } : {}),
    ...(task.parent ? { child: { op: task.parent.op } } : {}),
  };
}

/**
 * A probe round's mastery events as graph events (the skill graph, and `RunStore.skillEvents`, read
 * them from the outbox), each told in one log line.
 */
export function masteryRecords(
  runId: string,
  step: number,
  at: string,
  events: readonly MasteryEvent[],
  log: (line: string) => void,
): GraphEvent[] {
  return events.map((ev): GraphEvent => {
    log(
      `step ${step}: ${ev.event} ${ev.skillId} (accuracy ${ev.accuracy.toFixed(2)}, trivial baseline ${ev.baseline.toFixed(2)})`,
    );
    return {
      kind: 'mastery',
      runId,
      skillId: ev.skillId,
      event: ev.event,
      step,
      at,
      accuracy: ev.accuracy,
      baseline: ev.baseline,
    };
  });
}

/** The run's own graph event, from what its store's meta holds. */
export function runEvent(meta: { getMeta(key: string): string | undefined }, status: string): GraphEvent {
  return {
    kind: 'run',
    runId: meta.getMeta('runId')!,
    preset: meta.getMeta('preset') ?? '',
    config: meta.getMeta('config') ?? '{}',
    startedAt: meta.getMeta('startedAt') ?? '',
    endedAt: meta.getMeta('endedAt') ?? null,
    status,
  };
}

/**
 * A frontier child's draft as a proposals row (curricula/evolve.ts): the prompt names the parent,
 * the mate of a crossover and the operator; the output is the child's program, or empty when the
 * operator could not make one.
 */
export function childRecord(
  step: number,
  parent: Pick<Task, 'id' | 'family' | 'level' | 'type'>,
  pick: { op?: string; mate?: string },
  draft: { level: number; program: string; parent?: Parent | null } | null,
  outcome: string,
  detail: string | null,
  taskId: string | null = null,
): ProposalRecord {
  const op = draft?.parent?.op ?? pick.op ?? '';
  return draftRecord(step, FRONTIER_PROPOSER, {
    arm: { family: parent.family, level: draft?.level ?? parent.level, type: parent.type },
    prompt: `${op} of ${parent.id}${pick.mate ? ` and ${pick.mate}` : ''} at level ${parent.level}`,
    program: draft?.program ?? '',
    outcome,
    detail,
    taskId,
  });
}

/** A learned, self-play or frontier proposer's draft as a proposals row (prompt: the arm and its choice trace, or the parent and operator; raw: the program). */
export function draftRecord(step: number, proposer: string, d: LearnedDraft): ProposalRecord {
  return {
    step,
    family: d.arm.family,
    level: d.arm.level,
    type: d.arm.type,
    proposer,
    prompt: d.prompt,
    raw: d.program,
    outcome: d.outcome,
    detail: d.detail,
    taskId: d.taskId,
    inputTokens: 0,
    outputTokens: 0,
    tokensEstimated: false,
    ms: 0,
    learnability: null,
  };
}
