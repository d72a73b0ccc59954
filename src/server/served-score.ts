// One score request applied to a served run's state by the run's writer (committer.ts): its groups
// feed the controller (a group whose task has an open issue), the learned proposer learns from every
// group's solve rate, the counters move one step, and the step's rows are the writes.
import type { ArmResult } from '../../curricula/index.js';
import type { GraphEvent } from '../../graphs/index.js';
import type { DetailedVerdict } from '../../sandbox/index.js';
import type { Task } from '../../core/task.js';
import { solvedCount } from '../../core/rules.js';
import { armResult, frontierMetrics, learnedMetrics, type WriteOp } from '../run/index.js';
import { mean } from '../../core/stats.js';
import type { CommitView } from './committer.js';
import type { Curriculum } from './served-state.js';
import type { ScoreItem, ScoreResponse } from './types.js';

export interface VerifiedScore {
  items: ScoreItem[];
  tasks: Task[];
  answers: string[];
  verdicts: (Omit<DetailedVerdict, 'reason'> & { reason: string | null })[];
  /** Item indices per task id, in order of first appearance. */
  groups: Map<string, number[]>;
  request?: { key: string; digest: string };
}

/** Applies a verified score request on the state the writer holds; nothing here awaits. */
export function scoreChange(
  cur: Curriculum,
  view: CommitView,
  v: VerifiedScore,
): { result: { response: ScoreResponse }; ops: WriteOp[] } {
  const { items, tasks, answers, verdicts, groups } = v;
  const step = cur.state.step + 1;
  const fed: ArmResult[] = [];
  const scoredIssues: number[] = [];
  const scored: { taskId: string; solved: number; attempts: number }[] = [];
  const mastered = cur.mastery.mastered();
  for (const [taskId, idx] of groups) {
    const t = tasks[idx[0]!]!;
    const rewards = idx.map((i) => verdicts[i]!.reward);
    scored.push({ taskId, solved: solvedCount(rewards), attempts: rewards.length });
    const issue = view.takeOpenIssue(taskId);
    if (issue === undefined) continue;
    scoredIssues.push(issue);
    fed.push(armResult(t, rewards, step, mastered));
  }
  cur.controller.update(fed);
  // Every scored group is a solve rate of the trainer's model: the learned proposer's reward for the tasks it drew.
  const learnedStats = cur.learned?.learn(
    [...groups].map(([taskId, idx]) => ({ taskId, rewards: idx.map((i) => verdicts[i]!.reward) })),
  );
  const rewards = verdicts.map((x) => x.reward);
  Object.assign(cur.state, {
    step,
    groups: cur.state.groups + fed.length,
    unfed: cur.state.unfed + groups.size - fed.length,
    completions: cur.state.completions + items.length,
    solved: cur.state.solved + solvedCount(rewards),
  });
  const response: ScoreResponse = {
    step,
    results: items.map((it, i) => ({
      task_id: it.task_id,
      reward: verdicts[i]!.reward,
      reason: verdicts[i]!.reason,
      answer: answers[i]!,
    })),
    replayed: false,
  };
  const metrics = {
    completions: items.length,
    groups: groups.size,
    fedGroups: fed.length,
    meanReward: mean(rewards),
    solveRate: mean(fed.map((r) => r.solveRate)),
    meanLevel: mean(fed.map((r) => r.arm.level)),
    ...frontierMetrics(cur.controller),
    ...(learnedStats === undefined ? {} : learnedMetrics(learnedStats)),
  };
  // Each task's solve rate so far, counting the requests committed before this one in the same batch.
  const outbox = scored.map((s): GraphEvent => {
    const row = view.score(s.taskId);
    view.addScore(s.taskId, s.solved, s.attempts);
    return {
      kind: 'solve-rate',
      taskId: s.taskId,
      solveRate: (row.solved + s.solved) / Math.max(1, row.attempts + s.attempts),
    };
  });
  const episodes = items.map((it, i) => ({
    taskId: it.task_id,
    answer: answers[i]!,
    reward: verdicts[i]!.reward,
    reason: verdicts[i]!.reason,
  }));
  const request = v.request ? { ...v.request, step } : undefined;
  return {
    result: { response },
    ops: [
      {
        op: 'step',
        record: { step, newTasks: [], scored, episodes, metrics, outbox, scoredIssues, request },
      },
    ],
  };
}
