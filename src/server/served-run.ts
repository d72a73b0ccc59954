// A served run (DESIGN.md, "Serving trainers"): the same curriculum, probes and skill graph as an
// autonomous run, but the solver is a trainer's model on the other side of HTTP. Where the loop has
// one step per solver update, a served run has one step per score request; its unit of progress is
// the scored group (the completions reported for one sampled task), which feeds the controller.
//
// Durability: every change of state (tasks handed out, scores, probe reports) is applied in memory
// synchronously after its awaits (so concurrent requests never interleave inside one) and queued;
// once per turn of the event loop, everything queued is committed to the run store in one
// transaction together with the controller, mastery and rng state (group-commit.ts), and only then
// does each caller answer. A server killed at any moment and reopened with `resume` has lost
// nothing it acknowledged. A commit that fails stops the run: the store holds the last commit,
// and `resume` goes on from there.
import type { EnvSpec, Trajectory } from '../../envs/index.js';
import { masteredSkills, meanAbsAdvantage } from '../../curricula/index.js';
import type { ArmResult, Controller, Gate, MasteryTracker } from '../../curricula/index.js';
import { renderCompact, renderNatural } from '../../generators/index.js';
import type { GraphEvent } from '../../graphs/index.js';
import { masteryTable, frontier, timeline } from '../../graphs/index.js';
import type { Sandbox } from '../../sandbox/index.js';
import { answerOf, verifyTasks } from '../verification.js';
import type { RunConfig } from '../config.js';
import type { Rng } from '../../core/rng.js';
import { masterySummary, probeScores, probeSets, type Probe } from '../probes.js';
import { flushGraphs, frontierMetrics, graphTask, learnedMetrics, mean, openCeilings, propose, runEvent, type GraphSink, type TaskSpace } from '../run-parts.js';
import type { LearnedProposer } from '../../proposers/index.js';
import { RunStore, StoreError, type IssueRecord } from '../store.js';
import type { Skill, Task } from '../../core/task.js';
import { GroupCommit } from './group-commit.js';
import { servedTask, type ProbeReport, type ScoreItem, type ScoreResponse, type ServedTask } from './types.js';
import { solvedCount, solveRate } from '../../core/rules.js';
import { openServedParts } from './served-open.js';
import { ServeError, type ServedRunOptions, type ServedState } from './served-state.js';

export { ServeError, type ServedRunOptions } from './served-state.js';

export class ServedRun {
  private readonly inflight = new Map<string, { digest: string; done: Promise<ScoreResponse> }>();
  private flushing: Promise<unknown> = Promise.resolve();
  private closed = false;
  private lastExpiry = -Infinity;
  private readonly commits = new GroupCommit({
    transaction: (fn) => this.store.transaction(fn),
    seal: () => this.store.setMeta({ served: JSON.stringify(this.snapshot()) }),
    failure: (e) => {
      const err = new StoreError(`the run store failed to commit (${e.message.split('\n')[0]}); nothing after its last commit was acknowledged: restart with --resume ${this.runId}`);
      this.log(err.message);
      return err;
    },
    committed: () => this.flush(),
  });
  /** Issues claimed by scores whose commit is still queued (the store still shows them open). */
  private readonly closing = new Set<number>();
  private flushTimer: NodeJS.Timeout | null = null;

  private constructor(
    readonly runId: string,
    readonly config: RunConfig,
    private readonly store: RunStore,
    private readonly sandbox: Sandbox,
    private readonly graphs: GraphSink[],
    private readonly controller: Controller,
    private readonly gate: Gate,
    private readonly mastery: MasteryTracker,
    private rng: Rng,
    private readonly space: TaskSpace,
    private readonly probes: Probe[],
    private readonly archive: Map<string, Task>,
    private readonly seen: Set<string>,
    private state: ServedState,
    private readonly now: () => number,
    private readonly log: (line: string) => void,
    private readonly learned: LearnedProposer | null = null,
  ) {}

