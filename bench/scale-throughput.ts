// bench:scale — rewards/s on the heavy preset through one replica with N verification workers
// (N = 1, 2) against `cogen serve` alone, side by side in one run, on this machine; then the same
// with 10 % hostile answers (docs/scale-out.md, bench/results/scale.md).
//   alone     cogen serve --preset heavy (its own sandbox pool, 2 threads)
//   N = 1, 2  cogen serve --preset heavy --verify nats://… and N × cogen worker (1 sandbox thread each)
//   hostile   N = 2 with a tenth of the answers hostile (loops, runaway strings, huge throws)
// Each phase: a fresh run (SQLite store in a temporary directory), 256 sampled tasks, 4 keep-alive
// clients posting 64-completion score requests with idempotency keys for --seconds after a warm-up.
// Measured per phase: rewards/s; per 1,000 rewards the CPU seconds of the coordinator's main thread
// (/proc/<pid>/task/<pid>) and of every process (/proc/<pid>, all threads); each
// worker's rewards/s. From those costs, a projection for 8, 16 and 64 workers and where the
// coordinator saturates; the projection of N = 2 from N = 1's costs is checked against N = 2 measured.
//   npx tsx bench/scale-throughput.ts [--seconds 15] [--preset heavy]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort, servicePids, startNats, stopLocalServices } from '../test/setup/local-services.js';
import { bodies, scoreLoad, tasksOf, type LoadResult } from './scale/load.js';
import { ROOT, cpuSeconds, machineCpu, metric, proc, type Proc } from './scale/procs.js';
import { project, type PhaseCosts } from './scale/projection.js';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '15' },
    preset: { type: 'string', default: 'heavy' },
    clients: { type: 'string', default: '4' },
  },
});
const SECONDS = Number(args.seconds);
const CLIENTS = Number(args.clients);
const CORES = cpus().length;
const tmp = mkdtempSync(join(tmpdir(), 'cogen-bench-scale-'));

interface Phase extends PhaseCosts {
  name: string;
  workers: number;
  load: LoadResult;
  perWorker: number[];
}

async function measure(
  name: string,
  replica: Proc,
  workers: Proc[],
  natsPid: number | undefined,
  runId: string,
  hostile: number,
): Promise<Phase> {
  const tasks = [];
  for (let i = 0; i < 4; i++) {
    const res = await fetch(`${replica.url}/v1/sample`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"n": 64}',
    });
    if (!res.ok) throw new Error(`sample: ${res.status} ${await res.text()}`);
    tasks.push(...((await res.json()) as { tasks: unknown[] }).tasks);
  }
  const list = bodies(tasksOf(join(tmp, runId), runId), 64, hostile);
  await scoreLoad(replica.url, list, CLIENTS, 3); // warm-up: JIT, sandbox contexts, connections
  const pids = { replica: replica.child!.pid, workers: workers.map((w) => w.child!.pid), nats: natsPid };
  const cpu0 = {
    replica: cpuSeconds(pids.replica),
    workers: pids.workers.map((p) => cpuSeconds(p)),
    nats: cpuSeconds(pids.nats),
    client: process.cpuUsage(),
  };
  // Main threads' CPU time (not their event loops' busy wall time, which counts waiting for a core on a loaded machine).
  const main0 = cpuSeconds(pids.replica, true);
  const wMain0 = pids.workers.map((p) => cpuSeconds(p, true));
  const answers0 = await Promise.all(workers.map((w) => metric(w.url, 'cogen_worker_answers_total')));
  const machine0 = machineCpu();
  const load = await scoreLoad(replica.url, list, CLIENTS, SECONDS);
  const machine1 = machineCpu();
  const main1 = cpuSeconds(pids.replica, true);
  const wMain1 = pids.workers.map((p) => cpuSeconds(p, true));
  const answers1 = await Promise.all(workers.map((w) => metric(w.url, 'cogen_worker_answers_total')));
  const client = process.cpuUsage(cpu0.client);
  const per = (x: number) => (x / Math.max(1, load.rewards)) * 1000;
  const workerCpu = pids.workers.map((p, i) => cpuSeconds(p) - cpu0.workers[i]!);
  const ours =
    cpuSeconds(pids.replica) -
    cpu0.replica +
    workerCpu.reduce((a, b) => a + b, 0) +
    cpuSeconds(pids.nats) -
    cpu0.nats +
    (client.user + client.system) / 1e6;
  return {
    availableCores: (ours + machine1.idle - machine0.idle) / load.seconds,
    name,
    workers: workers.length,
    load,
    rate: load.rewards / load.seconds,
    mainPer1000: per(main1 - main0),
    replicaCpuPer1000: per(cpuSeconds(pids.replica) - cpu0.replica),
    workerCpuPer1000: per(workerCpu.reduce((a, b) => a + b, 0)),
    workerMainPer1000: per(wMain1.reduce((a, b) => a + b, 0) - wMain0.reduce((a, b) => a + b, 0)),
    natsCpuPer1000: per(cpuSeconds(pids.nats) - cpu0.nats),
    clientCpuPer1000: per((client.user + client.system) / 1e6),
    perWorker: answers1.map((a, i) => (a - answers0[i]!) / load.seconds),
    sandboxThreads: 1,
  };
}

