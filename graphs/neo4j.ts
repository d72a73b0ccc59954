// The skill graph in Neo4j (5.x), through the official neo4j-driver. Schema: graphs/schema.cypher,
// applied idempotently at init(). Writes: apply() turns a batch of events into a few UNWIND + MERGE
// queries (neo4j-writes.ts; see planSegments in common.ts) run in ONE managed write transaction
// (executeWrite: the driver retries transient errors, and a failed batch leaves nothing behind, so
// the outbox can simply resend it). MASTERED is temporal (the MASTERED rules in common.ts): `learned`
// at step s opens an interval {sinceStep: s} unless one is open or closed at or after s; `forgotten`
// at s closes the open interval begun before s (untilStep/untilAt); nothing is ever deleted.
// Integer properties (level, step, sinceStep, untilStep) are stored as Neo4j integers.
import neo4j, { type Driver, type ManagedTransaction } from 'neo4j-driver';
import type { Skill } from '../core/task.js';
import { COUNT_KEYS, GraphConnectionError, byMastery, canonicalize, planSegments } from './common.js';
import { rowsFor } from './neo4j-writes.js';
import { schemaStatements } from './schema.js';
import type { GraphEvent, GraphRun, GraphSnapshot, GraphTask, Mastery, SkillGraph } from './types.js';

export interface Neo4jOptions {
  uri: string;
  user: string;
  password: string;
  /** Defaults to the server's default database (`neo4j`). */
  database?: string;
  /** How long executeWrite keeps retrying transient errors (ms); default 5000. */
  retryTimeMs?: number;
  /** Connection timeout (ms); default 5000. */
  connectionTimeoutMs?: number;
}

/** Maps a driver error met while connecting to a one-line GraphConnectionError. */
export function connectionError(
  e: unknown,
  uri: string,
  user: string,
  database: string | undefined,
): GraphConnectionError {
  const err = e as { code?: string; message?: string };
  const code = err.code ?? '';
  const msg = (err.message ?? String(e)).split('\n')[0] ?? '';
  if (code === 'Neo.ClientError.Security.Unauthorized' || code === 'Neo.ClientError.Security.AuthenticationRateLimit') {
    return new GraphConnectionError(
      `Neo4j at ${uri} rejected the credentials of user '${user}' (check NEO4J_USER / NEO4J_PASSWORD)`,
      'credentials',
      { cause: e },
    );
  }
  if (code === 'Neo.ClientError.Database.DatabaseNotFound') {
    return new GraphConnectionError(
      `Neo4j at ${uri} has no database '${database ?? 'neo4j'}' (check NEO4J_DATABASE; Community has only 'neo4j')`,
      'database',
      { cause: e },
    );
  }
  if (
    code === 'ServiceUnavailable' ||
    code === 'SessionExpired' ||
    /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|connect/i.test(msg)
  ) {
    return new GraphConnectionError(
      `cannot reach Neo4j at ${uri} (is it running? \`npm run neo4j\` starts a local one; check NEO4J_URI)`,
      'unreachable',
      { cause: e },
    );
  }
  return new GraphConnectionError(`Neo4j at ${uri}: ${msg}`, 'other', { cause: e });
}

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

export class Neo4jSkillGraph implements SkillGraph {
  readonly kind = 'neo4j' as const;
  readonly uri: string;
  readonly database: string | undefined;
  private readonly driver: Driver;
  private readonly user: string;

  constructor(opts: Neo4jOptions) {
    this.uri = opts.uri;
    this.user = opts.user;
    this.database = opts.database || undefined;
    try {
      this.driver = neo4j.driver(opts.uri, neo4j.auth.basic(opts.user, opts.password), {
        disableLosslessIntegers: true,
        maxTransactionRetryTime: opts.retryTimeMs ?? 5000,
        connectionTimeout: opts.connectionTimeoutMs ?? 5000,
        connectionAcquisitionTimeout: (opts.connectionTimeoutMs ?? 5000) * 2,
        userAgent: 'cogen-skill-graph',
      });
    } catch (e) {
      throw new GraphConnectionError(
        `invalid Neo4j URI '${opts.uri}': ${(e as Error).message.split('\n')[0]} (expected e.g. bolt://127.0.0.1:7687 or neo4j+s://host)`,
        'uri',
        { cause: e },
      );
    }
  }

  /** Checks that the server answers, the credentials hold and the database exists. */
  async connect(): Promise<void> {
    try {
      await this.driver.executeQuery('RETURN 1 AS ok', {}, { database: this.database });
    } catch (e) {
      throw connectionError(e, this.uri, this.user, this.database);
    }
  }

  private read<T = Record<string, unknown>>(query: string, params: Record<string, unknown> = {}): Promise<T[]> {
    return this.driver
      .executeQuery(query, params, { database: this.database, routing: neo4j.routing.READ })
      .then((r) => r.records.map((rec) => rec.toObject() as T));
  }

