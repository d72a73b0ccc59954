// Neo4j-only checks: one clear line for each connection problem, the Neo4j store ending identical to
// the embedded store for the same long event stream (applied in different batchings), the Cypher
// export recreating a graph, and the outbox backlog surviving an unreachable server.
import neo4j from 'neo4j-driver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GraphConnectionError, openSkillGraph } from '../graphs/index.js';
import { docsQuery, Neo4jSkillGraph } from '../graphs/testing.js';
import { drainOutbox } from '../graphs/testing.js';
import type { GraphEvent, SkillGraph } from '../graphs/testing.js';
import { cypherStatements, masteryTable, renderSkills } from '../graphs/index.js';
import { MemoryOutbox, SKILLS, isCI, lockNeo4j, mastery, neo4jConnection, runEvents, task } from './graph-helpers.js';

const { conn, reason } = neo4jConnection();

/** A long, deterministic stream: 3 runs, mutations, replays, rates, learn/forget cycles. */
function longStream(seed = 7): GraphEvent[] {
  let x = seed;
  const rnd = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
  const events: GraphEvent[] = [{ kind: 'skills', skills: SKILLS }];
  for (const runId of ['r1', 'r2', 'r3']) {
    events.push({
      kind: 'run',
      runId,
      preset: 'p',
      config: '{}',
      startedAt: `2026-01-0${runId.at(-1)}T00:00:00Z`,
      status: 'running',
    });
    const tasks: string[] = [];
    for (let step = 1; step <= 60; step++) {
      for (let b = 0; b < 3; b++) {
        const id =
          rnd() < 0.2 && tasks.length > 0 ? tasks[Math.floor(rnd() * tasks.length)]! : `${runId}-s${step}-${b}`;
        const parent =
          rnd() < 0.3 && tasks.length > 0 ? { id: tasks[Math.floor(rnd() * tasks.length)]!, op: 'mutate' } : null;
        const skills = SKILLS.filter(() => rnd() < 0.3).map((s) => s.id);
        events.push({
          kind: 'task',
          runId,
          step,
          task: task(id, { parent: parent?.id === id ? null : parent, skills, level: 1 + (step % 4) }),
        });
        if (rnd() < 0.7) events.push({ kind: 'solve-rate', taskId: id, solveRate: Math.round(rnd() * 8) / 8 });
        tasks.push(id);
      }
      for (const s of SKILLS)
        if (rnd() < 0.08)
          events.push(mastery(runId, s.id, rnd() < 0.6 ? 'learned' : 'forgotten', step, Math.round(rnd() * 100) / 100));
      if (step % 20 === 0)
        events.push({ kind: 'checkpoint', runId, id: `${runId}-c${step}`, step, path: `runs/${runId}/c${step}` });
    }
    events.push({
      kind: 'run',
      runId,
      preset: 'p',
      config: '{}',
      startedAt: `2026-01-0${runId.at(-1)}T00:00:00Z`,
      endedAt: '2026-02-01T00:00:00Z',
      status: 'done',
    });
  }
  return events;
}

describe('Neo4j connection errors', () => {
  if (!conn && !isCI) {
    it.skip(`needs Neo4j: ${reason}`, () => undefined);
    return;
  }
  const expectOneLine = async (p: Promise<unknown>, why: GraphConnectionError['reason'], re: RegExp) => {
    const e = await p.then(
      () => null,
      (err: unknown) => err,
    );
    expect(e).toBeInstanceOf(GraphConnectionError);
    const err = e as GraphConnectionError;
    expect(err.reason).toBe(why);
    expect(err.message).toMatch(re);
    expect(err.message).not.toContain('\n');
  };
  it('names each problem in one line', async () => {
    if (!conn) throw new Error(`Neo4j is required under CI: ${reason}`);
    await expectOneLine(
      openSkillGraph({ kind: 'neo4j', ...conn, password: 'wrong-password' }),
      'credentials',
      /rejected the credentials of user 'neo4j'/,
    );
    await expectOneLine(
      openSkillGraph({ kind: 'neo4j', ...conn, database: 'nosuchdb' }),
      'database',
      /has no database 'nosuchdb'/,
    );
    await expectOneLine(
      openSkillGraph({ kind: 'neo4j', ...conn, uri: 'bolt://127.0.0.1:1', connectionTimeoutMs: 2000 }),
      'unreachable',
      /cannot reach Neo4j at bolt:\/\/127\.0\.0\.1:1/,
    );
    await expectOneLine(
      openSkillGraph({ kind: 'neo4j', ...conn, uri: 'http//nonsense' }),
      'uri',
      /invalid Neo4j URI 'http\/\/nonsense'/,
    );
  });
});

