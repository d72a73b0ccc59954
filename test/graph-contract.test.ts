// The SkillGraph contract: the same suite runs, unchanged, against the embedded store (SQLite, given
// a path and given an open handle) and the Neo4j store (the test Neo4j from test/setup/neo4j.ts).
import Database from 'better-sqlite3';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openSkillGraph } from '../graphs/index.js';
import { Neo4jSkillGraph } from '../graphs/testing.js';
import { EmbeddedSkillGraph } from '../graphs/testing.js';
import type { GraphEvent, SkillGraph } from '../graphs/testing.js';
import { compareRuns, frontier, masteryTable, renderSkills, showSkill, timeline } from '../graphs/testing.js';
import { AT, SKILLS, isCI, lockNeo4j, mastery, neo4jConnection, runEvents, task } from './graph-helpers.js';

interface Factory {
  name: string;
  /** null: not available here (reason), and the suite is skipped — or fails under CI. */
  unavailable: () => string | null;
  open: () => Promise<SkillGraph>;
  /** Empties the store between tests. */
  reset: (g: SkillGraph) => Promise<void>;
  lock?: () => Promise<() => void>;
}

const { conn, reason } = neo4jConnection();

const factories: Factory[] = [
  {
    name: 'embedded (path)',
    unavailable: () => null,
    open: () => openSkillGraph({ kind: 'embedded', db: ':memory:' }),
    reset: (g) => (g as EmbeddedSkillGraph).clear(),
  },
  {
    name: 'embedded (handle)',
    unavailable: () => null,
    open: () => {
      const db = new Database(':memory:');
      db.exec('CREATE TABLE outbox (seq INTEGER PRIMARY KEY, event TEXT)'); // a run store's table beside ours
      return openSkillGraph({ kind: 'embedded', db });
    },
    reset: (g) => (g as EmbeddedSkillGraph).clear(),
  },
  {
    name: 'neo4j',
    unavailable: () => (conn ? null : reason),
    open: () => openSkillGraph({ kind: 'neo4j', ...conn! }),
    reset: (g) => (g as Neo4jSkillGraph).clear(),
    lock: () => lockNeo4j(conn!.uri),
  },
];