  async init(): Promise<void> {
    const session = this.driver.session({ database: this.database });
    try {
      // schema commands cannot share a transaction with writes: one auto-commit query each
      for (const statement of schemaStatements()) await session.run(statement);
      await session.run('CALL db.awaitIndexes(300)');
    } catch (e) {
      throw connectionError(e, this.uri, this.user, this.database);
    } finally {
      await session.close();
    }
  }

  async apply(events: GraphEvent[]): Promise<void> {
    if (events.length === 0) return;
    const work = planSegments(events)
      .flatMap(rowsFor)
      .filter((w) => w.rows.length > 0);
    const session = this.driver.session({ database: this.database, defaultAccessMode: neo4j.session.WRITE });
    try {
      await session.executeWrite(async (tx: ManagedTransaction) => {
        // pipelined: every query is sent at once, the server runs them in order in this transaction
        const results = work.map((w) => tx.run(w.query, { rows: w.rows }));
        await Promise.all(results.map((r) => r.summary()));
      });
    } finally {
      await session.close();
    }
  }

  async skills(): Promise<Skill[]> {
    const rows = await this.read<{ s: Record<string, unknown>; requires: string[] }>(
      `MATCH (s:Skill) OPTIONAL MATCH (s)-[:REQUIRES]->(p:Skill)
       WITH s, p ORDER BY p.id
       RETURN s {.*} AS s, collect(p.id) AS requires ORDER BY s.id`,
    );
    return rows.map(({ s, requires }) => ({
      id: String(s.id),
      family: str(s.family) ?? '',
      name: str(s.name) ?? String(s.id),
      description: str(s.description) ?? '',
      requires,
      level: num(s.level) ?? 0,
    }));
  }

  async mastery(runId: string): Promise<Mastery[]> {
    const rows = await this.read<{ skillId: string; m: Record<string, unknown> }>(
      `MATCH (:Run {id: $runId})-[m:MASTERED]->(s:Skill) RETURN s.id AS skillId, m {.*} AS m`,
      { runId },
    );
    return rows.map(({ skillId, m }) => toMastery(runId, skillId, m)).sort(byMastery);
  }

  async tasksForSkill(skillId: string, limit: number, runId?: string): Promise<GraphTask[]> {
    const rows = await this.read<{
      t: Record<string, unknown>;
      skills: string[];
      parentId: string | null;
      op: string | null;
    }>(
      `MATCH (t:Task)-[:EXERCISES]->(:Skill {id: $skillId})
       WHERE $runId IS NULL OR EXISTS { (:Run {id: $runId})-[:PROPOSED]->(t) }
       WITH t ORDER BY t.solveRate IS NULL, coalesce(t.level, 1000000000), t.id LIMIT $limit
       OPTIONAL MATCH (t)-[:EXERCISES]->(s:Skill)
       WITH t, s ORDER BY s.id
       WITH t, collect(s.id) AS skills
       OPTIONAL MATCH (t)-[d:DERIVED_FROM]->(p:Task)
       WITH t, skills, p, d ORDER BY p.id
       WITH t, skills, head(collect([p.id, d.op])) AS parent
       RETURN t {.*} AS t, skills, parent[0] AS parentId, parent[1] AS op
       ORDER BY t.solveRate IS NULL, coalesce(t.level, 1000000000), t.id`,
      { skillId, runId: runId ?? null, limit: neo4j.int(Math.max(0, Math.trunc(limit))) },
    );
    return rows.map((r) => toTask(r.t, r.skills, r.parentId, r.op));
  }

  async task(taskId: string): Promise<GraphTask | null> {
    const rows = await this.read<{
      t: Record<string, unknown>;
      skills: string[];
      parentId: string | null;
      op: string | null;
    }>(
      `MATCH (t:Task {id: $taskId})
       OPTIONAL MATCH (t)-[:EXERCISES]->(s:Skill)
       WITH t, s ORDER BY s.id
       WITH t, collect(s.id) AS skills
       OPTIONAL MATCH (t)-[d:DERIVED_FROM]->(p:Task)
       WITH t, skills, p, d ORDER BY p.id
       WITH t, skills, head(collect([p.id, d.op])) AS parent
       RETURN t {.*} AS t, skills, parent[0] AS parentId, parent[1] AS op`,
      { taskId },
    );
    const r = rows[0];
    return r ? toTask(r.t, r.skills, r.parentId, r.op) : null;
  }

