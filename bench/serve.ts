// bench:serve — what serving costs over doing the same work in process, measured side by side.
//   sample   tasks/s of POST /v1/sample {n: 64} (one client) against ServedRun.sample(64) in this
//            process, each on a fresh run of the same preset and seed, so both draw the same arms
//   score    rewards/s of POST /v1/score with batches of 64 completions from 4 concurrent clients
//            (autocannon) against extractAnswer + verifyMany in this process on the same batches,
//            4 batches in flight; interleaved twice to spread the machine's noise
//            and against ServedRun.score in this process (verification plus the same durable record
//            as the server's: the peer of a durable score endpoint without HTTP)
//   latency  p50 / p99 of one batch of 256 completions, one client
// The server is the real CLI in a child process on a loopback port. A task's 8 completions are half
// right (the reference answer in free text, so they extract alike and verify once) and half wrong,
// each wrong one different, as sampled answers are. The HTTP client is wrk where it is installed
// (C, so the client takes little of the machine's two cores from the server; `apt-get install wrk`),
// else autocannon; the table says which. Prints a table; writes bench/results/serve.json.
//   npx tsx bench/serve.ts [--preset default] [--seconds 8]
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { verifyMany } from '../sandbox/testing.js';
import { extractAnswer, type Sandbox } from '../sandbox/index.js';
import { loadPreset } from '../src/run/config.js';
import { sandboxOf } from '../src/run/testing.js';
import { openServedRun, type ServedRun } from '../src/server/index.js';
import { RunStore } from '../src/run/testing.js';
import { answerKind, referenceAnswer, type Task } from '../core/task.js';

const { values: args } = parseArgs({
  options: {
    preset: { type: 'string', default: 'default' },
    seconds: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '10' },
  },
});
const ROOT = resolve(import.meta.dirname, '..');
const seconds = Number(args.seconds);
const sampleRounds = Number(args.rounds);
const config = loadPreset(args.preset!);
const tmp = mkdtempSync(join(tmpdir(), 'cogen-bench-serve-'));

const freePort = () =>
  new Promise<number>((ok) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => ok(port));
    });
  });

async function startChild(runId: string): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      join(ROOT, 'bin/cogen.js'),
      'serve',
      '--preset',
      args.preset!,
      '--port',
      String(port),
      '--runs-dir',
      join(tmp, 'runs'),
      '--run-id',
      runId,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const url = `http://127.0.0.1:${port}`;
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`server exited: ${err}`);
    try {
      if ((await fetch(url + '/health')).ok) return { url, child };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('server did not start');
}

