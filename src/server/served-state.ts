// The in-memory state of a served run and how it follows the store: the curriculum's controller,
// mastery and rng, the learned proposer, the counters, and the archive of tasks. Every change is
// applied by the one writer (committer.ts) on top of the latest committed state: when another
// replica wrote since this one last did, `sync` reloads the snapshot and the tasks it added.
import type { Controller, MasteryTracker } from '../../curricula/index.js';
import type { LearnedProposer } from '../../proposers/index.js';
import { createRng, type Rng } from '../../core/rng.js';
import type { Task } from '../../core/task.js';
import type { Gate } from '../../curricula/index.js';
import type { Sandbox } from '../../sandbox/index.js';
import type { GraphSink, Probe, RunConfig, ServedRecords, TaskArchive, TaskSpace, WriterTx } from '../run/index.js';
import type { Verifier } from './verifier.js';
import type { Faults } from './faults.js';

/** What survives a restart besides the rows: the state every request moves forward. */
export interface ServedState {
  rng: [number, number, number, number];
  controller: unknown;
  mastery: unknown;
  /** Score requests applied (the served step). */
  step: number;
  /** Groups fed to the controller; probe rounds count these. */
  groups: number;
  /** Groups whose task had no open issue (expired, or scored already): recorded, not fed. */
  unfed: number;
  completions: number;
  solved: number;
  issued: number;
  /** The last probe round reported (−1: none yet). */
  probeRound: number;
  probeAccuracy: number | null;
  /** The learned proposer's preferences, baselines and drafts awaiting their scores (only when it is on). */
  proposer?: unknown;
}

export const initialState = (seed: number): ServedState => ({
  rng: createRng(seed).state(),
  controller: null,
  mastery: null,
  step: 0,
  groups: 0,
  unfed: 0,
  completions: 0,
  solved: 0,
  issued: 0,
  probeRound: -1,
  probeAccuracy: null,
});

export class Curriculum {
  rng: Rng;
  /** The store's state version this memory matches (−1: unknown, reload before the next change). */
  version = 0;
  /** The last task row read from the store (PostgreSQL's task order). */
  cursor = 0;
  /** Tasks added since the last commit, forgotten again if that commit fails. */
  private added: string[] = [];

  constructor(
    readonly controller: Controller,
    readonly mastery: MasteryTracker,
    readonly learned: LearnedProposer | null,
    readonly archive: TaskArchive,
    readonly seen: Set<string>,
    public state: ServedState,
  ) {
    this.rng = createRng(state.rng);
  }

  /** The state as a snapshot (JSON), for the store. */
  snapshot(): string {
    return JSON.stringify({
      ...this.state,
      rng: this.rng.state(),
      controller: this.controller.state(),
      mastery: this.mastery.state(),
      proposer: this.learned?.state(),
    });
  }

  /** Takes a stored snapshot as the state (restore on resume, or what another replica committed). */
  restore(snapshot: ServedState): void {
    this.state = snapshot;
    this.rng = createRng(snapshot.rng);
    if (snapshot.controller !== null) this.controller.restore(snapshot.controller);
    if (snapshot.mastery !== null) this.mastery.restore(snapshot.mastery);
    if (this.learned && snapshot.proposer !== undefined) this.learned.restore(snapshot.proposer);
  }

  /** A task seen for the first time (drawn here, or recorded by another replica). */
  addTask(task: Task, mine: boolean): boolean {
    if (this.archive.has(task.id)) return false;
    this.archive.set(task.id, task);
    this.seen.add(task.id);
    this.learned?.note(task);
    if (mine) this.added.push(task.id);
    return true;
  }

  /** Brings this memory up to the store's state, when another writer moved it. */
  async sync(source: Pick<WriterTx, 'state' | 'tasksSince'>): Promise<void> {
    const found = await source.state(this.version);
    if (found.snapshot !== null) {
      const { tasks, cursor } = await source.tasksSince(this.cursor);
      for (const t of tasks) this.addTask(t, false);
      this.cursor = cursor;
      this.restore(JSON.parse(found.snapshot) as ServedState);
    }
    this.version = found.version;
  }

  /** A write committed: what it added is the store's now, and so is its version. */
  committed(): void {
    this.added = [];
    if (this.version >= 0) this.version += 1;
  }

  /** A write failed: forget its tasks and reload everything before the next change. */
  invalidate(): void {
    for (const id of this.added) {
      this.archive.delete(id);
      this.seen.delete(id);
    }
    this.added = [];
    this.version = -1;
  }
}

/** What a served run is made of (served-open.ts puts it together). */
export interface ServedParts {
  runId: string;
  config: RunConfig;
  records: ServedRecords;
  sandbox: Sandbox;
  verifier: Verifier;
  graphs: GraphSink[];
  gate: Gate;
  space: TaskSpace;
  probes: Probe[];
  cur: Curriculum;
  now: () => number;
  log: (line: string) => void;
  /** How a stopped run goes on, for the message of a failed commit. */
  resumeHint: string;
  /** Fault points armed by tests and the chaos bench (faults.ts); none in normal use. */
  faults?: Faults;
  /** Records the run's end (SQLite: its status and run event; a PostgreSQL run goes on while any replica serves it). */
  onClose(status: 'stopped' | 'finished', step: number): Promise<void>;
}
