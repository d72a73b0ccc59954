// npm run bench:graph — skill events and task records per second into Neo4j: batched (UNWIND + MERGE,
// one managed transaction per batch) against one transaction per record, side by side in one run;
// the embedded SQLite store for reference. Uses NEO4J_URI/NEO4J_USER/NEO4J_PASSWORD when set, else
// starts the local Neo4j (graphs/neo4j-local.js) on a free port with a temporary data directory.
// CLEARS the target database. Prints a table and writes bench/results/graph.json.
//   tsx bench/graph.ts [--records 20000] [--single 1000] [--batch 1000] [--warmup 10000]
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { startLocalNeo4j } from '../graphs/testing.js';
import { EmbeddedSkillGraph } from '../graphs/testing.js';
import { openSkillGraph } from '../graphs/index.js';
import type { Neo4jSkillGraph } from '../graphs/testing.js';
import type { GraphEvent, SkillGraph } from '../graphs/testing.js';
import type { Skill } from '../core/task.js';
import { formatTable } from '../graphs/testing.js';

const arg = (name: string, def: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
};
const RECORDS = arg('records', 20_000);
const SINGLE = arg('single', 1_000);
const BATCH = arg('batch', 1_000);
const WARMUP = arg('warmup', 10_000);

const SKILLS: Skill[] = Array.from({ length: 40 }, (_, i) => ({
  id: `fam${i % 8}.skill${i}`,
  family: `fam${i % 8}`,
  name: `skill ${i}`,
  description: `benchmark skill ${i}`,
  requires: i >= 8 ? [`fam${(i - 8) % 8}.skill${i - 8}`] : [],
  level: 1 + Math.floor(i / 8),
}));

/** n records of a run, as the loop emits them: tasks (most), solve rates, mastery transitions. */
function records(runId: string, n: number): GraphEvent[] {
  const out: GraphEvent[] = [];
  let step = 0;
  let learned = new Set<string>();
  for (let i = 0; out.length < n; i++) {
    if (i % 32 === 0) step++;
    const r = i % 10;
    const id = `${runId}-t${i}`;
    if (r < 7) {
      const skill = SKILLS[i % SKILLS.length]!;
      out.push({
        kind: 'task',
        runId,
        step,
        task: {
          id,
          type: ['deduction', 'abduction', 'induction'][i % 3]!,
          family: skill.family,
          level: skill.level,
          program: `function f(x) { return x * ${i} + ${i % 7}; }`,
          skills: [skill.id, SKILLS[(i * 7) % SKILLS.length]!.id],
          hash: `h${i}`,
          prompt: `f(${i}) = ?`,
          parent: i > 10 && i % 4 === 0 ? { id: `${runId}-t${i - 10}`, op: 'mutate' } : null,
          solveRate: null,
        },
      });
    } else if (r < 9) {
      out.push({ kind: 'solve-rate', taskId: `${runId}-t${i - r}`, solveRate: (i % 9) / 8 });
    } else {
      const skill = SKILLS[((i / 10) % SKILLS.length) | 0]!.id;
      const forget = learned.has(skill);
      if (forget) learned.delete(skill);
      else learned.add(skill);
      out.push({
        kind: 'mastery',
        runId,
        skillId: skill,
        event: forget ? 'forgotten' : 'learned',
        step,
        at: new Date(Date.UTC(2026, 0, 1) + step * 1000).toISOString(),
        accuracy: 0.5 + (i % 50) / 100,
      });
    }
  }
  learned = new Set();
  return out;
}

/** CPU seconds (user + system) used so far by a process, or null (not local / not Linux). */
function cpuSeconds(pid: number | null): number | null {
  if (pid === null) return null;
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return null;
  }
}

let serverPid: number | null = null;
let lastCpu: number | null = null;