const post = async (url: string, path: string, body: unknown) => {
  const res = await fetch(url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<any>;
};

/** The k-th wrong answer of the right form (sampled answers that miss rarely miss alike). */
function wrongAnswer(t: Task, k: number): string {
  if (t.type === 'induction') return `(...xs) => ${k} + xs.length`;
  if (t.type === 'abduction') return JSON.stringify(t.input.map((x) => (typeof x === 'number' ? x + 1000 + k : x)));
  if (t.type === 'problem') return JSON.stringify(t.failures[k % t.failures.length] ?? null);
  return JSON.stringify(typeof t.output === 'number' ? t.output + 1 + k : `wrong ${k}`);
}

/** Batches of `size` completions: groups of 8 per task, half right (the reference, in free text), half wrong (each another answer). */
function batches(tasks: Task[], size: number): { task_id: string; completion: string }[][] {
  const items = tasks.flatMap((t) =>
    Array.from({ length: 8 }, (_, i) => ({
      task_id: t.id,
      completion:
        i % 2 === 0
          ? `Thinking it through.\nANSWER: ${referenceAnswer(t).split('\n').join(' ')}`
          : wrongAnswer(t, i >> 1),
    })),
  );
  const out = [];
  for (let i = 0; i + size <= items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

const rate = (n: number, ms: number) => (1000 * n) / ms;

const wrk = (() => {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
    return true;
  } catch (e) {
    // wrk prints its version and exits 1; only a missing binary throws ENOENT.
    return (e as { code?: string }).code !== 'ENOENT';
  }
})();

type Item = { task_id: string; completion: string };
type Http = { rps: number; p50: number; p99: number; max: number; requests: number };
type ScoreRow = { round: number; inProcess: number; durable: number; http: number };
type Sample = { http: number; local: number };

/** Tasks/s of sampleRounds × 64 tasks through `sample`. */
async function sampleRate(sample: (n: number) => Promise<{ tasks: unknown[] }>): Promise<number> {
  const t0 = performance.now();
  let tasks = 0;
  for (let r = 0; r < sampleRounds; r++) tasks += (await sample(64)).tasks.length;
  return rate(tasks, performance.now() - t0);
}

/** The server's own tasks, read from its store, as completions; and those of the in-process durable run. */
function readBatches(): { byId: Map<string, Task>; b64: Item[][]; b256: Item[][]; bLocal: Item[][] } {
  const store = RunStore.open(join(tmp, 'runs', 'http'), { create: false });
  const tasks = store.tasks().map((r) => r.task);
  store.close();
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const b64 = batches(tasks, 64);
  const b256 = batches(tasks, 256);
  // The durable peer scores its own run's tasks (the same preset, seed and draws as the server's).
  const localStore = RunStore.open(join(tmp, 'runs', 'local'), { create: false });
  const bLocal = batches(
    localStore.tasks().map((r) => r.task),
    64,
  );
  localStore.close();
  return { byId, b64, b256, bLocal };
}

/** Rewards/s of `score` over these batches for `seconds`, 4 batches in flight (as the server's 4 clients). */
async function fourInFlight(bodies: Item[][], score: (batch: Item[]) => Promise<unknown>): Promise<number> {
  let done = 0;
  let next = 0;
  const end = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    [0, 1, 2, 3].map(async () => {
      while (performance.now() < end) {
        const batch = bodies[next++ % bodies.length]!;
        await score(batch);
        done += batch.length;
      }
    }),
  );
  return rate(done, performance.now() - t0);
}

/** Requests per second and latency percentiles (ms) of POST /v1/score with these bodies, in rotation. */
async function overHttp(url: string, bodies: Item[][], connections: number, duration: number): Promise<Http> {
  return wrk ? overWrk(url, bodies, connections, duration) : overAutocannon(url, bodies, connections, duration);
}

function overWrk(url: string, bodies: Item[][], connections: number, duration: number): Http {
  const script = join(tmp, 'bodies.lua');
  const quoted = bodies.map((b) => `[==[${JSON.stringify({ items: b })}]==]`).join(',\n');
  writeFileSync(
    script,
    `local bodies = {${quoted}}\nlocal i = 0\nrequest = function()\n  i = i + 1\n  return wrk.format("POST", "/v1/score", {["Content-Type"] = "application/json"}, bodies[(i % #bodies) + 1])\nend\n`,
  );
  const out = execFileSync(
    'wrk',
    ['-t1', `-c${connections}`, `-d${duration}s`, '--latency', '--timeout', '30s', '-s', script, url + '/v1/score'],
    { encoding: 'utf8' },
  );
  const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? NaN);
  const ms = (re: RegExp) => {
    const m = re.exec(out);
    if (!m) return NaN;
    return Number(m[1]) * (m[2] === 's' ? 1000 : m[2] === 'us' ? 0.001 : 1);
  };
  if (/Non-2xx|Socket errors/.test(out)) throw new Error(`score over HTTP failed:\n${out}`);
  return {
    rps: num(/Requests\/sec:\s+([\d.]+)/),
    p50: ms(/50%\s+([\d.]+)(us|ms|s)/),
    p99: ms(/99%\s+([\d.]+)(us|ms|s)/),
    max: ms(/Latency\s+\S+\s+\S+\s+([\d.]+)(us|ms|s)/),
    requests: num(/(\d+) requests in/),
  };
}