  /** Opens a new served run, or resumes one (`resume`), with the curriculum's state as it was. */
  static async open(config: RunConfig, opts: ServedRunOptions): Promise<ServedRun> {
    const p = await openServedParts(config, opts);
    const run = new ServedRun(p.runId, p.config, p.store, p.sandbox, p.graphs, p.controller, p.gate, p.mastery, p.rng, p.space, p.probes, p.archive, p.seen, p.state, p.now, p.log, p.learned);
    run.flush();
    return run;
  }

  /** n tasks picked by the live controller (replays and mutations included), handed out until they expire. */
  async sample(n: number): Promise<{ tasks: (ServedTask & { expires_at: string })[] }> {
    this.assertOpen();
    const step = this.state.step;
    const arms = this.gate.open(this.space.arms, this.mastery.mastered());
    const mastered = masteredSkills(this.mastery.mastered(), this.space.skills, arms);
    const ceilings = openCeilings(this.space, arms);
    const picks = this.controller.pick(n, this.rng, { step, arms, mastered, ...(ceilings.size > 0 ? { ceilings } : {}) });
    const first = this.state.issued;
    this.state.issued += n;
    const ctx = { step, sandbox: this.sandbox, seen: this.seen, archive: this.archive, probeIds: new Set(this.probes.map((p) => p.task.id)), proposer: null, skills: this.space.skills, learned: this.learned };
    const tasks: Task[] = [];
    const fresh: Task[] = [];
    for (const [i, pick] of picks.entries()) {
      const task = await propose(ctx, pick, this.rng.fork(`issue/${first + i}`), []);
      if (!this.archive.has(task.id)) {
        this.archive.set(task.id, task);
        fresh.push(task);
        this.learned?.note(task);
      }
      tasks.push(task);
    }
    this.assertOpen();
    const issuedAt = this.now();
    const expiresAt = issuedAt + this.config.serve.ttlSeconds * 1000;
    this.expire();
    // One issue per distinct task: the curriculum may pick a task twice in one sample, and a trainer
    // reports the completions of both copies as one group.
    const issues: IssueRecord[] = [...new Set(tasks.map((t) => t.id))].map((taskId) => ({ taskId, issuedAt, expiresAt }));
    await this.commits.persist(() =>
      this.store.issueTasks({
        step,
        newTasks: fresh.map((task) => ({ task, compact: renderCompact(task), natural: renderNatural(task) })),
        issues,
        outbox: fresh.map((task): GraphEvent => ({ kind: 'task', runId: this.runId, step, task: graphTask(task) })),
      }),
    );
    const expires = new Date(expiresAt).toISOString();
    return { tasks: tasks.map((t) => ({ ...servedTask(t), expires_at: expires })) };
  }

  /**
   * Scores completions of sampled tasks. Items with the same task id form one group; a group whose
   * task was handed out and has not expired feeds the controller. With an idempotency key, a retry
   * (or a concurrent duplicate) gets the first response back and changes nothing.
   */
  async score(items: ScoreItem[], idempotency?: { key: string; digest: string }): Promise<ScoreResponse> {
    this.assertOpen();
    if (!idempotency) return this.applyScore(items);
    const { key, digest } = idempotency;
    const stored = this.store.request(key);
    const pending = this.inflight.get(key);
    const known = stored?.digest ?? pending?.digest;
    if (known !== undefined && known !== digest) throw new ServeError(409, `idempotency key "${clip(key)}" was used with another request body`);
    if (stored) {
      // The first response, rebuilt from the episodes its step recorded (one per item, in order).
      const results = this.store.episodesOf(stored.step).map((e) => ({ task_id: e.taskId, reward: e.reward, reason: e.reason, answer: e.answer }));
      return { step: stored.step, results, replayed: true };
    }
    if (pending) return { ...(await pending.done), replayed: true };
    const done = this.applyScore(items, idempotency);
    this.inflight.set(key, { digest, done });
    try {
      return await done;
    } finally {
      this.inflight.delete(key);
    }
  }

