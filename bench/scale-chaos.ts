// bench:scale-chaos — 2 replicas on one PostgreSQL run and 3 verification workers on NATS
// JetStream, 4 clients scoring with idempotency keys; after a calm phase (the peer), 2 minutes in
// which every 10–20 s a random replica or worker is killed with SIGKILL and started again
// (bench/scale/chaos.ts; docs/scale-out.md). Checks: every acknowledged score in the store exactly
// once, no key answered twice with different bodies, only retriable errors (503 with Retry-After,
// connection refused or reset), a restarted process answering within 5 s, a killed worker's
// batches delivered again within 5 s. Prints a table; writes bench/results/scale-chaos.json;
// exits 1 when a check fails. PostgreSQL and nats-server are started here unless
// COGEN_TEST_POSTGRES_URL (with PGPASSWORD) and COGEN_TEST_NATS_URL name running ones.
//   npx tsx bench/scale-chaos.ts [--seconds 120] [--calm 20] [--preset heavy]
//
// With --services, faults of the services instead (bench/scale/service-faults.ts), each --runs
// times on a fresh cluster under load, nothing restarted by hand: PostgreSQL stopped -m immediate,
// nats-server killed -9, a replica paused while it holds the writer lock, and partitions between a
// replica and PostgreSQL and between a worker and NATS (network namespaces: root and iproute2).
// Checks: no cogen process exits, the store holds every acknowledged request once with its
// rewards, requests during the outage get a 503 with Retry-After or a failed connection (or a 2xx
// the store holds), every replica and worker serves again within 10 s of the service's return, and
// a paused replica blocks the other's commits for at most 10 s. Writes
// bench/results/scale-chaos-services.json and .md; exits 1 when a check fails.
//   npx tsx bench/scale-chaos.ts --services [--runs 3] [--faults pg-stop,nats-kill,pause,partition-pg,partition-nats] [--out NAME]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startNats, startPostgres, stopLocalServices } from '../test/setup/local-services.js';
import { runChaos } from './scale/chaos.js';
import { runServices } from './scale/service-bench.js';
import { ROOT } from './scale/procs.js';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '120' },
    calm: { type: 'string', default: '20' },
    preset: { type: 'string', default: 'heavy' },
    'kill-min': { type: 'string', default: '10' },
    'kill-max': { type: 'string', default: '20' },
    services: { type: 'boolean', default: false },
    runs: { type: 'string', default: '3' },
    faults: { type: 'string' },
    out: { type: 'string' },
  },
});

async function main() {
  const load0 = loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
  console.error(`bench:scale-chaos on ${cpus().length} cores, load ${load0}, preset ${args.preset}`);
  const tmp = mkdtempSync(join(tmpdir(), 'cogen-bench-chaos-'));
  try {
    const pgEnv = process.env.COGEN_TEST_POSTGRES_URL;
    const pgLocal = pgEnv ? { url: pgEnv, password: process.env.PGPASSWORD ?? '' } : await startPostgres();
    const nats = process.env.COGEN_TEST_NATS_URL ?? (await startNats());
    const r = await runChaos({
      preset: args.preset!,
      pgUrl: pgLocal.url,
      pgPassword: pgLocal.password,
      nats,
      replicas: 2,
      workers: 3,
      clients: 4,
      calmSeconds: Number(args.calm),
      chaosSeconds: Number(args.seconds),
      killEvery: [Number(args['kill-min']), Number(args['kill-max'])],
      ackWaitS: 2,
      runsDir: tmp,
      log: (l) => console.error(l),
      timed: true,
    });
    const rate = (n: number, s: number) => (s > 0 ? n / s : 0);
    const calm = rate(r.rewards.calm, r.seconds.calm);
    const chaos = rate(r.rewards.chaos, r.seconds.chaos);
    const restarts = (kind: string) => r.kills.filter((k) => k.kind === kind).map((k) => k.restartMs / 1000);
    const redeliveries = r.kills.filter((k) => k.redeliveryMs != null).map((k) => k.redeliveryMs! / 1000);
    const range = (xs: number[]) => (xs.length ? `${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)} s` : '-');
    const rows = [
      ['acknowledged score requests', String(r.acked)],
      [
        'rewards/s calm (peer) / under kills (ratio)',
        `${calm.toFixed(0)} / ${chaos.toFixed(0)} (${calm > 0 ? (chaos / calm).toFixed(2) : '-'})`,
      ],
      ['kills: replicas / workers', `${restarts('replica').length} / ${restarts('worker').length}`],
      ['restart to healthy: replicas / workers', `${range(restarts('replica'))} / ${range(restarts('worker'))}`],
      [
        'kill to first batch delivered again',
        `${range(redeliveries)} (${redeliveries.length} of ${r.kills.filter((k) => (k.heldBatches ?? 0) > 0).length} worker kills that held batches)`,
      ],
      [
        'client errors: 503 + Retry-After / connection / other',
        `${r.errors.retriable503} / ${r.errors.connection} / ${r.errors.other.length}`,
      ],
      ['violations', r.violations.length ? r.violations.join('; ') : 'none'],
    ];
    const w = Math.max(...rows.map((x) => x[0]!.length));
    console.log(rows.map(([a, b]) => `${a!.padEnd(w)}  ${b}`).join('\n'));
    mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
    writeFileSync(
      join(ROOT, 'bench', 'results', 'scale-chaos.json'),
      `${JSON.stringify({ date: new Date().toISOString(), cores: cpus().length, load: load0, preset: args.preset, ...r, rates: { calm, chaos } }, null, 2)}\n`,
    );
    return r.violations.length === 0;
  } finally {
    await stopLocalServices();
    rmSync(tmp, { recursive: true, force: true });
  }
}

(args.services
  ? runServices({ runs: Number(args.runs), faults: args.faults?.split(','), preset: args.preset!, out: args.out })
  : main()
).then(
  (ok) => process.exit(ok ? 0 : 1),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
