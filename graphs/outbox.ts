// Draining the run store's outbox into a skill graph. The run store writes GraphEvents to its outbox
// table in each step's transaction; drainOutbox delivers them in order, in batches, and marks a batch
// done only after the graph acknowledged it (apply is idempotent, so a batch that failed half-way, or
// was applied but not marked, is simply sent again). When the graph is down the error is returned,
// not thrown: the run goes on, the outbox grows, and a later drain delivers the backlog.
import type { GraphEvent, OutboxSource, SkillGraph } from './types.js';

export interface DrainResult {
  /** Events the graph acknowledged in this call. */
  applied: number;
  /** Events still undelivered after this call (counted up to `maxPendingCount`). */
  pending: number;
  /** The graph's error, when a batch failed (the batch stays pending). */
  error?: string;
}

export async function drainOutbox(
  source: OutboxSource,
  graph: SkillGraph,
  opts: { batchSize?: number; maxBatches?: number; maxPendingCount?: number } = {},
): Promise<DrainResult> {
  const batchSize = Math.max(1, opts.batchSize ?? 500);
  const maxBatches = opts.maxBatches ?? Infinity;
  const countLimit = opts.maxPendingCount ?? 100_000;
  let applied = 0;
  for (let n = 0; n < maxBatches; n++) {
    const batch = await source.pending(batchSize);
    if (batch.length === 0) break;
    try {
      await graph.apply(batch.map((b) => b.event));
    } catch (e) {
      const message = e instanceof Error ? e.message.split('\n')[0] : String(e);
      return { applied, pending: (await source.pending(countLimit)).length, error: message };
    }
    await source.markDone(batch.reduce((m, b) => Math.max(m, b.seq), -Infinity));
    applied += batch.length;
    if (batch.length < batchSize) break;
  }
  return { applied, pending: (await source.pending(countLimit)).length };
}

/**
 * Replays a whole event stream (a run's outbox, delivered or not) into a graph, in batches: for
 * `cogen skills sync`, also into a fresh Neo4j. Idempotent: replaying into a graph that already has
 * the events changes nothing. Returns the number of events applied.
 */
export async function replayAll(
  events: Iterable<GraphEvent>,
  graph: SkillGraph,
  opts: { batchSize?: number } = {},
): Promise<number> {
  const batchSize = Math.max(1, opts.batchSize ?? 1000);
  let batch: GraphEvent[] = [];
  let total = 0;
  for (const e of events) {
    batch.push(e);
    if (batch.length >= batchSize) {
      await graph.apply(batch);
      total += batch.length;
      batch = [];
    }
  }
  if (batch.length > 0) {
    await graph.apply(batch);
    total += batch.length;
  }
  return total;
}
