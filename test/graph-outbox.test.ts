// The outbox drain and the mastery semantics, on the embedded store (no server needed): batches are
// marked done only after the graph acknowledged them, a failing graph leaves the backlog pending, and
// random learn/forget streams, replayed with duplicates and any batching, match a reference model.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openSkillGraph } from '../graphs/index.js';
import { drainOutbox, replayAll } from '../graphs/testing.js';
import type { GraphEvent, Mastery, SkillGraph } from '../graphs/testing.js';
import { AT, MemoryOutbox, mastery, runEvents } from './graph-helpers.js';

/** Wraps a graph; while `down`, apply() throws like an unreachable server. */
function flaky(inner: SkillGraph) {
  const state = { down: false, calls: 0 };
  const g: SkillGraph = Object.create(inner);
  g.apply = async (events) => {
    state.calls++;
    if (state.down) throw new Error('cannot reach Neo4j at bolt://127.0.0.1:1 (is it running?)\nstack…');
    return inner.apply(events);
  };
  return { g, state };
}

describe('drainOutbox', () => {
  it('delivers in order, in batches, and marks done after each acknowledged batch', async () => {
    const graph = await openSkillGraph({ kind: 'embedded', db: ':memory:' });
    const outbox = new MemoryOutbox();
    outbox.push(...runEvents());
    const r = await drainOutbox(outbox, graph, { batchSize: 5 });
    expect(r).toEqual({ applied: 17, pending: 0 });
    expect(outbox.marks).toEqual([5, 10, 15, 17]);
    const ref = await openSkillGraph({ kind: 'embedded', db: ':memory:' });
    await ref.apply(runEvents());
    expect(await graph.snapshot()).toEqual(await ref.snapshot());
    expect(await drainOutbox(outbox, graph, { batchSize: 5 })).toEqual({ applied: 0, pending: 0 });
  });

  it('leaves events pending while the graph is down and drains the backlog when it is back', async () => {
    const inner = await openSkillGraph({ kind: 'embedded', db: ':memory:' });
    const { g, state } = flaky(inner);
    const outbox = new MemoryOutbox();
    const events = runEvents();
    outbox.push(...events.slice(0, 6));
    expect((await drainOutbox(outbox, g, { batchSize: 4 })).applied).toBe(6);

    state.down = true;
    outbox.push(...events.slice(6, 12));
    const down = await drainOutbox(outbox, g, { batchSize: 4 });
    expect(down.applied).toBe(0);
    expect(down.pending).toBe(6);
    expect(down.error).toBe('cannot reach Neo4j at bolt://127.0.0.1:1 (is it running?)');
    expect(outbox.doneUpTo).toBe(6);

    outbox.push(...events.slice(12)); // the run goes on, the outbox grows
    state.down = false;
    const up = await drainOutbox(outbox, g, { batchSize: 4 });
    expect(up).toEqual({ applied: 11, pending: 0 });
    const ref = await openSkillGraph({ kind: 'embedded', db: ':memory:' });
    await ref.apply(events);
    expect(await inner.snapshot()).toEqual(await ref.snapshot());
  });

  it('a batch applied but not marked (crash in between) is resent harmlessly', async () => {
    const graph = await openSkillGraph({ kind: 'embedded', db: ':memory:' });
    const outbox = new MemoryOutbox();
    outbox.push(...runEvents());
    await graph.apply(outbox.pending(10).map((r) => r.event)); // applied, never marked
    await drainOutbox(outbox, graph, { batchSize: 100 });
    const ref = await openSkillGraph({ kind: 'embedded', db: ':memory:' });
    await ref.apply(runEvents());
    expect(await graph.snapshot()).toEqual(await ref.snapshot());
  });

  it('replayAll rebuilds a fresh graph from the event stream', async () => {
    const g = await openSkillGraph({ kind: 'embedded', db: ':memory:' });
    const n = await replayAll(runEvents(), g, { batchSize: 4 });
    expect(n).toBe(17);
    expect((await g.counts()).MASTERED).toBe(4);
    expect(await replayAll([], g)).toBe(0);
  });
});

/** Reference model of MASTERED intervals for one (run, skill), applying events one by one. */
function model(events: { event: 'learned' | 'forgotten'; step: number; accuracy: number }[]) {
  const out: { sinceStep: number; untilStep: number | null }[] = [];
  for (const e of events) {
    const open = out.find((m) => m.untilStep === null);
    if (e.event === 'learned') {
      if (out.every((m) => m.untilStep !== null && m.untilStep < e.step))
        out.push({ sinceStep: e.step, untilStep: null });
    } else if (open && open.sinceStep < e.step) {
      open.untilStep = e.step;
    }
  }
  return out.sort((a, b) => a.sinceStep - b.sinceStep);
}

describe('mastery intervals (property)', () => {
  const stream = fc.array(
    fc.record({ learned: fc.boolean(), skill: fc.constantFrom('a', 'b'), dt: fc.integer({ min: 0, max: 3 }) }),
    { maxLength: 30 },
  );

  it('an in-order stream matches the model; replaying it (duplicated, rebatched) changes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(stream, fc.integer({ min: 1, max: 7 }), async (raw, batch) => {
        let step = 0;
        const events = raw.map((r) => {
          step += r.dt;
          return mastery('r', r.skill, r.learned ? 'learned' : 'forgotten', step, 0.5);
        }) as Extract<GraphEvent, { kind: 'mastery' }>[];
        const g = await openSkillGraph({ kind: 'embedded', db: ':memory:' });
        for (let i = 0; i < events.length; i += batch) await g.apply(events.slice(i, i + batch));
        const got = await g.mastery('r');
        for (const skill of ['a', 'b']) {
          const want = model(events.filter((e) => e.skillId === skill));
          expect(
            got
              .filter((m: Mastery) => m.skillId === skill)
              .map((m) => ({ sinceStep: m.sinceStep, untilStep: m.untilStep })),
          ).toEqual(want);
        }
        const before = await g.snapshot();
        await g.apply(events.flatMap((e) => [e, e]));
        expect(await g.snapshot()).toEqual(before);
        expect(got.every((m) => m.sinceAt === AT(m.sinceStep))).toBe(true);
        await g.close();
      }),
      { numRuns: 60 },
    );
  });
});
