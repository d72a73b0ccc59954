// Opening a skill graph: the embedded store (SQLite, the default, in the run's database) or Neo4j
// (`--graph neo4j`, NEO4J_URI / NEO4J_USER / NEO4J_PASSWORD / NEO4J_DATABASE). openSkillGraph
// connects, checks credentials and database, and applies the schema; failures are GraphConnectionError
// with a one-line message naming the problem (credentials, unreachable, uri, database).
import type Database from 'better-sqlite3';
import { EmbeddedSkillGraph } from './embedded.js';
import { Neo4jSkillGraph, type Neo4jOptions } from './neo4j.js';
import type { SkillGraph } from './types.js';

export { GraphConnectionError } from './common.js';
export { EmbeddedSkillGraph } from './embedded.js';
export { Neo4jSkillGraph } from './neo4j.js';
export { schemaStatements } from './schema.js';
export { drainOutbox, replayAll } from './outbox.js';
export * from './types.js';
export * from './views.js';
export { toCypher, toDot, toGraphML, cypherStatements } from './exporters.js';

export type SkillGraphOptions =
  { kind: 'embedded'; db: Database.Database | string } | ({ kind: 'neo4j' } & Neo4jOptions);

export async function openSkillGraph(opts: SkillGraphOptions): Promise<SkillGraph> {
  if (opts.kind === 'embedded') {
    const g = new EmbeddedSkillGraph(opts.db);
    await g.init();
    return g;
  }
  const g = new Neo4jSkillGraph(opts);
  try {
    await g.connect();
    await g.init();
  } catch (e) {
    await g.close().catch(() => undefined);
    throw e;
  }
  return g;
}

/** Neo4j options from the environment (NEO4J_URI, NEO4J_USER, NEO4J_PASSWORD, NEO4J_DATABASE), or null. */
export function neo4jOptionsFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): Extract<SkillGraphOptions, { kind: 'neo4j' }> | null {
  if (!env.NEO4J_URI) return null;
  return {
    kind: 'neo4j',
    uri: env.NEO4J_URI,
    user: env.NEO4J_USER ?? 'neo4j',
    password: env.NEO4J_PASSWORD ?? '',
    database: env.NEO4J_DATABASE || undefined,
  };
}
