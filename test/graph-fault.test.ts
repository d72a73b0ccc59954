// The outbox's fault test (docs/DESIGN.md, "Skills and the skill graph"): a run writes to Neo4j
// through the outbox; Neo4j is killed in the middle of the run and started again on the same data
// directory. The run finishes regardless, the backlog drains once Neo4j is back, and Neo4j ends
// with exactly the same graph (nodes, edges, properties, mastery intervals) as the run's embedded
// store. Uses its own local Neo4j (not the shared one), so it needs Java + Maven, like
// test/setup/neo4j.ts; skipped outside CI when neither NEO4J_URI nor a local Neo4j is available.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startLocalNeo4j } from '../graphs/testing.js';
import { drainOutbox, openSkillGraph } from '../graphs/index.js';
import { loadPreset, startRun } from '../src/index.js';
import { RunStore } from '../src/run/testing.js';
import { isCI, neo4jConnection } from './graph-helpers.js';

interface LocalNeo4j {
  uri: string;
  user: string;
  password: string;
  process: import('node:child_process').ChildProcess;
  stop(): Promise<void>;
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const a = srv.address();
      srv.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
  });

const { conn, reason } = neo4jConnection();

describe('Neo4j outage in the middle of a run', () => {
  if (!conn && !isCI) {
    it.skip(`needs Neo4j (local launcher): ${reason}`, () => undefined);
    return;
  }
  const dirs: string[] = [];
  let server: LocalNeo4j | null = null;
  afterAll(async () => {
    await server?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('the run finishes and Neo4j ends identical to the embedded store', { timeout: 900_000 }, async () => {
    if (!conn) throw new Error(`Neo4j is required under CI: ${reason}`);
    const dataDir = mkdtempSync(join(tmpdir(), 'cogen-neo4j-fault-'));
    const runsDir = mkdtempSync(join(tmpdir(), 'cogen-fault-runs-'));
    dirs.push(dataDir, runsDir);
    const port = await freePort();
    server = (await startLocalNeo4j({ port, dataDir, timeoutMs: 600_000 })) as LocalNeo4j;
    const creds = { uri: server.uri, user: server.user, password: server.password };

    const steps = 12;
    const config = loadPreset('smoke', {
      steps,
      checkpointEvery: 4,
      probes: { every: 2, perArm: 1 },
      graph: { kind: 'neo4j', ...creds },
    });
    const logs: string[] = [];
    const backlogs: number[] = [];
    let restarted: Promise<void> | null = null;
    const summary = await startRun(config, {
      runsDir,
      preset: 'smoke',
      runId: 'fault',
      log: (l) => logs.push(l),
      onProgress: (p) => {
        backlogs.push(p.graphBacklog);
        if (p.step === 3 && server) {
          // crash-stop: no clean shutdown, Neo4j recovers from its transaction log on restart
          server.process.kill('SIGKILL');
        }
        if (p.step === 7) {
          restarted = (async () => {
            server = (await startLocalNeo4j({ port, dataDir, timeoutMs: 600_000 })) as LocalNeo4j;
          })();
        }
      },
    });
    expect(summary.steps).toBe(steps);
    expect(logs.some((l) => /skill graph neo4j unavailable/.test(l))).toBe(true);
    expect(backlogs.some((b) => b > 0)).toBe(true);
    await restarted;

    // whatever the run could not deliver before it ended is delivered now (as `cogen skills sync` does)
    const store = RunStore.open(join(runsDir, 'fault'), { create: false });
    const neo = await openSkillGraph({ kind: 'neo4j', ...creds });
    try {
      const drained = await drainOutbox(store.outbox('neo4j'), neo, { batchSize: 500 });
      expect(drained.error).toBeUndefined();
      expect(drained.pending).toBe(0);
      const embedded = await openSkillGraph({ kind: 'embedded', db: store.db });
      const want = await embedded.snapshot();
      expect(await neo.counts()).toEqual(await embedded.counts());
      expect(await neo.snapshot()).toEqual(want);
      expect(want.tasks.length).toBeGreaterThan(0);
      expect(want.proposed.length).toBeGreaterThan(0);
      await embedded.close();
    } finally {
      await neo.close();
      store.close();
    }
  });
});