  async counts(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const key of COUNT_KEYS) {
      const isRel = key === key.toUpperCase();
      const q = isRel ? `MATCH ()-[x:${key}]->() RETURN count(x) AS n` : `MATCH (x:${key}) RETURN count(x) AS n`;
      const [row] = await this.read<{ n: number }>(q);
      out[key] = Number(row?.n ?? 0);
    }
    return out;
  }

  async runs(): Promise<GraphRun[]> {
    const rows = await this.read<{ r: Record<string, unknown> }>(
      'MATCH (r:Run) RETURN r {.*} AS r ORDER BY r.startedAt, r.id',
    );
    return rows.map(({ r }) => toRun(r));
  }

  async snapshot(): Promise<GraphSnapshot> {
    const [skills, requires, runs, tasks, exercises, derivedFrom, proposed, mastered, checkpoints, saved] =
      await Promise.all([
        this.read<{ s: Record<string, unknown> }>('MATCH (s:Skill) RETURN s {.*} AS s'),
        this.read<{ skillId: string; requiresId: string }>(
          'MATCH (a:Skill)-[:REQUIRES]->(b:Skill) RETURN a.id AS skillId, b.id AS requiresId',
        ),
        this.read<{ r: Record<string, unknown> }>('MATCH (r:Run) RETURN r {.*} AS r'),
        this.read<{ t: Record<string, unknown> }>('MATCH (t:Task) RETURN t {.*} AS t'),
        this.read<{ taskId: string; skillId: string }>(
          'MATCH (t:Task)-[:EXERCISES]->(s:Skill) RETURN t.id AS taskId, s.id AS skillId',
        ),
        this.read<{ taskId: string; parentId: string; op: string | null }>(
          'MATCH (t:Task)-[d:DERIVED_FROM]->(p:Task) RETURN t.id AS taskId, p.id AS parentId, d.op AS op',
        ),
        this.read<{ runId: string; taskId: string; step: number }>(
          'MATCH (r:Run)-[p:PROPOSED]->(t:Task) RETURN r.id AS runId, t.id AS taskId, p.step AS step',
        ),
        this.read<{ runId: string; skillId: string; m: Record<string, unknown> }>(
          'MATCH (r:Run)-[m:MASTERED]->(s:Skill) RETURN r.id AS runId, s.id AS skillId, m {.*} AS m',
        ),
        this.read<{ c: Record<string, unknown> }>('MATCH (c:Checkpoint) RETURN c {.*} AS c'),
        this.read<{ runId: string; checkpointId: string }>(
          'MATCH (r:Run)-[:SAVED]->(c:Checkpoint) RETURN r.id AS runId, c.id AS checkpointId',
        ),
      ]);
    return canonicalize({
      skills: skills.map(({ s }) => ({
        id: String(s.id),
        family: str(s.family),
        name: str(s.name),
        description: str(s.description),
        level: num(s.level),
      })),
      requires,
      runs: runs.map(({ r }) => toRun(r)),
      tasks: tasks.map(({ t }) => ({
        id: String(t.id),
        type: str(t.type),
        family: str(t.family),
        level: num(t.level),
        program: str(t.program),
        hash: str(t.hash),
        prompt: str(t.prompt),
        solveRate: num(t.solveRate),
      })),
      exercises,
      derivedFrom: derivedFrom.map((d) => ({ ...d, op: d.op ?? null })),
      proposed: proposed.map((p) => ({ ...p, step: Number(p.step) })),
      mastered: mastered.map(({ runId, skillId, m }) => toMastery(runId, skillId, m)),
      checkpoints: checkpoints.map(({ c }) => ({
        id: String(c.id),
        runId: String(c.runId),
        step: num(c.step),
        path: str(c.path),
      })),
      saved,
    });
  }

  /** Deletes every node and relationship of the database (tests, `skills sync --fresh`). */
  async clear(): Promise<void> {
    await this.driver
      .executeQuery(
        'MATCH (n) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS',
        {},
        {
          database: this.database,
        },
      )
      .catch(async () => {
        await this.driver.executeQuery('MATCH (n) DETACH DELETE n', {}, { database: this.database });
      });
  }

  async close(): Promise<void> {
    await this.driver.close();
  }
}

function toMastery(runId: string, skillId: string, m: Record<string, unknown>): Mastery {
  return {
    runId,
    skillId,
    sinceStep: Number(m.sinceStep),
    sinceAt: String(m.sinceAt),
    untilStep: num(m.untilStep),
    untilAt: str(m.untilAt),
    accuracy: Number(m.accuracy),
    untilAccuracy: num(m.untilAccuracy),
    baseline: num(m.baseline),
    untilBaseline: num(m.untilBaseline),
  };
}

function toRun(r: Record<string, unknown>): GraphRun {
  return {
    id: String(r.id),
    preset: str(r.preset),
    config: str(r.config),
    startedAt: str(r.startedAt),
    endedAt: str(r.endedAt),
    status: str(r.status),
  };
}

function toTask(t: Record<string, unknown>, skills: string[], parentId: string | null, op: string | null): GraphTask {
  return {
    id: String(t.id),
    type: str(t.type) ?? '',
    family: str(t.family) ?? '',
    level: num(t.level) ?? 0,
    program: str(t.program) ?? '',
    skills,
    hash: str(t.hash) ?? '',
    prompt: str(t.prompt) ?? '',
    parent: parentId ? { id: parentId, op: op ?? '' } : null,
    solveRate: num(t.solveRate),
    ...(str(t.proposer) ? { proposer: str(t.proposer) } : {}),
  };
}
