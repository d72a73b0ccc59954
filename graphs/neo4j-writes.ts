// The Neo4j store's writes (graphs/neo4j.ts): one UNWIND + MERGE query per kind of graph event, and
// the rows a segment of events (planSegments in common.ts) gives each query.
import neo4j from 'neo4j-driver';
import type { Segment } from './common.js';

const int = (n: number | null | undefined) => (n === null || n === undefined ? null : neo4j.int(Math.trunc(n)));

const Q = {
  skills: `
UNWIND $rows AS row
MERGE (s:Skill {id: row.id})
SET s.family = row.family, s.name = row.name, s.description = row.description, s.level = row.level
WITH s, row
OPTIONAL MATCH (s)-[old:REQUIRES]->(x:Skill) WHERE NOT x.id IN row.requires
DELETE old
WITH DISTINCT s, row
FOREACH (rid IN row.requires | MERGE (p:Skill {id: rid}) MERGE (s)-[:REQUIRES]->(p))`,
  run: `
UNWIND $rows AS row
MERGE (r:Run {id: row.runId})
SET r.preset = row.preset, r.config = row.config, r.startedAt = row.startedAt, r.status = row.status,
    r.endedAt = CASE WHEN row.hasEndedAt THEN row.endedAt ELSE r.endedAt END`,
  task: `
UNWIND $rows AS row
MERGE (t:Task {id: row.id})
SET t.type = row.type, t.family = row.family, t.level = row.level, t.program = row.program,
    t.hash = row.hash, t.prompt = row.prompt, t.solveRate = coalesce(row.solveRate, t.solveRate),
    t.proposer = coalesce(row.proposer, t.proposer)
MERGE (r:Run {id: row.runId})
MERGE (r)-[:PROPOSED {step: row.step}]->(t)
FOREACH (sid IN row.skills | MERGE (s:Skill {id: sid}) MERGE (t)-[:EXERCISES]->(s))
FOREACH (_ IN CASE WHEN row.parentId IS NULL THEN [] ELSE [1] END |
  MERGE (p:Task {id: row.parentId})
  MERGE (t)-[d:DERIVED_FROM]->(p)
  SET d.op = row.parentOp)`,
  solveRate: `
UNWIND $rows AS row
MATCH (t:Task {id: row.taskId})
SET t.solveRate = row.solveRate`,
  checkpoint: `
UNWIND $rows AS row
MERGE (r:Run {id: row.runId})
MERGE (c:Checkpoint {id: row.id})
SET c.runId = row.runId, c.step = row.step, c.path = row.path
MERGE (r)-[:SAVED]->(c)`,
  learned: `
UNWIND $rows AS row
MERGE (r:Run {id: row.runId})
MERGE (s:Skill {id: row.skillId})
WITH r, s, row
OPTIONAL MATCH (r)-[m:MASTERED]->(s)
  WHERE m.untilStep IS NULL OR m.untilStep >= row.step
WITH r, s, row, count(m) AS covering
WHERE covering = 0
CREATE (r)-[:MASTERED {sinceStep: row.step, sinceAt: row.at, accuracy: row.accuracy, baseline: row.baseline}]->(s)`,
  forgotten: `
UNWIND $rows AS row
MATCH (:Run {id: row.runId})-[m:MASTERED]->(:Skill {id: row.skillId})
WHERE m.untilStep IS NULL AND m.sinceStep < row.step
SET m.untilStep = row.step, m.untilAt = row.at, m.untilAccuracy = row.accuracy, m.untilBaseline = row.baseline`,
};

export function rowsFor(seg: Segment): { query: string; rows: Record<string, unknown>[] }[] {
  switch (seg.kind) {
    case 'skills': {
      const rows = (seg as Segment<'skills'>).events.flatMap((e) =>
        e.skills.map((s) => ({
          id: s.id,
          family: s.family,
          name: s.name,
          description: s.description,
          level: int(s.level),
          requires: [...new Set(s.requires)],
        })),
      );
      return [{ query: Q.skills, rows }];
    }
    case 'run':
      return [
        {
          query: Q.run,
          rows: (seg as Segment<'run'>).events.map((e) => ({
            runId: e.runId,
            preset: e.preset,
            config: e.config,
            startedAt: e.startedAt,
            status: e.status,
            hasEndedAt: e.endedAt !== undefined,
            endedAt: e.endedAt ?? null,
          })),
        },
      ];
    case 'task':
      return [
        {
          query: Q.task,
          rows: (seg as Segment<'task'>).events.map(({ runId, step, task: t }) => ({
            runId,
            step: int(step),
            id: t.id,
            type: t.type,
            family: t.family,
            level: int(t.level),
            program: t.program,
            hash: t.hash,
            prompt: t.prompt,
            solveRate: t.solveRate,
            proposer: t.proposer ?? null,
            skills: [...new Set(t.skills)],
            parentId: t.parent?.id ?? null,
            parentOp: t.parent?.op ?? null,
          })),
        },
      ];
    case 'solve-rate':
      return [
        {
          query: Q.solveRate,
          rows: (seg as Segment<'solve-rate'>).events.map((e) => ({ taskId: e.taskId, solveRate: e.solveRate })),
        },
      ];
    case 'checkpoint':
      return [
        {
          query: Q.checkpoint,
          rows: (seg as Segment<'checkpoint'>).events.map((e) => ({
            runId: e.runId,
            id: e.id,
            step: int(e.step),
            path: e.path,
          })),
        },
      ];
    case 'mastery': {
      const events = (seg as Segment<'mastery'>).events;
      const row = (e: (typeof events)[number]) => ({
        runId: e.runId,
        skillId: e.skillId,
        step: int(e.step),
        at: e.at,
        accuracy: e.accuracy,
        // absent in events of runs made before baselines: a null property is not stored
        baseline: e.baseline ?? null,
      });
      // each (run, skill) appears once in a segment, so learned and forgotten rows are independent
      return [
        { query: Q.learned, rows: events.filter((e) => e.event === 'learned').map(row) },
        { query: Q.forgotten, rows: events.filter((e) => e.event === 'forgotten').map(row) },
      ];
    }
  }
}