async function time(graph: SkillGraph, events: GraphEvent[], batch: number): Promise<number> {
  const c0 = cpuSeconds(serverPid);
  const t0 = performance.now();
  for (let i = 0; i < events.length; i += batch) await graph.apply(events.slice(i, i + batch));
  const c1 = cpuSeconds(serverPid);
  lastCpu = c0 !== null && c1 !== null ? c1 - c0 : null;
  return (performance.now() - t0) / 1000;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const a = srv.address();
      srv.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

type Conn = { uri: string; user: string; password: string; database?: string };

/** The Neo4j to measure: NEO4J_URI's, else a local one on a free port (stop and dataDir set, its pid in serverPid). */
async function setup(): Promise<{ conn: Conn; stop: (() => Promise<void>) | null; dataDir: string | null }> {
  if (process.env.NEO4J_URI) {
    const conn = {
      uri: process.env.NEO4J_URI,
      user: process.env.NEO4J_USER ?? 'neo4j',
      password: process.env.NEO4J_PASSWORD ?? '',
      database: process.env.NEO4J_DATABASE || undefined,
    };
    return { conn, stop: null, dataDir: null };
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'cogen-neo4j-bench-'));
  const server = await startLocalNeo4j({ port: await freePort(), dataDir, timeoutMs: 600_000 });
  serverPid = server.process.pid ?? null;
  return {
    conn: { uri: server.uri, user: server.user, password: server.password },
    stop: () => server.stop(),
    dataDir,
  };
}

type Row = {
  store: string;
  mode: string;
  records: number;
  seconds: number;
  perSecond: number;
  serverCpuSeconds: number | null;
};

/** One measurement's row; the server's CPU time is that of the last `time` (Neo4j only). */
const row = (store: string, mode: string, n: number, seconds: number): Row => ({
  store,
  mode,
  records: n,
  seconds: +seconds.toFixed(3),
  perSecond: Math.round(n / seconds),
  serverCpuSeconds: store === 'neo4j' && lastCpu !== null ? +lastCpu.toFixed(2) : null,
});

/** Neo4j, cleared and warmed up, batched against one transaction per record; its counts afterwards. */
async function measureNeo4j(conn: Conn, rows: Row[]): Promise<Record<string, number>> {
  const neo = (await openSkillGraph({ kind: 'neo4j', ...conn })) as Neo4jSkillGraph;
  await neo.clear();
  await neo.apply([{ kind: 'skills', skills: SKILLS }]);
  // warm-up (not measured): the JVM's JIT, query plans, the connection pool. A server that has been
  // up for a while is warm; the first few thousand records of a fresh JVM cost several times more.
  await time(neo, records('warm', WARMUP), BATCH);
  await time(neo, records('warm1', Math.min(300, WARMUP)), 1);
  // interleave the two modes twice to spread the machine's noise over both
  for (const round of [1, 2]) {
    const batched = records(`batched${round}`, RECORDS / 2);
    rows.push(row('neo4j', `batched (UNWIND, ${BATCH}/tx)`, batched.length, await time(neo, batched, BATCH)));
    const single = records(`single${round}`, SINGLE / 2);
    rows.push(row('neo4j', 'one transaction per record', single.length, await time(neo, single, 1)));
  }
  const counts = await neo.counts();
  await neo.close();
  return counts;
}

/** The embedded SQLite store, for reference, in a temporary directory. */
async function measureEmbedded(rows: Row[]): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'cogen-graph-bench-'));
  const emb = new EmbeddedSkillGraph(join(dir, 'run.db'));
  await emb.init();
  await emb.apply([{ kind: 'skills', skills: SKILLS }]);
  const eb = records('emb-batched', RECORDS);
  rows.push(row('embedded', `batched (${BATCH}/tx)`, eb.length, await time(emb, eb, BATCH)));
  const es = records('emb-single', SINGLE);
  rows.push(row('embedded', 'one transaction per record', es.length, await time(emb, es, 1)));
  await emb.close();
  rmSync(dir, { recursive: true, force: true });
}