async function phase(
  name: string,
  n: number,
  nats: string | null,
  natsPid: number | undefined,
  hostile: number[],
): Promise<Phase[]> {
  const runId = `scale-${name}`;
  const replicaArgs = [
    'serve',
    '--preset',
    args.preset!,
    '--runs-dir',
    join(tmp, runId),
    '--run-id',
    runId,
    ...(nats ? ['--verify', nats] : []),
  ];
  const replica = proc(`replica ${name}`, 'replica', await freePort(), replicaArgs);
  const workers: Proc[] = [];
  for (let i = 0; i < n; i++)
    workers.push(
      proc(`worker ${i}`, 'worker', await freePort(), [
        'worker',
        '--nats',
        nats!,
        '--sandbox-workers',
        '1',
        '--concurrency',
        '4',
      ]),
    );
  try {
    for (const p of [replica, ...workers]) p.start();
    await Promise.all([replica, ...workers].map((p) => p.healthy()));
    const out: Phase[] = [];
    for (const h of hostile)
      out.push(await measure(h > 0 ? `${name} hostile ${h * 100}%` : name, replica, workers, natsPid, runId, h));
    return out;
  } finally {
    await Promise.all([replica, ...workers].map((p) => p.stop()));
  }
}

async function main() {
  const load0 = loadavg()[0]!.toFixed(2);
  console.error(
    `bench:scale on ${CORES} cores, load ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}, preset ${args.preset}, ${CLIENTS} clients, ${SECONDS} s a phase`,
  );
  const nats = await startNats();
  const natsPid = servicePids.nats;
  try {
    const phases = [
      ...(await phase('alone', 0, null, undefined, [0])),
      ...(await phase('N=1', 1, nats, natsPid, [0])),
      ...(await phase('N=2', 2, nats, natsPid, [0, 0.1])),
    ];
    report(phases, load0);
  } finally {
    await stopLocalServices();
    rmSync(tmp, { recursive: true, force: true });
  }
}

function report(phases: Phase[], load0: string) {
  const alone = phases.find((p) => p.name === 'alone')!;
  const n1 = phases.find((p) => p.name === 'N=1')!;
  const n2 = phases.find((p) => p.name === 'N=2')!;
  const hostile = phases.find((p) => p.name.includes('hostile'))!;
  const proj = project(n1, CORES);
  const f = (x: number, d = 0) => x.toFixed(d);
  const rows = phases.map((p) => [
    p.name,
    f(p.rate),
    f(p.mainPer1000, 3),
    f(p.replicaCpuPer1000, 3),
    f(p.workerCpuPer1000, 3),
    f(p.natsCpuPer1000, 3),
    f(p.clientCpuPer1000, 3),
    p.perWorker.map((x) => f(x)).join(' / ') || '-',
    f(p.availableCores, 2),
    Object.keys(p.load.errors).length ? JSON.stringify(p.load.errors) : '-',
  ]);
  const head = [
    'phase',
    'rewards/s',
    'coordinator main s/1k',
    'replica CPU s/1k',
    'workers CPU s/1k',
    'NATS CPU s/1k',
    'clients CPU s/1k',
    'per-worker rewards/s',
    'cores had',
    'errors',
  ];
  console.log(table([head, ...rows]));
  const checks = {
    mainThreadRatio: {
      n1: n1.mainPer1000 / alone.mainPer1000,
      n2: n2.mainPer1000 / alone.mainPer1000,
      target: '≤ 0.5',
    },
    processCpuRatio: {
      n1: n1.replicaCpuPer1000 / alone.replicaCpuPer1000,
      n2: n2.replicaCpuPer1000 / alone.replicaCpuPer1000,
    },
    projectionOfN2: {
      predicted: proj.sameMachine(2, n2.availableCores),
      measured: n2.rate,
      error: proj.sameMachine(2, n2.availableCores) / n2.rate - 1,
      target: 'within ±20 %',
    },
    hostileRatio: { value: hostile.rate / n2.rate, target: '≥ 0.25' },
  };
  console.log(
    `\ncoordinator main-thread cost per 1,000 rewards with workers ÷ serve alone: N=1 ${f(checks.mainThreadRatio.n1, 2)}, N=2 ${f(checks.mainThreadRatio.n2, 2)} (target ≤ 0.5)`,
  );
  console.log(
    `coordinator process CPU (all its threads) per 1,000 rewards with workers ÷ serve alone: N=1 ${f(checks.processCpuRatio.n1, 2)}, N=2 ${f(checks.processCpuRatio.n2, 2)}`,
  );
  console.log(
    `projection of N=2 from N=1's costs and the ${f(n2.availableCores, 2)} cores N=2 had: ${f(checks.projectionOfN2.predicted)} rewards/s, measured ${f(n2.rate)} (${f(100 * checks.projectionOfN2.error, 1)} %, target within ±20 %)`,
  );
  console.log(`hostile 10 % through workers ÷ clean: ${f(checks.hostileRatio.value, 2)} (target ≥ 0.25)`);
  console.log(`\nprojection, workers on machines of their own (${CORES} cores each), one coordinator:`);
  console.log(
    table([
      ['workers', 'rewards/s', 'bound'],
      ...[1, 2, 8, 16, 64].map((n) => [String(n), f(proj.dedicated(n).rate), proj.dedicated(n).bound]),
    ]),
  );
  console.log(
    `the coordinator saturates at ${f(proj.saturation.rate)} rewards/s (${proj.saturation.bound}), reached with ${f(proj.saturation.workers, 1)} workers`,
  );
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  const out = {
    date: new Date().toISOString(),
    cores: CORES,
    load: load0,
    preset: args.preset,
    seconds: SECONDS,
    clients: CLIENTS,
    phases,
    checks,
    projection: {
      perWorker: proj.perWorker,
      coordinator: proj.saturation,
      dedicated: Object.fromEntries([1, 2, 8, 16, 64].map((n) => [n, proj.dedicated(n)])),
    },
  };
  writeFileSync(join(ROOT, 'bench', 'results', 'scale.json'), `${JSON.stringify(out, null, 2)}\n`);
}

function table(rows: string[][]): string {
  const w = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((x, c) => x.padEnd(w[c]!)).join('  ')).join('\n');
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
