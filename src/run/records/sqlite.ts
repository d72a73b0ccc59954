// A served run's records in the run's own SQLite file (runs/<id>/run.db): the embedded default, as
// before there were replicas. One process writes it, so the writer lock is the process itself: a
// commit is one better-sqlite3 transaction, and a commit that fails stops the run (the file holds
// the last commit, and `cogen serve --resume` goes on from there).
import type Database from 'better-sqlite3';
import { RunStore, type StepRecord } from './store.js';
import { flushGraphs, type GraphSink } from '../parts.js';
import type { GraphEvent } from '../../../graphs/index.js';
import type { Prefetch, ServedRecords, WriteOp, WriterTx } from './types.js';

export class SqliteRecords implements ServedRecords {
  readonly kind = 'sqlite' as const;
  readonly recoverable = false;
  readonly text = (s: string): string => s;

  constructor(readonly store: RunStore) {}

  get where(): string {
    return this.store.dir;
  }

  async getMeta(key: string) {
    return this.store.getMeta(key);
  }

  async setMeta(values: Record<string, string>) {
    this.store.setMeta(values);
  }

  async appendOutbox(step: number, events: GraphEvent[]) {
    this.store.appendOutbox(step, events);
  }

  writer<T>(fn: (tx: WriterTx) => Promise<T>): Promise<T> {
    const store = this.store;
    return fn({
      state: async (known) => ({ version: known, snapshot: null }),
      tasksSince: async (cursor) => ({ tasks: [], cursor }),
      expire: async (now) => void store.expireIssues(now),
      prefetch: async (keys, taskIds) => prefetch(store, keys, taskIds),
      commit: async (ops, snapshot) =>
        store.transaction(() => {
          for (const op of ops) applyOp(store, op);
          store.setMeta({ served: snapshot });
        }),
    });
  }

  async latest(known: number) {
    return { version: known, snapshot: null };
  }

  async tasksSince(cursor: number) {
    return { tasks: [], cursor };
  }

  async task(id: string) {
    return this.store.task(id);
  }

  async request(key: string) {
    return this.store.request(key);
  }

  async episodesOf(step: number) {
    return this.store.episodesOf(step);
  }

  async issueCounts() {
    return this.store.issueCounts();
  }

  graphDb(): Database.Database {
    return this.store.db;
  }

  drain(sinks: GraphSink[], batchSize: number, log: (line: string) => void): Promise<number> {
    return flushGraphs(sinks, this.store, batchSize, log);
  }

  async ping() {
    return this.store.db.open ? null : 'the run store is closed';
  }

  async close() {
    this.store.close();
  }
}

function prefetch(store: RunStore, keys: string[], taskIds: string[]): Prefetch {
  const requests = new Map(
    keys.flatMap((k) => {
      const r = store.request(k);
      return r ? [[k, r] as const] : [];
    }),
  );
  const wanted = new Map<string, number>();
  for (const id of taskIds) wanted.set(id, (wanted.get(id) ?? 0) + 1);
  const openIssues = new Map([...wanted].map(([id, n]) => [id, store.openIssues(id, n)]));
  const scores = new Map([...wanted.keys()].map((id) => [id, store.taskScore(id)]));
  return { requests, openIssues, scores };
}

/** One write, through the store's own transactions (savepoints inside the commit's). */
export function applyOp(store: RunStore, op: WriteOp): void {
  switch (op.op) {
    case 'issue':
      store.issueTasks({ step: op.step, newTasks: op.newTasks, issues: op.issues, outbox: op.outbox });
      return;
    case 'step':
      store.commitStep(op.record satisfies StepRecord);
      return;
    case 'events':
      store.commitEvents({ step: op.step, outbox: op.outbox, ...(op.metrics ? { metrics: op.metrics } : {}) });
      return;
    case 'env-episode':
      store.addEnvEpisodes(op.step, [{ spec: op.spec, trajectory: op.trajectory }]);
  }
}