describe('Neo4j store against the embedded store', () => {
  if (!conn && !isCI) {
    it.skip(`needs Neo4j: ${reason}`, () => undefined);
    return;
  }
  let neo: Neo4jSkillGraph;
  let release: (() => void) | undefined;
  beforeAll(async () => {
    if (!conn) throw new Error(`Neo4j is required under CI: ${reason}`);
    release = await lockNeo4j(conn.uri);
    neo = (await openSkillGraph({ kind: 'neo4j', ...conn })) as Neo4jSkillGraph;
  }, 900_000); // may wait for another test file's hold on the Neo4j lock
  afterAll(async () => {
    await neo?.close();
    release?.();
  });

  it('ends with exactly the same graph for the same long event stream, whatever the batching', async () => {
    await neo.clear();
    const events = longStream();
    const emb = await openSkillGraph({ kind: 'embedded', db: ':memory:' });
    for (const e of events) await emb.apply([e]);
    for (let i = 0; i < events.length; i += 97) await neo.apply(events.slice(i, i + 97));
    const want = await emb.snapshot();
    expect(await neo.counts()).toEqual(await emb.counts());
    expect(await neo.snapshot()).toEqual(want);
    expect(want.mastered.length).toBeGreaterThan(10);
    expect(want.derivedFrom.length).toBeGreaterThan(10);
    // replaying everything in one batch changes nothing
    await neo.apply(events);
    expect(await neo.snapshot()).toEqual(want);
    for (const run of ['r1', 'r2', 'r3']) {
      expect(await renderSkills(neo, { view: 'mastery', runId: run })).toEqual(
        await renderSkills(emb, { view: 'mastery', runId: run }),
      );
    }
  });

  it("docs/graph.md's query for the skills a run has mastered now returns what `cogen skills` lists as mastered", async () => {
    await neo.clear();
    const events = longStream(11);
    const emb = await openSkillGraph({ kind: 'embedded', db: ':memory:' });
    await emb.apply(events);
    await neo.apply(events);
    const query = docsQuery('The skills a run has mastered now');
    const driver = neo4j.driver(conn!.uri, neo4j.auth.basic(conn!.user, conn!.password));
    const session = driver.session({ database: conn!.database });
    try {
      let mastered = 0;
      for (const run of ['r1', 'r2', 'r3']) {
        const got = (await session.run(query, { run })).records.map((r) => r.get('s.id') as string);
        const want = (await masteryTable(emb, run))
          .filter((r) => r.state === 'mastered')
          .map((r) => r.skillId)
          .sort();
        expect(got).toEqual(want);
        mastered += want.length;
      }
      expect(mastered).toBeGreaterThan(0); // the stream leaves some skills mastered, so the check can fail
    } finally {
      await session.close();
      await driver.close();
      await emb.close();
    }
  });

  it('the Cypher export recreates the graph in an empty database', async () => {
    await neo.clear();
    const emb = await openSkillGraph({ kind: 'embedded', db: ':memory:' });
    await emb.apply([...runEvents('run-a'), ...runEvents('run-b')]);
    const script = await renderSkills(emb, { view: 'mastery', format: 'cypher' });
    const session = (neo as unknown as { driver: import('neo4j-driver').Driver }).driver.session({
      database: conn!.database,
    });
    try {
      for (const st of cypherStatements(script)) await session.run(st);
    } finally {
      await session.close();
    }
    expect(await neo.snapshot()).toEqual(await emb.snapshot());
  });

  it('an unreachable Neo4j leaves the outbox pending; the backlog drains when it is back', async () => {
    await neo.clear();
    const down: SkillGraph = new Neo4jSkillGraph({
      ...conn!,
      uri: 'bolt://127.0.0.1:1',
      retryTimeMs: 500,
      connectionTimeoutMs: 1000,
    });
    const outbox = new MemoryOutbox();
    outbox.push(...runEvents());
    const r = await drainOutbox(outbox, down, { batchSize: 5 });
    expect(r.applied).toBe(0);
    expect(r.pending).toBe(17);
    expect(r.error).toMatch(/ECONNREFUSED 127\.0\.0\.1:1/);
    expect(outbox.doneUpTo).toBe(0);
    await down.close();
    expect(await drainOutbox(outbox, neo, { batchSize: 5 })).toEqual({ applied: 17, pending: 0 });
    const emb = await openSkillGraph({ kind: 'embedded', db: ':memory:' });
    await emb.apply(runEvents());
    expect(await neo.snapshot()).toEqual(await emb.snapshot());
  });
});