async function overAutocannon(url: string, bodies: Item[][], connections: number, duration: number): Promise<Http> {
  let next = 0;
  const result = await autocannon({
    url: url + '/v1/score',
    connections,
    duration,
    requests: [
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        setupRequest: (req) => ({ ...req, body: JSON.stringify({ items: bodies[next++ % bodies.length] }) }),
      },
    ],
  });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`score over HTTP: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return {
    rps: result.requests.total / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    max: result.latency.max,
    requests: result.requests.total,
  };
}

/**
 * Two rounds of: extractAnswer + verifyMany on the server's batches (verification alone), the same score
 * requests through a ServedRun in this process (verification and the durable record, no HTTP), and
 * POST /v1/score from 4 clients.
 */
async function measureScore(
  url: string,
  local: ServedRun,
  sandbox: Sandbox,
  { byId, b64, bLocal }: ReturnType<typeof readBatches>,
): Promise<ScoreRow[]> {
  const inProcess = () =>
    fourInFlight(b64, (batch) =>
      verifyMany(
        sandbox,
        batch.map((it) => {
          const task = byId.get(it.task_id)!;
          return { task, answer: extractAnswer(it.completion, answerKind(task.type)) };
        }),
      ),
    );
  const durable = () => fourInFlight(bLocal, (batch) => local.score(batch));
  const rows: ScoreRow[] = [];
  for (let round = 1; round <= 2; round++) {
    const a = await inProcess();
    const d = await durable();
    const r = await overHttp(url, b64, 4, seconds);
    rows.push({ round, inProcess: a, durable: d, http: r.rps * 64 });
  }
  return rows;
}

function printTable(sample: Sample, rows: ScoreRow[], lat: Http): void {
  const table = [
    ['measure', 'over HTTP', 'in process', 'ratio'],
    [
      'sample, tasks/s (n=64, 1 client)',
      sample.http.toFixed(0),
      sample.local.toFixed(0),
      (sample.http / sample.local).toFixed(2),
    ],
    ...rows.map((r) => [
      `score, rewards/s (64/batch, 4 clients), round ${r.round}`,
      r.http.toFixed(0),
      r.inProcess.toFixed(0),
      (r.http / r.inProcess).toFixed(2),
    ]),
    ...rows.map((r) => [
      `score vs ServedRun.score in process (durable), round ${r.round}`,
      r.http.toFixed(0),
      r.durable.toFixed(0),
      (r.http / r.durable).toFixed(2),
    ]),
    ['one batch of 256, latency p50 / p99 (ms)', `${lat.p50.toFixed(0)} / ${lat.p99.toFixed(0)}`, '', ''],
  ];
  const w = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
  for (const r of table) console.log(r.map((c, i) => (i === 0 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join('  '));
}

/** bench/results/serve.json. */
function writeResults(sample: Sample, rows: ScoreRow[], lat: Http): void {
  const out = {
    bench: 'serve',
    date: new Date().toISOString(),
    machine: {
      cores: cpus().length,
      cpu: cpus()[0]?.model ?? null,
      memGiB: +(totalmem() / 2 ** 30).toFixed(1),
      node: process.version,
      loadavg: loadavg().map((x) => +x.toFixed(2)),
    },
    preset: args.preset,
    client: wrk ? 'wrk' : 'autocannon',
    seconds,
    sample: {
      httpTasksPerSecond: sample.http,
      inProcessTasksPerSecond: sample.local,
      ratio: sample.http / sample.local,
      rounds: sampleRounds,
      n: 64,
    },
    score: rows.map((r) => ({ ...r, ratio: r.http / r.inProcess, ratioDurable: r.http / r.durable })),
    latency256: lat,
  };
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench', 'results', 'serve.json'), JSON.stringify(out, null, 2) + '\n');
}

async function main() {
  console.error(
    `bench:serve on ${cpus().length} cores, load ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}, preset ${args.preset}, client ${wrk ? 'wrk' : 'autocannon'}`,
  );
  // --- sample: fresh runs of the same preset and seed on both sides.
  const { url, child } = await startChild('http');
  const sampleHttp = await sampleRate((n) => post(url, '/v1/sample', { n }));
  const local = await openServedRun(config, { runsDir: join(tmp, 'runs'), preset: args.preset!, runId: 'local' });
  const sampleLocal = await sampleRate((n) => local.sample(n));

  // --- score: the server's own tasks, read from its store, as completions.
  const bodies = readBatches();
  const sandbox = await sandboxOf(config);
  const rows = await measureScore(url, local, sandbox, bodies);
  await local.close();
  const lat = await overHttp(url, bodies.b256, 1, seconds);
  await sandbox.close();
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  rmSync(tmp, { recursive: true, force: true });

  const sample = { http: sampleHttp, local: sampleLocal };
  printTable(sample, rows, lat);
  writeResults(sample, rows, lat);
}

main().catch((e) => {
  console.error(`bench:serve: ${(e as Error).message}`);
  rmSync(tmp, { recursive: true, force: true });
  process.exit(1);
});
