// A served run (docs/DESIGN.md, "Serving trainers"): the same curriculum, probes and skill graph as
// an autonomous run, but the solver is a trainer's model on the other side of HTTP. Where the loop
// has one step per solver update, a served run has one step per score request; its unit of progress
// is the scored group (the completions reported for one sampled task), which feeds the controller.
//
// Durability: answers are verified first, outside any lock; then every change of state (tasks handed
// out, scores, probe reports) goes to the run's one writer (committer.ts), which applies it on the
// latest committed state and commits it with the controller, mastery and rng state before the caller
// answers. A server killed at any moment has lost nothing it acknowledged: `resume` (SQLite) or any
// other replica (PostgreSQL, docs/scale-out.md) goes on from the store.
import type { EnvSpec, Trajectory } from '../../envs/index.js';
import { masteryTable, frontier, timeline } from '../../graphs/index.js';
import type { Sandbox } from '../../sandbox/index.js';
import {
  type RunConfig,
  masterySummary,
  probeScores,
  probeSets,
  StoreError,
  type StoredRequest,
  type ServedRecords,
} from '../run/index.js';
import type { Skill, Task } from '../../core/task.js';
import { Committer } from './committer.js';
import { strike } from './faults.js';
import { scoreChange } from './served-score.js';
import { sampleChange } from './served-sample.js';
import { probeChange } from './served-probes.js';
import type { ServedParts } from './served-state.js';
import type { Verifier } from './verifier.js';
import type { ProbeReport, ScoreItem, ScoreResponse } from './types.js';
import { taskIn, type TaskIn, type TaskView } from './served-view.js';
import { clip } from '../../core/text.js';

/** A request the run cannot honour: the HTTP layer answers it with `status` and the message. */
export class ServeError extends Error {
  constructor(
    readonly status: 404 | 409 | 422,
    message: string,
  ) {
    super(message);
  }
}

/** Seconds of verification and of commits, for /metrics. */
export interface ServedTimings {
  verified?(seconds: number, answers: number): void;
  committed?(seconds: number, lockHeld: number): void;
}

export class ServedRun {
  readonly runId: string;
  readonly config: RunConfig;
  timings: ServedTimings = {};
  private readonly inflight = new Map<string, { digest: string; done: Promise<ScoreResponse> }>();
  private flushing: Promise<unknown> = Promise.resolve();
  private closed = false;
  private lastExpiry = -Infinity;
  private flushTimer: NodeJS.Timeout | null = null;
  private readonly committer: Committer;
  private readonly probeIds: Set<string>;

  constructor(private readonly p: ServedParts) {
    this.runId = p.runId;
    this.config = p.config;
    this.probeIds = new Set(p.probes.map((x) => x.task.id));
    this.committer = new Committer(
      p.records,
      {
        sync: (source) => p.cur.sync(source),
        prepare: (tx) => this.expire(tx),
        snapshot: () => p.cur.snapshot(),
        invalidate: () => p.cur.invalidate(),
        committed: (seconds, lockHeld) => {
          p.cur.committed();
          this.timings.committed?.(seconds, lockHeld);
          this.flush();
        },
        log: p.log,
      },
      p.resumeHint,
    );
    this.flush();
  }

  get records(): ServedRecords {
    return this.p.records;
  }

  /**
   * n tasks picked by the live controller (replays and mutations included), handed out until they
   * expire; written in `view` (served-view.ts). With `oneArm`, all n come from the arm of the
   * controller's first pick.
   */
  async sample<V extends TaskView = 'chat'>(
    n: number,
    view: V = 'chat' as V,
    oneArm = false,
  ): Promise<{ tasks: (TaskIn<V> & { expires_at: string })[] }> {
    this.assertOpen();
    return this.committer.run({ apply: () => sampleChange(this.p, this.probeIds, n, view, oneArm) });
  }