  private async applyScore(items: ScoreItem[], idempotency?: { key: string; digest: string }): Promise<ScoreResponse> {
    const tasks = items.map((it) => this.runTask(it.task_id));
    const answers = items.map((it, i) => answerOf(it.completion, tasks[i]!));
    const verdicts = await verifyTasks(this.sandbox, items.map((_, i) => ({ task: tasks[i]!, answer: answers[i]! })));
    this.assertOpen();
    // From here on nothing awaits: the request is applied whole, or not at all.
    const step = this.state.step + 1;
    this.expire();
    const groups = new Map<string, number[]>();
    items.forEach((it, i) => (groups.get(it.task_id) ?? groups.set(it.task_id, []).get(it.task_id)!).push(i));
    const fed: ArmResult[] = [];
    const scoredIssues: number[] = [];
    const scored: { taskId: string; solved: number; attempts: number }[] = [];
    for (const [taskId, idx] of groups) {
      const t = tasks[idx[0]!]!;
      const rewards = idx.map((i) => verdicts[i]!.reward);
      scored.push({ taskId, solved: solvedCount(rewards), attempts: rewards.length });
      const issue = this.store.openIssues(taskId, this.closing.size + 1).find((id) => !this.closing.has(id));
      if (issue === undefined) continue;
      this.closing.add(issue);
      scoredIssues.push(issue);
      fed.push({ arm: { family: t.family, level: t.level, type: t.type }, taskId, step, rewards, solveRate: solveRate(rewards), meanAbsAdvantage: meanAbsAdvantage(rewards, true) });
    }
    this.controller.update(fed);
    // Every scored group is a solve rate of the trainer's model: the learned proposer's reward for the tasks it drew.
    const learnedStats = this.learned?.learn([...groups].map(([taskId, idx]) => ({ taskId, rewards: idx.map((i) => verdicts[i]!.reward) })));
    const rewards = verdicts.map((v) => v.reward);
    Object.assign(this.state, {
      step,
      groups: this.state.groups + fed.length,
      unfed: this.state.unfed + groups.size - fed.length,
      completions: this.state.completions + items.length,
      solved: this.state.solved + solvedCount(rewards),
    });
    const response: ScoreResponse = {
      step,
      results: items.map((it, i) => ({ task_id: it.task_id, reward: verdicts[i]!.reward, reason: verdicts[i]!.reason ?? null, answer: answers[i]! })),
      replayed: false,
    };
    const episodes = items.map((it, i) => ({ taskId: it.task_id, answer: answers[i]!, reward: verdicts[i]!.reward, reason: verdicts[i]!.reason ?? null }));
    const metrics = {
      completions: items.length,
      groups: groups.size,
      fedGroups: fed.length,
      meanReward: mean(rewards),
      solveRate: mean(fed.map((r) => r.solveRate)),
      meanLevel: mean(fed.map((r) => r.arm.level)),
      ...frontierMetrics(this.controller),
      ...(learnedStats === undefined ? {} : learnedMetrics(learnedStats)),
    };
    try {
      await this.commits.persist(() =>
        this.store.commitStep({
          step,
          newTasks: [],
          scored,
          episodes,
          metrics,
          skillEvents: [],
          // Read inside the commit, after the earlier requests of the same commit counted theirs.
          outbox: scored.map((s): GraphEvent => {
            const row = this.store.taskScore(s.taskId);
            return { kind: 'solve-rate', taskId: s.taskId, solveRate: (row.solved + s.solved) / Math.max(1, row.attempts + s.attempts) };
          }),
          scoredIssues,
          request: idempotency ? { ...idempotency, step } : undefined,
        }),
      );
    } finally {
      for (const id of scoredIssues) this.closing.delete(id);
    }
    return response;
  }

