// bench:served-neo4j — a served run's skill graph in Neo4j against `cogen skills`. A copy of the
// served run (one that bench:served-learn trained, say; the run itself is left as it is, and the
// copy's Neo4j cursor is cleared, as for a run never written to Neo4j) is resumed with `cogen serve
// --resume ID --graph neo4j` against a fresh local Neo4j (graphs/neo4j-local.js); the server drains
// the run's whole outbox into it.
// Then docs/graph.md's query for the skills a run has mastered now runs in Neo4j, and its answer is
// compared with the mastered skills of `cogen skills --run ID` (the embedded store, the peer).
// Prints a table, writes bench/results/served-neo4j.{json,md}, exits non-zero when they differ.
//
//   npx tsx bench/served-neo4j.ts --runs-dir DIR --run ID [--out bench/results]
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import neo4j from 'neo4j-driver';
import { docsQuery, startLocalNeo4j } from '../graphs/testing.js';
import { freePort } from '../test/setup/local-services.js';
import { cogen, startServe, stopChild } from './served-child.js';

const { values: args } = parseArgs({
  options: {
    'runs-dir': { type: 'string' },
    run: { type: 'string' },
    out: { type: 'string', default: 'bench/results' },
  },
});
if (!args['runs-dir'] || !args.run) {
  console.error('bench:served-neo4j: give --runs-dir DIR and --run ID (a served run)');
  process.exit(2);
}
const runId = args.run;
const runsDir = mkdtempSync(join(tmpdir(), 'cogen-served-neo4j-runs-'));
const QUERY_TITLE = 'The skills a run has mastered now';

/** The outbox's last event, and how far the neo4j sink has drained it. */
function outbox(): { last: number; neo4j: number } {
  const db = new Database(join(runsDir, runId, 'run.db'), { readonly: true });
  try {
    const last = (db.prepare('SELECT MAX(seq) AS s FROM outbox').get() as { s: number | null }).s ?? 0;
    const cur = db.prepare("SELECT seq FROM outbox_cursor WHERE sink = 'neo4j'").get() as { seq: number } | undefined;
    return { last, neo4j: cur?.seq ?? 0 };
  } finally {
    db.close();
  }
}

/** The run copied to `runsDir`, with no Neo4j cursor: the copy's whole outbox is for a Neo4j new to it. */
function copyRun(from: string): void {
  cpSync(join(from, runId), join(runsDir, runId), { recursive: true });
  const db = new Database(join(runsDir, runId, 'run.db'));
  try {
    db.prepare("DELETE FROM outbox_cursor WHERE sink = 'neo4j'").run();
  } finally {
    db.close();
  }
}

async function main(): Promise<void> {
  copyRun(args['runs-dir']!);
  const dataDir = mkdtempSync(join(tmpdir(), 'cogen-served-neo4j-'));
  const graph = await startLocalNeo4j({ port: await freePort(), dataDir, log: () => {} });
  process.env.NEO4J_USER = graph.user;
  process.env.NEO4J_PASSWORD = graph.password;
  const served = await startServe([
    '--resume',
    runId,
    '--runs-dir',
    runsDir,
    '--graph',
    'neo4j',
    '--neo4j-uri',
    graph.uri,
  ]);
  const driver = neo4j.driver(graph.uri, neo4j.auth.basic(graph.user, graph.password));
  try {
    let o = outbox();
    for (let i = 0; i < 600 && o.neo4j < o.last; i++) {
      await new Promise((r) => setTimeout(r, 500));
      o = outbox();
    }
    if (o.neo4j < o.last) throw new Error(`the server drained ${o.neo4j} of ${o.last} outbox events in 5 minutes`);
    const query = docsQuery(QUERY_TITLE);
    const res = await driver.executeQuery(query, { run: runId });
    const inNeo4j = res.records.map((r) => String(r.get(0))).sort();
    const skills = JSON.parse(cogen(['skills', '--run', runId, '--runs-dir', runsDir, '--format', 'json'])) as {
      skills: { skillId: string; state: string }[];
    };
    const embedded = skills.skills
      .filter((s) => s.state === 'mastered')
      .map((s) => s.skillId)
      .sort();
    const same = JSON.stringify(inNeo4j) === JSON.stringify(embedded);
    const result = { runId, outboxEvents: o.last, query, neo4j: inNeo4j, cogenSkills: embedded, same };
    mkdirSync(args.out!, { recursive: true });
    writeFileSync(join(args.out!, 'served-neo4j.json'), JSON.stringify(result, null, 1) + '\n');
    const md = [
      '# bench:served-neo4j',
      '',
      `A copy of served run \`${runId}\`, resumed with \`cogen serve --resume ${runId} --graph neo4j\`; ${o.last} outbox events drained into a local Neo4j.`,
      '',
      "docs/graph.md's query:",
      '',
      '```cypher',
      query.trim() + ';',
      '```',
      '',
      '| source | skills mastered now |',
      '| --- | --- |',
      `| Neo4j (the query above) | ${inNeo4j.join(', ') || 'none'} |`,
      `| \`cogen skills --run ${runId}\` (embedded) | ${embedded.join(', ') || 'none'} |`,
      '',
      same ? 'The same skills.' : 'They differ.',
      '',
    ].join('\n');
    writeFileSync(join(args.out!, 'served-neo4j.md'), md);
    console.log(md);
    if (!same) process.exitCode = 1;
  } finally {
    await driver.close();
    await stopChild(served.child);
    await graph.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(runsDir, { recursive: true, force: true });
  }
}

main().catch((e: Error) => {
  console.error(`bench:served-neo4j: ${e.message}`);
  process.exit(1);
});