  /**
   * Scores completions of sampled tasks. Items with the same task id form one group; a group whose
   * task was handed out and has not expired feeds the controller. With an idempotency key, a retry
   * (or a concurrent duplicate, on this replica or another) gets the first response back and changes nothing.
   */
  async score(items: ScoreItem[], idempotency?: { key: string; digest: string }): Promise<ScoreResponse> {
    this.assertOpen();
    if (!idempotency) return this.applyScore(items);
    const key = this.p.records.text(idempotency.key);
    const digest = idempotency.digest;
    const pending = this.inflight.get(key);
    if (pending && pending.digest !== digest) throw reused(key);
    if (pending) return { ...(await pending.done), replayed: true };
    // Registered before the first await, so that a duplicate arriving meanwhile waits for this one.
    const done = this.firstScore(items, key, digest);
    this.inflight.set(key, { digest, done });
    try {
      return await done;
    } finally {
      this.inflight.delete(key);
    }
  }

  /** A retry of a committed request needs no verification (the writer checks again under its lock). */
  private async firstScore(items: ScoreItem[], key: string, digest: string): Promise<ScoreResponse> {
    const stored = await this.p.records.request(key);
    if (stored) return this.replay(stored, digest);
    return this.applyScore(items, { key, digest });
  }

  /** The first response to an idempotent request, rebuilt from the episodes its step recorded (one per item, in order). */
  private async replay(stored: StoredRequest, digest: string): Promise<ScoreResponse> {
    if (stored.digest !== digest) throw reused(stored.key);
    const results = (await this.p.records.episodesOf(stored.step)).map((e) => ({
      task_id: e.taskId,
      reward: e.reward,
      reason: e.reason,
      answer: e.answer,
    }));
    return { step: stored.step, results, replayed: true };
  }

  private async applyScore(items: ScoreItem[], idempotency?: { key: string; digest: string }): Promise<ScoreResponse> {
    const { cur, records } = this.p;
    const tasks = await Promise.all(items.map((it) => this.runTask(it.task_id)));
    const t0 = performance.now();
    const scored = await this.p.verifier.score(items.map((it, i) => ({ task: tasks[i]!, completion: it.completion })));
    const answers = scored.map((x) => records.text(x.answer));
    const verdicts = scored.map(({ verdict: v }) => ({
      ...v,
      reason: v.reason === undefined ? null : records.text(v.reason),
    }));
    this.timings.verified?.((performance.now() - t0) / 1000, items.length);
    this.assertOpen();
    const groups = new Map<string, number[]>();
    items.forEach((it, i) => (groups.get(it.task_id) ?? groups.set(it.task_id, []).get(it.task_id)!).push(i));
    const out = await this.committer.run<{ response: ScoreResponse } | { stored: StoredRequest }>({
      keys: idempotency ? [idempotency.key] : [],
      taskIds: [...groups.keys()],
      apply: async (view) => {
        const stored = idempotency && view.request(idempotency.key);
        if (stored) return { result: { stored }, ops: [] };
        const change = await scoreChange(cur, view, { items, tasks, answers, verdicts, groups, request: idempotency });
        if (idempotency) view.noteRequest({ ...idempotency, step: change.result.response.step });
        strike(this.p.faults, 'pauseInLock', idempotency?.key);
        return change;
      },
    });
    if ('stored' in out) return this.replay(out.stored, idempotency!.digest);
    strike(this.p.faults, 'killAfterCommit', idempotency?.key);
    return out.response;
  }

  /** The current evaluation set: the held-out probes, and whether a report for this round is due. */
  async probeSet<V extends TaskView = 'chat'>(
    view: V = 'chat' as V,
  ): Promise<{ round: number; due: boolean; every: number; tasks: TaskIn<V>[] }> {
    await this.refresh();
    const round = this.probeRound();
    return {
      round,
      due: round > this.p.cur.state.probeRound,
      every: this.config.probes.every,
      tasks: this.p.probes.map((x) => taskIn(view, x.task)),
    };
  }