  /** The current evaluation set: the held-out probes, and whether a report for this round is due. */
  probeSet(): { round: number; due: boolean; every: number; tasks: ServedTask[] } {
    const round = this.probeRound();
    return { round, due: round > this.state.probeRound, every: this.config.probes.every, tasks: this.probes.map((p) => servedTask(p.task)) };
  }

  /**
   * A trainer's greedy answers to the probes of a round. The first report of the current round
   * counts: per-skill accuracies become learned / forgotten events. A probe left unanswered is wrong.
   */
  async reportProbes(round: number, answers: ScoreItem[]): Promise<ProbeReport> {
    this.assertOpen();
    const byId = new Map(this.probes.map((p, i) => [p.task.id, i]));
    const unknown = answers.find((a) => !byId.has(a.task_id));
    if (unknown) throw new ServeError(422, `task "${clip(unknown.task_id)}" is not in the probe set (GET /v1/probes lists it)`);
    const refuse = (detail: string): ProbeReport => ({ round, accepted: false, detail, accuracy: null, per_skill: {}, events: [] });
    if (round !== this.probeRound()) return refuse(`round ${round} is not the current round ${this.probeRound()}`);
    if (round <= this.state.probeRound) return refuse(`round ${round} was reported already`);
    const completions = new Array<string>(this.probes.length).fill('');
    for (const a of answers) completions[byId.get(a.task_id)!] = a.completion;
    const verdicts = await verifyTasks(this.sandbox, this.probes.map((p, i) => ({ task: p.task, answer: answerOf(completions[i]!, p.task) })));
    this.assertOpen();
    if (round !== this.probeRound() || round <= this.state.probeRound) return refuse(`round ${round} was reported already`);
    const scores = probeScores(this.probes, verdicts, this.space.skills);
    const step = this.state.step;
    const at = new Date(this.now()).toISOString();
    const events = this.mastery.observe(step, scores.perSkill);
    this.state.probeRound = round;
    this.state.probeAccuracy = scores.overall;
    await this.commits.persist(() =>
      this.store.commitEvents({
        step,
        skillEvents: events.map((ev) => ({ skillId: ev.skillId, event: ev.event, accuracy: ev.accuracy, at })),
        outbox: events.map((ev): GraphEvent => ({ kind: 'mastery', runId: this.runId, skillId: ev.skillId, event: ev.event, step, at, accuracy: ev.accuracy, baseline: ev.baseline })),
      }),
    );
    for (const ev of events) this.log(`step ${step}: ${ev.event} ${ev.skillId} (accuracy ${ev.accuracy.toFixed(2)}, trivial baseline ${ev.baseline.toFixed(2)})`);
    return {
      round,
      accepted: true,
      detail: null,
      accuracy: scores.overall,
      per_skill: Object.fromEntries([...scores.perSkill].map(([id, p]) => [id, p.accuracy])),
      events: events.map((ev) => ({ skill_id: ev.skillId, event: ev.event, accuracy: ev.accuracy })),
    };
  }

  /** Counters of the run, from its durable state. */
  stats() {
    const issues = this.store.issueCounts();
    return {
      run_id: this.runId,
      step: this.state.step,
      groups: this.state.groups,
      unfed_groups: this.state.unfed,
      completions: this.state.completions,
      solved: this.state.solved,
      tasks: this.archive.size,
      issued: issues.open + issues.scored + issues.abandoned,
      open: issues.open,
      abandoned: issues.abandoned,
      probe_round: this.probeRound(),
      probes_reported: this.state.probeRound,
      probe_accuracy: this.state.probeAccuracy,
      skills_mastered: [...this.mastery.mastered()].sort(),
      ...this.masteryStats(),
      // The level-frontier controller's h per family × type now (absent for other controllers; docs/levels.md).
      ...(this.controller.frontier?.() ? { frontier: this.controller.frontier()! } : {}),
    };
  }

