// Faults of the services under the scale-out setup (docs/scale-out.md, "Faults of the services"), for
// bench:scale-chaos --services and its short version in the tests: a fresh cluster (PostgreSQL,
// NATS JetStream, 2 replicas, 3 workers) under load from trainers with idempotency keys, then one
// fault of a service, then its return, with nothing restarted by hand:
//   pg-stop         PostgreSQL stopped with `pg_ctl -m immediate`, started again;
//   nats-kill       nats-server killed with SIGKILL, started again on its store;
//   pause           a replica stopped (SIGSTOP) while it holds the writer lock, past the server's
//                   limits, then continued (SIGCONT);
//   partition-pg    the link between a replica and PostgreSQL cut, then healed (network namespace);
//   partition-nats  the link between a worker and NATS cut, then healed.
// Afterwards the store is read back against the trainers' log (audit.ts), and the report says which
// cogen process exited (none may), what every request sent during the outage got (a 503 with
// Retry-After, a failed connection, or a 2xx the store holds), how long after the service's return
// each replica committed and each worker answered again, and, for a pause, how long the other
// replica went without a commit.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { parsePgUrl } from '../../src/run/testing.js';
import {
  freePort,
  natsServer,
  postgresServer,
  type LocalNats,
  type LocalPostgres,
} from '../../test/setup/local-services.js';
import { audit, type Ack } from './audit.js';
import { makeNamespace, type Namespace } from './netns.js';
import { proc, type Proc } from './procs.js';
import { trainer, type Outcome } from './trainer.js';

export const SERVICE_FAULTS = ['pg-stop', 'nats-kill', 'pause', 'partition-pg', 'partition-nats'] as const;
export type ServiceFault = (typeof SERVICE_FAULTS)[number];

export interface FaultRunOptions {
  fault: ServiceFault;
  preset: string;
  clients: number;
  /** Seconds of load before the fault, of the outage (the service away, the replica paused, the link cut), and after the return. */
  calmSeconds: number;
  outageSeconds: number;
  afterSeconds: number;
  runsDir: string;
  log: (line: string) => void;
}

export interface FaultRunReport {
  fault: ServiceFault;
  runId: string;
  acked: number;
  /** Seconds from the start of the load to the fault, and to the service's return. */
  faultAt: number;
  returnedAt: number;
  /** Cogen processes that exited during the run (none may). */
  exits: string[];
  /** Per process: ms from the service's return to its first commit (a replica) or answered batch (a worker); null: none seen. */
  recovery: { name: string; ms: number | null }[];
  /** Rewards/s acknowledged before the fault (the peer) and after the return. */
  rates: { before: number; after: number };
  /** What the requests sent during the outage got. */
  outage: {
    sent: number;
    committed: number;
    /** 2xx scores each replica answered before the return, whenever sent (a replica cut off from PostgreSQL, or paused, answers none after its requests in flight). */
    committedBy: Record<string, number>;
    retriable503: number;
    connection: number;
    other: string[];
  };
  /** pause: whether the stopped replica held the writer lock, after how many tries, and the other replica's longest wait for a commit while it was stopped (ms). */
  pause?: { heldLock: boolean; tries: number; blockMs: number };
  /** Commits' lock hold times as the replicas' /metrics counted them: bucket upper bound (s) → commits at or under it. */
  lockHeld: Record<string, number>;
  /** What the store's read-back found wrong against the acknowledged requests (audit.ts). */
  store: string[];
  /** Every check that failed: exits, the store's findings, outage answers, processes that never served again. */
  violations: string[];
}