  /**
   * A trainer's greedy answers to the probes of a round. The first report of the current round
   * counts: per-skill accuracies become learned / forgotten events. A probe left unanswered is wrong.
   */
  async reportProbes(round: number, answers: ScoreItem[]): Promise<ProbeReport> {
    this.assertOpen();
    const { probes, cur, space } = this.p;
    const byId = new Map(probes.map((x, i) => [x.task.id, i]));
    const unknown = answers.find((a) => !byId.has(a.task_id));
    if (unknown)
      throw new ServeError(
        422,
        `task "${clip(unknown.task_id, 80)}" is not in the probe set (GET /v1/probes lists it)`,
      );
    const refuse = (detail: string): ProbeReport => ({
      round,
      accepted: false,
      detail,
      accuracy: null,
      per_skill: {},
      events: [],
    });
    await this.refresh();
    if (round !== this.probeRound()) return refuse(`round ${round} is not the current round ${this.probeRound()}`);
    if (round <= cur.state.probeRound) return refuse(`round ${round} was reported already`);
    const completions = new Array<string>(probes.length).fill('');
    for (const a of answers) completions[byId.get(a.task_id)!] = a.completion;
    const verdicts = (
      await this.p.verifier.score(probes.map((x, i) => ({ task: x.task, completion: completions[i]! })))
    ).map((x) => x.verdict);
    this.assertOpen();
    const scores = probeScores(probes, verdicts, space.skills);
    return this.committer.run({
      apply: async () =>
        // Checked again on the committed state: another replica may have taken this round meanwhile.
        round !== this.probeRound() || round <= cur.state.probeRound
          ? { result: refuse(`round ${round} was reported already`), ops: [] }
          : probeChange(this.p, round, scores),
    });
  }

  /** Counters of the run, from its durable state (the latest any replica committed). */
  async stats() {
    await this.refresh();
    const { cur, probes, space } = this.p;
    const issues = await this.p.records.issueCounts();
    const m = masterySummary(
      cur.mastery.mastered(),
      cur.mastery.state(),
      probeSets(probes, space.skills, cur.mastery.opts),
    );
    return {
      run_id: this.runId,
      step: cur.state.step,
      groups: cur.state.groups,
      unfed_groups: cur.state.unfed,
      completions: cur.state.completions,
      solved: cur.state.solved,
      tasks: cur.archive.size,
      issued: issues.open + issues.scored + issues.abandoned,
      open: issues.open,
      abandoned: issues.abandoned,
      probe_round: this.probeRound(),
      probes_reported: cur.state.probeRound,
      probe_accuracy: cur.state.probeAccuracy,
      skills_mastered: [...cur.mastery.mastered()].sort(),
      mastery: m.mastery.map((x) => ({ skill_id: x.skillId, accuracy: x.accuracy, baseline: x.baseline })),
      skills_masterable: m.skillsMasterable,
      progress: m.progress.map((x) => ({
        skill_id: x.skillId,
        accuracy: x.accuracy,
        baseline: x.baseline,
        bar: x.bar,
        mastered: x.mastered,
      })),
      skills_ever_learned: m.skillsEverLearned,
      forgotten: m.forgotten,
      // The level-frontier controller's h per family × type now (absent for other controllers; docs/levels.md).
      ...(cur.controller.frontier?.() ? { frontier: cur.controller.frontier()! } : {}),
    };
  }

  /** A skill-graph view of this run, as `cogen skills` shows it. */
  async skills(view: 'mastery' | 'frontier' | 'timeline') {
    await this.flushNow();
    const graph = this.p.graphs[0]!.graph;
    if (view === 'frontier') return frontier(graph, this.runId);
    if (view === 'timeline') return timeline(graph, this.runId);
    return masteryTable(graph, this.runId);
  }

  /** Skills the run knows, for scoring the probes and the views. */
  get skillList(): Skill[] {
    return this.p.space.skills;
  }

  get sandboxHandle(): Sandbox {
    return this.p.sandbox;
  }