  /** Mastery as the autonomous run's summary reports it: margins over the trivial baselines, and forgetting. */
  private masteryStats() {
    const m = masterySummary(this.mastery.mastered(), this.mastery.state(), probeSets(this.probes, this.space.skills, this.mastery.opts));
    return {
      mastery: m.mastery.map((x) => ({ skill_id: x.skillId, accuracy: x.accuracy, baseline: x.baseline })),
      skills_masterable: m.skillsMasterable,
      skills_ever_learned: m.skillsEverLearned,
      forgotten: m.forgotten,
    };
  }

  /** A skill-graph view of this run, as `cogen skills` shows it. */
  async skills(view: 'mastery' | 'frontier' | 'timeline') {
    await this.flushNow();
    const graph = this.graphs[0]!.graph;
    if (view === 'frontier') return frontier(graph, this.runId);
    if (view === 'timeline') return timeline(graph, this.runId);
    return masteryTable(graph, this.runId);
  }

  /** Skills the run knows, for scoring the probes and the views. */
  get skillList(): Skill[] {
    return this.space.skills;
  }

  get sandboxHandle(): Sandbox {
    return this.sandbox;
  }

  /** Records a finished environment episode (envs/) at the run's current step. */
  recordEnvEpisode(spec: EnvSpec, trajectory: Trajectory): void {
    this.store.addEnvEpisodes(this.state.step, [{ spec, trajectory }]);
  }

  async close(status: 'stopped' | 'finished' = 'stopped'): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.commits.commit();
    if (this.flushTimer) clearTimeout(this.flushTimer);
    await this.flushing.catch(() => {});
    this.store.setMeta({ status, endedAt: new Date().toISOString() });
    this.store.appendOutbox(this.state.step, [runEvent(this.store, status)]);
    await flushGraphs(this.graphs, this.store, this.config.graph.batchSize, this.log).catch(() => 0);
    await Promise.all(this.graphs.map((g) => g.graph.close().catch(() => {})));
    await this.sandbox.close();
    this.store.close();
  }

  private runTask(id: string): Task {
    const task = this.archive.get(id);
    if (task) return task;
    if (this.probes.some((p) => p.task.id === id)) throw new ServeError(422, `task "${clip(id)}" is a probe: report it through POST /v1/probes`);
    throw new ServeError(404, `unknown task id "${clip(id)}" (not sampled from this run)`);
  }

  /** Abandons expired issues, at most once a second: expiry is coarse, and each pass is a write. */
  private expire(): void {
    const now = this.now();
    if (now - this.lastExpiry < 1000) return;
    this.lastExpiry = now;
    this.store.expireIssues(now);
  }

  private probeRound(): number {
    return Math.floor(this.state.groups / this.config.probes.every);
  }

  private snapshot(): ServedState {
    return { ...this.state, rng: this.rng.state(), controller: this.controller.state(), mastery: this.mastery.state(), proposer: this.learned?.state() };
  }

  /** Drains the outbox into the skill graphs now, one drain at a time; a graph that is down keeps its backlog. */
  private flushNow(): Promise<unknown> {
    this.flushing = this.flushing
      .catch(() => {})
      .then(() => (this.closed ? 0 : flushGraphs(this.graphs, this.store, this.config.graph.batchSize, this.log)));
    return this.flushing;
  }

  /**
   * Drains the outbox soon: requests commit their events at once, and the graphs follow within
   * FLUSH_MS, so that a burst of small requests costs one drain instead of one each.
   */
  private flush(): void {
    if (this.flushTimer || this.closed) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      void this.flushNow();
    }, FLUSH_MS);
    this.flushTimer.unref();
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreError('the served run is closed');
    if (this.commits.failed) throw this.commits.failed;
  }
}

/** How soon after a change the skill graphs are fed (ms). */
const FLUSH_MS = 500;

const clip = (s: string): string => (s.length > 80 ? `${s.slice(0, 80)}…` : s);