/** The rounds merged per store and mode. */
function summarise(rows: Row[]) {
  const merged = new Map<
    string,
    { store: string; mode: string; records: number; seconds: number; cpu: number | null }
  >();
  for (const r of rows) {
    const k = `${r.store}|${r.mode}`;
    const m = merged.get(k) ?? {
      store: r.store,
      mode: r.mode,
      records: 0,
      seconds: 0,
      cpu: r.serverCpuSeconds === null ? null : 0,
    };
    m.records += r.records;
    m.seconds += r.seconds;
    if (m.cpu !== null && r.serverCpuSeconds !== null) m.cpu += r.serverCpuSeconds;
    merged.set(k, m);
  }
  return [...merged.values()].map(({ cpu, ...m }) => ({
    ...m,
    seconds: +m.seconds.toFixed(3),
    perSecond: Math.round(m.records / m.seconds),
    serverCpuSeconds: cpu === null ? null : +cpu.toFixed(2),
    perServerCpuSecond: cpu ? Math.round(m.records / cpu) : null,
  }));
}
type Summary = ReturnType<typeof summarise>;

/** Prints the summary and the batched/single speedup of Neo4j; returns that speedup and the batched rate. */
function printTable(summary: Summary): { speedup: number; batchedPerSecond: number } {
  const nb = summary.find((s) => s.store === 'neo4j' && s.mode.startsWith('batched'))!;
  const ns = summary.find((s) => s.store === 'neo4j' && s.mode.startsWith('one'))!;
  const speedup = +(nb.perSecond / ns.perSecond).toFixed(1);
  process.stdout.write(
    formatTable(
      ['store', 'mode', 'records', 'seconds', 'records/s', 'server cpu s', 'records/server-cpu-s'],
      summary.map((s) => [
        s.store,
        s.mode,
        s.records,
        s.seconds.toFixed(2),
        s.perSecond,
        s.serverCpuSeconds,
        s.perServerCpuSecond,
      ]),
    ) +
      `neo4j batched vs one per transaction: ${speedup}x; target >= 5000 records/s batched: ${nb.perSecond >= 5000 ? 'met' : 'NOT met'}` +
      ` (load average ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores)\n`,
  );
  return { speedup, batchedPerSecond: nb.perSecond };
}

/** bench/results/graph.json. */
function writeResults(
  conn: Conn,
  local: boolean,
  summary: Summary,
  rows: Row[],
  table: { speedup: number; batchedPerSecond: number },
  counts: Record<string, number>,
): void {
  const result = {
    benchmark: 'graph',
    date: new Date().toISOString(),
    machine: {
      loadAverage: loadavg().map((x) => +x.toFixed(2)),
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? null,
      memGiB: +(totalmem() / 2 ** 30).toFixed(1),
      node: process.version,
    },
    neo4j: {
      uri: conn.uri.replace(/\/\/.*@/, '//'),
      local,
      version: '5.26.12 community (embedded launcher)',
    },
    params: {
      records: RECORDS,
      single: SINGLE,
      batch: BATCH,
      warmup: WARMUP,
      mix: '70% task, 20% solve-rate, 10% mastery',
    },
    summary,
    rounds: rows,
    neo4jBatchedVsSingle: table.speedup,
    target: { recordsPerSecondBatched: 5000, met: table.batchedPerSecond >= 5000 },
    graphCountsAfter: counts,
  };
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  writeFileSync(new URL('./results/graph.json', import.meta.url), JSON.stringify(result, null, 2) + '\n');
}

async function main() {
  const { conn, stop, dataDir } = await setup();
  process.stderr.write(
    `bench:graph: Neo4j at ${conn.uri}; ${RECORDS} records batched (${BATCH}/tx), ${SINGLE} one per tx\n`,
  );
  try {
    const rows: Row[] = [];
    const counts = await measureNeo4j(conn, rows);
    await measureEmbedded(rows);
    const summary = summarise(rows);
    const table = printTable(summary);
    writeResults(conn, stop !== null, summary, rows, table, counts);
  } finally {
    if (stop) await stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