  get verifier(): Verifier {
    return this.p.verifier;
  }

  /** Records a finished environment episode (envs/) at the run's current step. */
  recordEnvEpisode(spec: EnvSpec, trajectory: Trajectory): Promise<void> {
    return this.committer.run({
      apply: async () => ({
        result: undefined,
        ops: [{ op: 'env-episode' as const, step: this.p.cur.state.step, spec, trajectory }],
      }),
    });
  }

  /** Whether this replica can take requests now: null, or a one-line reason (its store or its verification is down). */
  async unavailable(): Promise<string | null> {
    if (this.closed) return 'the served run is closed';
    if (this.committer.failed) return this.committer.failed.message;
    return (await this.p.records.ping()) ?? (await this.p.verifier.ping());
  }

  async close(status: 'stopped' | 'finished' = 'stopped'): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.committer.idle();
    if (this.flushTimer) clearTimeout(this.flushTimer);
    await this.flushing.catch(() => {});
    const { records, graphs } = this.p;
    await this.p
      .onClose(status, this.p.cur.state.step)
      .catch((e: Error) => this.p.log(`closing the run store: ${e.message.split('\n')[0]}`));
    await records.drain(graphs, this.config.graph.batchSize, this.p.log).catch(() => 0);
    await Promise.all(graphs.map((g) => g.graph.close().catch(() => {})));
    await this.p.verifier.close();
    await this.p.sandbox.close();
    await records.close();
  }

  /** The task a sampled id or a probe id names, or undefined where this run knows no such task. */
  async knownTask(id: string): Promise<Task | undefined> {
    const probe = this.probeIds.has(id) ? this.p.probes.find((x) => x.task.id === id)?.task : undefined;
    return probe ?? (await this.recordedTask(id));
  }

  /** A task this run handed out: in its archive, or in the store (another replica's); a probe id is none. */
  private async recordedTask(id: string): Promise<Task | undefined> {
    return this.p.cur.archive.get(id) ?? (this.probeIds.has(id) ? undefined : await this.p.records.task(id));
  }

  private async runTask(id: string): Promise<Task> {
    const task = await this.recordedTask(id);
    if (task) {
      // Recorded by another replica since this one last synced.
      this.p.cur.addTask(task, false);
      return task;
    }
    if (this.probeIds.has(id))
      throw new ServeError(422, `task "${clip(id, 80)}" is a probe: report it through POST /v1/probes`);
    throw new ServeError(404, `unknown task id "${clip(id, 80)}" (not sampled from this run)`);
  }

  /** Abandons expired issues, at most once a second: expiry is coarse, and each pass is a write. */
  private async expire(tx: { expire(now: number): Promise<void> }): Promise<void> {
    const now = this.p.now();
    if (now - this.lastExpiry < 1000) return;
    this.lastExpiry = now;
    await tx.expire(now);
  }

  /** Brings the in-memory state up to the latest commit (any replica's) before a read. */
  private refresh(): Promise<void> {
    return this.committer.run({ read: true, apply: async () => ({ result: undefined, ops: [] }) });
  }

  private probeRound(): number {
    return Math.floor(this.p.cur.state.groups / this.config.probes.every);
  }

  /** Drains the outbox into the skill graphs now, one drain at a time; a graph that is down keeps its backlog. */
  private flushNow(): Promise<unknown> {
    this.flushing = this.flushing
      .catch(() => {})
      .then(() => (this.closed ? 0 : this.p.records.drain(this.p.graphs, this.config.graph.batchSize, this.p.log)));
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
      void this.flushNow().catch(() => {});
    }, FLUSH_MS);
    this.flushTimer.unref();
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreError('the served run is closed');
    if (this.committer.failed) throw this.committer.failed;
  }
}

/** How soon after a change the skill graphs are fed (ms). */
const FLUSH_MS = 500;
const reused = (key: string) =>
  new ServeError(409, `idempotency key "${clip(key, 80)}" was used with another request body`);