interface Cluster {
  pg: LocalPostgres;
  nats: LocalNats;
  ns: Namespace | null;
  replicas: Proc[];
  workers: Proc[];
  token: string;
  runId: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The services and processes of one run; a partition's side runs in a network namespace of its own. */
async function cluster(o: FaultRunOptions): Promise<Cluster> {
  const ns = o.fault === 'partition-pg' ? makeNamespace(2) : o.fault === 'partition-nats' ? makeNamespace(1) : null;
  // partition-pg: replica 1 reaches PostgreSQL by the namespace's second link only, and the rest by its first.
  const [web, pgLink] = ns?.links ?? [];
  const pgs = await postgresServer({ listen: o.fault === 'partition-pg' ? [pgLink!.outside] : [] });
  const nats = await natsServer({ host: web?.outside ?? '127.0.0.1' });
  const runId = `svc-${o.fault}-${Date.now()}`;
  const token = randomBytes(16).toString('hex');
  const env = { PGPASSWORD: pgs.password, COGEN_TOKEN: token };
  const replicas: Proc[] = [];
  for (let i = 0; i < 2; i++) {
    const inNs = o.fault === 'partition-pg' && i === 1;
    const store = inNs ? pgs.url.replace('127.0.0.1', pgLink!.outside) : pgs.url;
    const args = ['serve', '--preset', o.preset, '--store', store, '--run-id', runId, '--verify', nats.url];
    const where = inNs ? { host: web!.inside, wrap: ns!.wrap } : {};
    replicas.push(
      proc(`replica ${i}`, 'replica', await freePort(), [...args, '--runs-dir', `${o.runsDir}/r${i}`], env, where),
    );
  }
  const workers: Proc[] = [];
  for (let i = 0; i < 3; i++) {
    const inNs = o.fault === 'partition-nats' && i === 0;
    const args = ['worker', '--nats', nats.url, '--ack-wait', '2', '--sandbox-workers', '1', '--concurrency', '2'];
    const where = inNs ? { host: web!.inside, wrap: ns!.wrap } : {};
    workers.push(proc(`worker ${i}`, 'worker', await freePort(), [...args, '--trace'], env, where));
  }
  return { pg: pgs, nats, ns, replicas, workers, token, runId };
}

export async function runServiceFault(o: FaultRunOptions): Promise<FaultRunReport> {
  const c = await cluster(o);
  const db = new pg.Pool({ ...parsePgUrl(c.pg.url).config, password: c.pg.password, max: 2 });
  db.on('error', () => undefined);
  const all = [...c.replicas, ...c.workers];
  try {
    // The first replica creates the run (and draws its probes); the others join it.
    c.replicas[0]!.start();
    await c.replicas[0]!.healthy();
    for (const p of all.slice(1)) p.start();
    await Promise.all(all.slice(1).map((p) => p.healthy()));
    return await underLoad(o, c, db);
  } finally {
    await Promise.all(all.map((p) => (p.child?.kill('SIGCONT'), p.stop())));
    await db.end();
    c.ns?.remove();
  }
}

async function underLoad(o: FaultRunOptions, c: Cluster, db: pg.Pool): Promise<FaultRunReport> {
  const t0 = performance.now();
  const faultAt = t0 + o.calmSeconds * 1000;
  const end = faultAt + (o.outageSeconds + o.afterSeconds) * 1000;
  const outcomes: Outcome[] = [];
  const acks = new Map<string, Ack>();
  const refs = new Map<string, string>();
  const common = { replicas: c.replicas, db, runId: c.runId, refs, end, token: c.token, acks };
  const onOutcome = (x: Outcome) => void outcomes.push(x);
  const load = [
    ...Array.from({ length: o.clients }, (_, k) =>
      trainer({ ...common, name: `load-${k}`, first: k, tasksPerRequest: 4, resend: true, onOutcome }),
    ),
    // One probe per replica, pinned to it: when it commits again, and how long the other waits in a pause.
    ...c.replicas.map((_, k) =>
      trainer({ ...common, name: `probe-${k}`, pin: k, tasksPerRequest: 1, pauseMs: 100, onOutcome }),
    ),
  ];
  await sleep(faultAt - performance.now());
  const fault = await strike(o, c, db);
  const returned = performance.now();
  const recovery = await recovered(c, outcomes, returned);
  await Promise.all(load);
  const report: FaultRunReport = {
    fault: o.fault,
    runId: c.runId,
    acked: acks.size,
    faultAt: (fault.at - t0) / 1000,
    returnedAt: (returned - t0) / 1000,
    exits: c.replicas
      .concat(c.workers)
      .flatMap((p) => p.exits.map((e) => `${p.name} exited (${e.signal ?? e.code}): ${lastLines(p)}`)),
    recovery,
    rates: {
      before: rate(outcomes, t0, fault.at),
      after: rate(outcomes, returned, end),
    },
    outage: outageAnswers(outcomes, fault.at, returned),
    ...(fault.pause
      ? { pause: { ...fault.pause, blockMs: longestWait(outcomes, fault.pause.other, fault.at, returned) } }
      : {}),
    lockHeld: await lockHeld(c.replicas, c.token),
    store: await audit(db, c.runId, acks),
    violations: [],
  };
  report.violations.push(...report.exits, ...report.store);
  if (report.outage.other.length)
    report.violations.push(
      `answers during the outage other than 503 or a failed connection: ${report.outage.other[0]}`,
    );
  for (const r of recovery) if (r.ms === null) report.violations.push(`${r.name} did not serve again after the return`);
  return report;
}

/** The fault itself; resolves at the service's return. */
async function strike(
  o: FaultRunOptions,
  c: Cluster,
  db: pg.Pool,
): Promise<{ at: number; pause?: { heldLock: boolean; tries: number; other: string } }> {
  const outage = () => sleep(o.outageSeconds * 1000);
  const at = performance.now();
  o.log(`${o.fault}: the fault begins`);
  if (o.fault === 'pg-stop') {
    await c.pg.stop('immediate');
    await outage();
    await c.pg.start();
  } else if (o.fault === 'nats-kill') {
    await c.nats.kill9();
    await outage();
    await c.nats.start();
  } else if (o.fault === 'partition-pg' || o.fault === 'partition-nats') {
    const link = c.ns!.links[o.fault === 'partition-pg' ? 1 : 0]!;
    link.cut();
    await outage();
    link.heal();
  } else {
    const paused = await pauseHolder(c, db);
    await outage();
    paused.p.child!.kill('SIGCONT');
    o.log(`pause: ${paused.p.name} continued (it held the lock: ${paused.heldLock}, after ${paused.tries} tries)`);
    return {
      at: paused.at,
      pause: { heldLock: paused.heldLock, tries: paused.tries, other: c.replicas.find((r) => r !== paused.p)!.name },
    };
  }
  o.log(`${o.fault}: the service is back`);
  return { at };
}

/** Stops a replica (SIGSTOP) at a moment its session holds the run's writer lock (a transaction that took a row lock); gives up holding out after 200 tries. */
async function pauseHolder(c: Cluster, db: pg.Pool) {
  for (let tries = 1; ; tries++) {
    const p = c.replicas[tries % c.replicas.length]!;
    const pid = p.child!.pid!;
    p.child!.kill('SIGSTOP');
    const at = performance.now();
    const held = await db.query(
      'SELECT 1 FROM pg_stat_activity WHERE application_name LIKE $1 AND backend_xid IS NOT NULL',
      [`cogen ${pid} %`],
    );
    if (held.rowCount || tries >= 200) return { p, at, heldLock: Boolean(held.rowCount), tries };
    p.child!.kill('SIGCONT');
    await sleep(5 + Math.random() * 50);
  }
}

/** ms from the return to each replica's first commit (its probe's 2xx) and each worker's first answered batch. */
async function recovered(
  c: Cluster,
  outcomes: Outcome[],
  returned: number,
): Promise<{ name: string; ms: number | null }[]> {
  const deadline = returned + 60_000;
  const replicaMs = (name: string) => {
    const first = outcomes.find(
      (x) => x.trainer.startsWith('probe-') && x.replica === name && x.status === 200 && x.at >= returned,
    );
    return first ? first.at - returned : null;
  };
  const workerMs = (p: Proc) => {
    const first = p.lines.find((l) => l.t >= returned && l.line.startsWith('answered batch '));
    return first ? first.t - returned : null;
  };
  while (performance.now() < deadline) {
    const all = [...c.replicas.map((p) => replicaMs(p.name)), ...c.workers.map(workerMs)];
    if (all.every((ms) => ms !== null)) break;
    await sleep(100);
  }
  return [
    ...c.replicas.map((p) => ({ name: p.name, ms: replicaMs(p.name) })),
    ...c.workers.map((p) => ({ name: p.name, ms: workerMs(p) })),
  ];
}

/** Rewards/s of the score requests acknowledged between `from` and `to`. */
const rate = (outcomes: Outcome[], from: number, to: number): number =>
  outcomes
    .filter((x) => x.path === '/v1/score' && x.status === 200 && x.at >= from && x.at < to)
    .reduce((n, x) => n + x.items, 0) /
  ((to - from) / 1000);

/** What the requests sent between the fault and the return got. */
function outageAnswers(outcomes: Outcome[], from: number, to: number): FaultRunReport['outage'] {
  const during = outcomes.filter((x) => x.sent >= from && x.sent <= to);
  return {
    sent: during.length,
    committed: during.filter((x) => x.status === 200).length,
    committedBy: Object.fromEntries(
      [...new Set(outcomes.map((x) => x.replica))].map((r) => [
        r,
        outcomes.filter(
          (x) => x.replica === r && x.status === 200 && x.path === '/v1/score' && x.at > from && x.at <= to,
        ).length,
      ]),
    ),
    retriable503: during.filter((x) => x.status === 503 && x.retryAfter).length,
    connection: during.filter((x) => x.status === 0).length,
    other: during
      .filter((x) => x.status !== 200 && x.status !== 0 && !(x.status === 503 && x.retryAfter))
      .map((x) => `${x.path} on ${x.replica}: ${x.status} ${x.detail ?? ''}`),
  };
}

/** The longest time, from `from` until its first commit after `to`, that `replica`'s probe went without a 2xx score. */
function longestWait(outcomes: Outcome[], replica: string, from: number, to: number): number {
  const times = outcomes
    .filter((x) => x.trainer.startsWith('probe-') && x.replica === replica && x.path === '/v1/score')
    .filter((x) => x.status === 200 && x.at >= from)
    .map((x) => x.at)
    .sort((a, b) => a - b);
  let last = from;
  let longest = 0;
  for (const t of times) {
    longest = Math.max(longest, t - last);
    last = t;
    if (t > to) return longest;
  }
  return Math.max(longest, to - last);
}

/** cogen_lock_held_seconds summed over the replicas: cumulative counts by bucket. */
async function lockHeld(replicas: Proc[], token: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const r of replicas) {
    const text = await fetch(`${r.url}/metrics`, { headers: { authorization: `Bearer ${token}` } })
      .then((x) => x.text())
      .catch(() => '');
    for (const m of text.matchAll(/^cogen_lock_held_seconds_bucket\{le="([^"]+)"\} (\d+)$/gm))
      out[m[1]!] = (out[m[1]!] ?? 0) + Number(m[2]);
  }
  return out;
}

/** The error a process died of (its stderr's first line naming one, among its last), else its last line. */
const lastLines = (p: Proc) => {
  const tail = p.lines.slice(-30).map((l) => l.line);
  return tail.find((l) => /Error\b/.test(l)) ?? tail.at(-1) ?? '';
};