describe.each(factories)('SkillGraph contract: $name', (factory) => {
  const missing = factory.unavailable();
  if (missing !== null && !isCI) {
    it.skip(`needs Neo4j: ${missing}`, () => undefined);
    return;
  }

  let g: SkillGraph;
  let release: (() => void) | undefined;
  beforeAll(async () => {
    if (missing !== null) throw new Error(`Neo4j is required under CI: ${missing}`);
    release = await factory.lock?.();
    g = await factory.open();
    await g.init(); // a second init is harmless
  }, 900_000); // may wait for another test file's hold on the Neo4j lock
  afterAll(async () => {
    await g?.close();
    release?.();
  });
  beforeEach(async () => {
    await factory.reset(g);
  });

  it('applies a run: counts of every node label and relationship type', async () => {
    await g.apply(runEvents());
    expect(await g.counts()).toEqual({
      Skill: 6,
      Task: 3,
      Run: 1,
      Checkpoint: 2,
      REQUIRES: 5,
      EXERCISES: 4,
      DERIVED_FROM: 1,
      PROPOSED: 4,
      MASTERED: 4,
      SAVED: 2,
    });
  });

  it('is idempotent: replays, duplicated events and any batching give the same graph', async () => {
    const events = runEvents();
    await g.apply(events);
    const once = await g.snapshot();
    await g.apply(events);
    expect(await g.snapshot()).toEqual(once);
    for (const e of events) await g.apply([e, e]);
    expect(await g.snapshot()).toEqual(once);

    await factory.reset(g);
    for (const e of events) await g.apply([e]);
    expect(await g.snapshot()).toEqual(once);

    await factory.reset(g);
    for (let i = 0; i < events.length; i += 3) await g.apply(events.slice(i, i + 3));
    expect(await g.snapshot()).toEqual(once);
  });

  it('keeps MASTERED temporal: forgetting closes an interval, relearning opens a new one', async () => {
    await g.apply(runEvents());
    const add = (await g.mastery('run-a')).filter((m) => m.skillId === 'arith.add');
    expect(add).toEqual([
      {
        runId: 'run-a',
        skillId: 'arith.add',
        sinceStep: 5,
        sinceAt: AT(5),
        untilStep: 20,
        untilAt: AT(20),
        accuracy: 0.9,
        untilAccuracy: 0.4,
        baseline: 0.25,
        untilBaseline: 0.25,
      },
      {
        runId: 'run-a',
        skillId: 'arith.add',
        sinceStep: 30,
        sinceAt: AT(30),
        untilStep: null,
        untilAt: null,
        accuracy: 0.95,
        untilAccuracy: null,
        baseline: 0.3,
        untilBaseline: null,
      },
    ]);
    // learned again while open, forgotten while not mastered, and a stale learned inside a closed
    // interval: all no-ops
    await g.apply([
      mastery('run-a', 'arith.add', 'learned', 35, 0.99),
      mastery('run-a', 'list.filter', 'forgotten', 36, 0.1),
      mastery('run-a', 'arith.add', 'learned', 15, 0.5),
      mastery('run-a', 'arith.add', 'forgotten', 20, 0.4),
    ]);
    expect((await g.mastery('run-a')).filter((m) => m.skillId === 'arith.add')).toEqual(add);
    expect((await g.mastery('run-a')).map((m) => `${m.skillId}@${m.sinceStep}`)).toEqual([
      'arith.add@5',
      'arith.add@30',
      'arith.mul@12',
      'list.map@5',
    ]);
    // learn/forget/learn in one batch
    await g.apply([
      mastery('run-a', 'list.filter', 'learned', 40, 0.8),
      mastery('run-a', 'list.filter', 'forgotten', 41, 0.3),
      mastery('run-a', 'list.filter', 'learned', 42, 0.85),
    ]);
    const filter = (await g.mastery('run-a')).filter((m) => m.skillId === 'list.filter');
    expect(filter.map((m) => [m.sinceStep, m.untilStep])).toEqual([
      [40, 41],
      [42, null],
    ]);
    expect(await g.mastery('no-such-run')).toEqual([]);
  });

  it('records the trivial baseline with each transition; an event without one (an older run store) reads as null', async () => {
    await g.apply(runEvents());
    const baselines = Object.fromEntries(
      (await g.mastery('run-a')).map((m) => [`${m.skillId}@${m.sinceStep}`, [m.baseline, m.untilBaseline]]),
    );
    expect(baselines).toEqual({
      'arith.add@5': [0.25, 0.25],
      'arith.add@30': [0.3, null],
      'arith.mul@12': [0.2, null],
      'list.map@5': [null, null],
    });
    // forgetting without a baseline leaves none; the snapshot carries both fields
    await g.apply([mastery('run-a', 'arith.mul', 'forgotten', 40, 0.1)]);
    const mul = (await g.snapshot()).mastered.find((m) => m.skillId === 'arith.mul');
    expect(mul).toMatchObject({ untilStep: 40, untilAccuracy: 0.1, baseline: 0.2, untilBaseline: null });
    expect(await renderSkills(g, { view: 'mastery', format: 'cypher' })).toContain('baseline: 0.25');
  });

  it('records lineage, proposals, solve rates, runs and checkpoints', async () => {
    await g.apply(runEvents());
    const t3 = await g.task('run-a-t3');
    expect(t3?.parent).toEqual({ id: 'run-a-t1', op: 'mutate' });
    expect(t3?.solveRate).toBe(0.5);
    const t1 = await g.task('run-a-t1');
    expect(t1?.solveRate).toBe(0.625); // replayed task without a rate keeps it; the later rate wins
    expect(t1?.parent).toBeNull();
    expect(await g.task('nope')).toBeNull();
    const t2 = await g.task('run-a-t2');
    expect(t2).toEqual(task('run-a-t2', { skills: ['arith.add', 'arith.mul'], level: 2, solveRate: 0 }));

    const snap = await g.snapshot();
    expect(snap.proposed).toEqual([
      { runId: 'run-a', taskId: 'run-a-t1', step: 1 },
      { runId: 'run-a', taskId: 'run-a-t1', step: 21 },
      { runId: 'run-a', taskId: 'run-a-t2', step: 1 },
      { runId: 'run-a', taskId: 'run-a-t3', step: 6 },
    ]);
    expect(snap.derivedFrom).toEqual([{ taskId: 'run-a-t3', parentId: 'run-a-t1', op: 'mutate' }]);
    expect(snap.checkpoints.map((c) => [c.id, c.runId, c.step])).toEqual([
      ['run-a-ckpt-10', 'run-a', 10],
      ['run-a-ckpt-30', 'run-a', 30],
    ]);
    const [run] = await g.runs();
    expect(run).toEqual({
      id: 'run-a',
      preset: 'default',
      config: '{"steps":40}',
      startedAt: AT(0),
      endedAt: AT(40),
      status: 'done',
    });
    const exemplars = await g.tasksForSkill('arith.add', 10);
    expect(exemplars.map((t) => t.id)).toEqual(['run-a-t1', 'run-a-t3', 'run-a-t2']);
    expect(await g.tasksForSkill('arith.add', 1)).toHaveLength(1);
  });

  it('applies a batch as if event by event (rates and re-sent tasks keep their order)', async () => {
    await g.apply([
      { kind: 'run', runId: 'r', preset: 'p', config: '{}', startedAt: AT(0), status: 'running' },
      { kind: 'task', runId: 'r', step: 1, task: task('x', { solveRate: null }) },
      { kind: 'solve-rate', taskId: 'x', solveRate: 0.5 },
      { kind: 'task', runId: 'r', step: 2, task: task('x', { solveRate: 0.3 }) },
      { kind: 'solve-rate', taskId: 'ghost', solveRate: 0.9 }, // unknown task: ignored
      { kind: 'run', runId: 'r', preset: 'p', config: '{}', startedAt: AT(0), endedAt: AT(9), status: 'done' },
      { kind: 'run', runId: 'r', preset: 'p', config: '{}', startedAt: AT(0), status: 'resumed' },
    ]);
    expect((await g.task('x'))?.solveRate).toBe(0.3);
    expect(await g.task('ghost')).toBeNull();
    const [run] = await g.runs();
    expect(run).toMatchObject({ status: 'resumed', endedAt: AT(9) });
  });

  it('redeclared skills replace their prerequisites; undeclared ones appear as stubs', async () => {
    await g.apply([{ kind: 'skills', skills: SKILLS }]);
    await g.apply([
      { kind: 'skills', skills: [{ ...SKILLS[5]!, requires: ['list.filter'], description: 'fold, v2' }] },
      { kind: 'task', runId: 'r', step: 1, task: task('y', { skills: ['str.reverse'] }) },
    ]);
    const skills = await g.skills();
    const fold = skills.find((k) => k.id === 'list.fold');
    expect(fold).toMatchObject({ requires: ['list.filter'], description: 'fold, v2', level: 3 });
    expect(skills.find((k) => k.id === 'str.reverse')).toEqual({
      id: 'str.reverse',
      family: '',
      name: 'str.reverse',
      description: '',
      requires: [],
      level: 0,
    });
    expect((await g.counts()).REQUIRES).toBe(4);
  });

  it('views: mastery table, frontier (now and at a step), timeline, show, compare', async () => {
    await g.apply([...runEvents('run-a'), ...runEvents('run-b').slice(1, 8)]);
    const rows = await masteryTable(g, 'run-a');
    const state = Object.fromEntries(rows.map((r) => [r.skillId, [r.state, r.since]]));
    expect(state).toEqual({
      'arith.add': ['mastered', 30],
      'arith.mul': ['mastered', 12],
      'arith.mod': ['never', null],
      'list.map': ['mastered', 5],
      'list.filter': ['never', null],
      'list.fold': ['never', null],
    });
    expect((await frontier(g, 'run-a')).map((f) => f.skillId)).toEqual(['list.filter', 'arith.mod', 'list.fold']);
    const at25 = await frontier(g, 'run-a', 25);
    expect(at25.map((f) => [f.skillId, f.state])).toEqual([
      ['arith.add', 'forgotten'],
      ['list.filter', 'never'],
      ['arith.mod', 'never'],
    ]);
    expect((await timeline(g, 'run-a')).map((e) => `${e.step}:${e.event}:${e.skillId}`)).toEqual([
      '5:learned:arith.add',
      '5:learned:list.map',
      '12:learned:arith.mul',
      '20:forgotten:arith.add',
      '30:learned:arith.add',
    ]);
    const show = await showSkill(g, 'arith.mul', { runId: 'run-a' });
    expect(show.prerequisites).toEqual([{ skillId: 'arith.add', name: 'addition', state: 'mastered' }]);
    expect(show.dependents.map((d) => d.skillId)).toEqual(['arith.mod']);
    expect(show.exemplars.map((t) => [t.id, t.solveRate])).toEqual([['run-a-t2', 0]]);
    expect((await showSkill(g, 'arith.mul')).exemplars.map((t) => t.id)).toEqual(['run-a-t2', 'run-b-t2']);
    await expect(showSkill(g, 'nope')).rejects.toThrow(/no skill 'nope'/);

    const cmp = await compareRuns(g, 'run-a', 'run-b');
    expect(cmp.filter((r) => !r.same).map((r) => r.skillId)).toEqual(['arith.mul']);
    await expect(compareRuns(g, 'run-a', 'run-z')).rejects.toThrow(/no run 'run-z'/);

    const table = await renderSkills(g, { view: 'mastery', runId: 'run-a' });
    expect(table).toMatch(/3 of 6 skills mastered/);
    expect(table).toMatch(/arith\.add\s+addition\s+arith\s+1\s+mastered\s+30\s+95%\s+30%\s+2/);
    // list.map's event has no baseline (an older run store): it is counted apart
    expect(table).toMatch(
      /3 of 6 skills mastered, 2 of them above their trivial baseline by 55%–65% \(1 recorded without one\)/,
    );
    const json = JSON.parse(await renderSkills(g, { view: 'frontier', runId: 'run-a', format: 'json' }));
    expect(json.frontier).toHaveLength(3);
    expect(await renderSkills(g, { view: 'timeline', runId: 'run-a' })).toMatch(
      /20\s+forgotten\s+arith\.add\s+40%\s+25%/,
    );
    const dot = await renderSkills(g, { view: 'mastery', runId: 'run-a', format: 'dot' });
    expect(dot).toMatch(/^digraph/);
    expect(dot).toContain('"list.fold" -> "arith.add";');
    const graphml = await renderSkills(g, { view: 'show', skill: 'arith.mul', runId: 'run-a', format: 'graphml' });
    expect(graphml).toContain('<node id="skill:arith.mul">');
    expect(graphml).toContain('EXERCISES');
    const cypher = await renderSkills(g, { view: 'mastery', format: 'cypher' });
    expect(cypher).toContain('MERGE (n:Skill {id: "arith.add"})');
    expect(cypher).toContain('[m:MASTERED {sinceStep: 30}]');
    expect(await renderSkills(g, { view: 'compare', runIds: ['run-a', 'run-b'] })).toMatch(/1 of 6 skills differ/);
    // the latest run is the default
    expect(await renderSkills(g, { view: 'mastery' })).toMatch(/^run run-/);
  });

  it('empty graph: zero counts, helpful errors from views', async () => {
    const counts = await g.counts();
    expect(Object.values(counts).every((n) => n === 0)).toBe(true);
    expect(await g.skills()).toEqual([]);
    await expect(renderSkills(g, { view: 'mastery' })).rejects.toThrow(/no runs yet/);
  });
});

// keep the type import used when every suite is skipped
export type { GraphEvent };
