// vitest globalSetup: a Neo4j for the graph tests. With NEO4J_URI set, that server is used as is.
// Otherwise the local Neo4j (graphs/neo4j-local.js: Neo4j Community embedded, built with Maven on first
// use) is started on a free port with a temporary data directory, and stopped at teardown. Tests read
// the connection with inject('neo4j') (or NEO4J_URI/NEO4J_USER/NEO4J_PASSWORD, which are set too).
// When no Neo4j can be had, `neo4j.error` says why: Neo4j tests then FAIL under CI (CI=true) and are
// skipped elsewhere. Outside CI the local server is only started when the selected tests may need it
// (no file filter, or a filter naming graph/neo4j/loop/fault/e2e); COGEN_TEST_NEO4J=on|off overrides.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startLocalNeo4j } from '../../graphs/testing.js';
import { freePort, wantsService } from './local-services.js';

export interface Neo4jTestConnection {
  uri: string | null;
  user: string;
  password: string;
  database?: string;
  /** Why no Neo4j is available (null when uri is set). */
  error: string | null;
  /** 'env' when NEO4J_URI was given, 'local' when this setup started one. */
  source: 'env' | 'local' | 'none';
}

declare module 'vitest' {
  export interface ProvidedContext {
    neo4j: Neo4jTestConnection;
  }
}

const wanted = (): boolean => wantsService(process.env.COGEN_TEST_NEO4J, /graph|neo4j|loop|fault|e2e/i);

let stop: (() => Promise<void>) | null = null;
let dataDir: string | null = null;

export async function setup(project: TestProject): Promise<void> {
  const provide = (c: Neo4jTestConnection) => {
    project.provide('neo4j', c);
    if (c.uri) {
      process.env.NEO4J_URI = c.uri;
      process.env.NEO4J_USER = c.user;
      process.env.NEO4J_PASSWORD = c.password;
    }
  };
  if (process.env.NEO4J_URI) {
    provide({
      uri: process.env.NEO4J_URI,
      user: process.env.NEO4J_USER ?? 'neo4j',
      password: process.env.NEO4J_PASSWORD ?? '',
      database: process.env.NEO4J_DATABASE || undefined,
      error: null,
      source: 'env',
    });
    return;
  }
  if (!wanted()) {
    provide({
      uri: null,
      user: '',
      password: '',
      error: 'local Neo4j not started (no selected test needs it)',
      source: 'none',
    });
    return;
  }
  try {
    dataDir = mkdtempSync(join(tmpdir(), 'cogen-neo4j-test-'));
    const port = await freePort();
    const t0 = Date.now();
    const server = await startLocalNeo4j({
      port,
      dataDir,
      timeoutMs: 600_000,
      log: (line: string) => process.stderr.write(`[neo4j] ${line}\n`),
    });
    process.stderr.write(`[neo4j] local Neo4j ready at ${server.uri} in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
    stop = () => server.stop();
    provide({ uri: server.uri, user: server.user, password: server.password, error: null, source: 'local' });
  } catch (e) {
    const reason = (e instanceof Error ? e.message : String(e)).split('\n').slice(0, 3).join(' | ');
    process.stderr.write(`[neo4j] no local Neo4j: ${reason}\n`);
    provide({ uri: null, user: '', password: '', error: `could not start the local Neo4j: ${reason}`, source: 'none' });
  }
}

export async function teardown(): Promise<void> {
  if (stop) await stop().catch(() => undefined);
  stop = null;
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  dataDir = null;
}
