// One sample request applied to a served run's state by the run's writer (committer.ts): the live
// controller picks the arms, the proposer makes the tasks (replays and mutations included), and each
// distinct task is handed out as an issue that expires unless scored in time.
import { masteredSkills, unmasteredSkills, type Pick } from '../../curricula/index.js';
import type { Task } from '../../core/task.js';
import {
  masterableSkills,
  newTaskRecords,
  openCeilings,
  probeSets,
  propose,
  type IssueRecord,
  type Probe,
  type WriteOp,
} from '../run/index.js';
import type { ServedParts } from './served-state.js';
import { taskIn, type TaskIn, type TaskView } from './served-view.js';

export async function sampleChange<V extends TaskView>(
  p: ServedParts,
  probeIds: ReadonlySet<string>,
  n: number,
  view: V,
  oneArm = false,
): Promise<{ result: { tasks: (TaskIn<V> & { expires_at: string })[] }; ops: WriteOp[] }> {
  const { cur, space, config } = p;
  const step = cur.state.step;
  const arms = p.gate.open(space.arms, cur.mastery.mastered());
  const mastered = masteredSkills(cur.mastery.mastered(), space.skills, arms);
  const unmastered = unmasteredSkills(cur.mastery.mastered(), masterableOf(p), space.skills, arms);
  const ceilings = openCeilings(space, arms);
  const ctx = { step, arms, mastered, unmastered, ...(ceilings.size > 0 ? { ceilings } : {}) };
  const picks = oneArm
    ? oneArmPicks(cur.controller.pick(1, cur.rng, ctx)[0]!, n)
    : cur.controller.pick(n, cur.rng, ctx);
  const first = cur.state.issued;
  cur.state.issued += n;
  const proposeCtx = {
    step,
    sandbox: p.sandbox,
    seen: cur.seen,
    archive: cur.archive,
    probeIds,
    proposer: null,
    skills: space.skills,
    learned: cur.learned,
  };
  const tasks: Task[] = [];
  const fresh: Task[] = [];
  for (const [i, pick] of picks.entries()) {
    const task = await propose(proposeCtx, pick, cur.rng.fork(`issue/${first + i}`), []);
    if (cur.addTask(task, true)) fresh.push(task);
    tasks.push(task);
  }
  const issuedAt = p.now();
  const expiresAt = issuedAt + config.serve.ttlSeconds * 1000;
  // One issue per distinct task: the curriculum may pick a task twice in one sample, and a trainer
  // reports the completions of both copies as one group.
  const issues: IssueRecord[] = [...new Set(tasks.map((t) => t.id))].map((taskId) => ({
    taskId,
    issuedAt,
    expiresAt,
  }));
  const expires = new Date(expiresAt).toISOString();
  return {
    result: { tasks: tasks.map((t) => ({ ...taskIn(view, t), expires_at: expires })) },
    ops: [{ op: 'issue', step, ...newTaskRecords(p.runId, step, fresh), issues }],
  };
}

/** The controller's pick, then fresh tasks of its arm (avoiding what a fresh first pick avoids): a request whose tasks share one arm. */
function oneArmPicks(first: Pick, n: number): Pick[] {
  const avoid = first.kind === 'new' && first.avoid ? { avoid: first.avoid } : {};
  return [first, ...Array.from({ length: n - 1 }, (): Pick => ({ kind: 'new', arm: first.arm, ...avoid }))];
}

/** The skills whose probe sets can show mastery; the probes are fixed for a served run's life, so once per run. */
const masterableByProbes = new WeakMap<readonly Probe[], ReadonlySet<string>>();
function masterableOf(p: ServedParts): ReadonlySet<string> {
  let out = masterableByProbes.get(p.probes);
  if (!out) {
    out = masterableSkills(probeSets(p.probes, p.space.skills, p.cur.mastery.opts));
    masterableByProbes.set(p.probes, out);
  }
  return out;
}
