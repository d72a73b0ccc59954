// bench:scale-chaos --services (bench/scale-chaos.ts): every service fault `runs` times, each on a
// fresh cluster (bench/scale/service-faults.ts), one after another; the timed bounds are checked
// here (the tests time nothing): every replica and worker serving again within 10 s of the
// service's return, a paused replica blocking the other's commits for at most 10 s. Prints the
// table and writes bench/results/scale-chaos-services.json and .md.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopLocalServices } from '../../test/setup/local-services.js';
import { namespacesUnavailable } from './netns.js';
import { ROOT } from './procs.js';
import { SERVICE_FAULTS, runServiceFault, type FaultRunReport, type ServiceFault } from './service-faults.js';
import { lockHoldLine, runRows, slowest, summaryRows } from './service-report.js';

/** Seconds of outage per fault: PostgreSQL and NATS away 5 s (as the runs that found the faults), a pause and a cut link 12 s (3 times the server's 4 s limits). */
const OUTAGE: Record<ServiceFault, number> = {
  'pg-stop': 5,
  'nats-kill': 5,
  pause: 12,
  'partition-pg': 12,
  'partition-nats': 12,
};
const BOUND_MS = 10_000;

const load = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

export async function runServices(o: {
  runs: number;
  faults?: string[];
  preset: string;
  /** The results' file name in bench/results (without .json or .md). */
  out?: string;
}): Promise<boolean> {
  const faults = (o.faults ?? SERVICE_FAULTS) as ServiceFault[];
  const unknown = faults.find((f) => !SERVICE_FAULTS.includes(f));
  if (unknown) throw new Error(`--faults: no fault "${unknown}" (${SERVICE_FAULTS.join(', ')})`);
  const noNs = faults.some((f) => f.startsWith('partition')) ? namespacesUnavailable() : null;
  if (noNs) throw new Error(`--faults partition-*: ${noNs}`);
  const load0 = load();
  console.error(`bench:scale-chaos --services on ${cpus().length} cores, load ${load0}, preset ${o.preset}`);
  const reports: (FaultRunReport & { load: string })[] = [];
  for (const fault of faults)
    for (let run = 0; run < o.runs; run++) {
      const tmp = mkdtempSync(join(tmpdir(), 'cogen-bench-svc-'));
      const before = load();
      try {
        const r = await runServiceFault({
          fault,
          preset: o.preset,
          clients: 4,
          calmSeconds: 10,
          outageSeconds: OUTAGE[fault],
          afterSeconds: 20,
          runsDir: tmp,
          log: (l) => console.error(`  ${l}`),
        });
        timed(r);
        reports.push({ ...r, load: `${before} → ${load()}` });
        const back = slowest(r);
        console.error(
          `${fault} run ${run + 1}: ${r.acked} acknowledged, replicas back after ${back.replica} ms, workers after ${back.worker} ms${r.pause ? `, the other replica blocked ${r.pause.blockMs.toFixed(0)} ms` : ''}; ${r.violations.length ? r.violations.join('; ') : 'no violation'}`,
        );
      } finally {
        await stopLocalServices();
        rmSync(tmp, { recursive: true, force: true });
      }
    }
  const table = `${summaryRows(reports, faults)}\n\n${runRows(reports)}`;
  console.log(`${table}\n\n${lockHoldLine(reports)}`);
  const out = join(ROOT, 'bench', 'results');
  mkdirSync(out, { recursive: true });
  const meta = {
    command: `npm run bench:scale-chaos -- ${process.argv.slice(2).join(' ')}`,
    date: new Date().toISOString(),
    cores: cpus().length,
    load: load0,
    preset: o.preset,
    runs: o.runs,
  };
  const name = o.out ?? 'scale-chaos-services';
  writeFileSync(join(out, `${name}.json`), `${JSON.stringify({ ...meta, reports }, null, 2)}\n`);
  writeFileSync(join(out, `${name}.md`), markdown(meta, table, reports));
  return reports.every((r) => r.violations.length === 0);
}

/** The bench's timed bounds, as violations. */
function timed(r: FaultRunReport): void {
  for (const x of r.recovery)
    if (x.ms !== null && x.ms > BOUND_MS)
      r.violations.push(`${x.name} served again ${(x.ms / 1000).toFixed(1)} s after the return (over 10 s)`);
  if (r.pause && r.pause.blockMs > BOUND_MS)
    r.violations.push(
      `the paused replica blocked the other's commits ${(r.pause.blockMs / 1000).toFixed(1)} s (over 10 s)`,
    );
  if (r.pause && !r.pause.heldLock) r.violations.push(`the paused replica was never caught holding the writer lock`);
}

export function markdown(
  meta: Record<string, unknown>,
  table: string,
  reports: (FaultRunReport & { load: string })[],
): string {
  const violations = reports.flatMap((r, i) => {
    const run = reports.slice(0, i + 1).filter((x) => x.fault === r.fault).length;
    return r.violations.map((v) => `- ${r.fault} (run ${run}): ${v}`);
  });
  return `# bench:scale-chaos --services

\`${String(meta.command ?? `npm run bench:scale-chaos -- --services --runs ${String(meta.runs)}`)}\` (${String(meta.date)}, ${String(meta.cores)} cores, load ${String(meta.load)} at the start; preset ${String(meta.preset)}).
Each run: a fresh PostgreSQL, nats-server, 2 replicas and 3 workers; 4 trainers with idempotency keys and one probe per replica; 10 s of load, the fault, 20 s after the service's return. Nothing is restarted by hand.
Outage: ${Object.entries(OUTAGE)
    .map(([f, sec]) => `${f} ${sec} s`)
    .join(
      ', ',
    )}. "Back" is measured from the service's return (PostgreSQL accepting connections again, nats-server listening, SIGCONT, the link healed) to each replica's probe's first 2xx and each worker's first answered batch; the outage's answers are those of the requests sent between the fault and the return; "blocked" is the longest the other replica's probe went without a 2xx from the pause to its first 2xx after the return.

${table}

Lock hold times (replicas' \`cogen_lock_held_seconds\`, every run): ${lockHoldLine(reports)}

Loads (1-minute averages, before → after each run): ${reports.map((r) => r.load).join('; ')}.

${violations.length ? `Violations:\n${violations.join('\n')}` : 'No violation.'}
`;
}
