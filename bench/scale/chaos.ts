// The chaos run of the scale-out setup (docs/scale-out.md), for bench:scale-chaos and its short
// version in the tests: replicas on one PostgreSQL run verifying through workers on NATS JetStream,
// clients scoring with idempotency keys and failing over between replicas, and every so often one
// replica or worker killed with SIGKILL and started again. Afterwards the store is read back:
// every acknowledged score must be in it exactly once, and no key may have been answered twice
// with different bodies; clients must have seen only retriable errors; a restarted process must
// answer within 5 s, and a killed worker's batches must be delivered again within 5 s.
import pg from 'pg';
import { freePort } from '../../test/setup/local-services.js';
import { parsePgUrl } from '../../src/run/testing.js';
import { proc, type Proc } from './procs.js';
import { trainer, type Outcome } from './trainer.js';
import { audit, type Ack } from './audit.js';

export interface ChaosOptions {
  preset: string;
  pgUrl: string;
  pgPassword: string;
  nats: string;
  replicas: number;
  workers: number;
  clients: number;
  /** Seconds of scoring without kills first (the peer of the chaos phase). */
  calmSeconds: number;
  chaosSeconds: number;
  /** A kill every min–max seconds. */
  killEvery: [number, number];
  ackWaitS: number;
  runsDir: string;
  log: (line: string) => void;
  /** Check the 5 s bounds on restarts and redeliveries (the bench does; the tests time nothing). */
  timed: boolean;
}

export interface Kill {
  name: string;
  kind: Proc['kind'];
  at: number;
  /** ms from the restart to the first 200 on /health. */
  restartMs: number;
  /** Batches the killed worker held, and ms from the kill to the first batch delivered again (null: none held, or none seen). */
  heldBatches?: number;
  redeliveryMs?: number | null;
  /** Why it did not answer again, when it did not. */
  failed?: string;
}

export interface ChaosReport {
  runId: string;
  acked: number;
  rewards: { calm: number; chaos: number };
  seconds: { calm: number; chaos: number };
  kills: Kill[];
  /** Errors clients saw, by class: 503 with Retry-After, connection refused/reset, others (violations). */
  errors: { retriable503: number; connection: number; other: string[] };
  violations: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runChaos(o: ChaosOptions): Promise<ChaosReport> {
  const runId = `chaos-${Date.now()}`;
  const env = { PGPASSWORD: o.pgPassword };
  const replicas: Proc[] = [];
  for (let i = 0; i < o.replicas; i++) {
    replicas.push(
      proc(
        `replica ${i}`,
        'replica',
        await freePort(),
        [
          'serve',
          '--preset',
          o.preset,
          '--store',
          o.pgUrl,
          '--run-id',
          runId,
          '--verify',
          o.nats,
          '--runs-dir',
          `${o.runsDir}/r${i}`,
        ],
        env,
      ),
    );
  }
  const workers: Proc[] = [];
  for (let i = 0; i < o.workers; i++)
    workers.push(
      proc(`worker ${i}`, 'worker', await freePort(), [
        'worker',
        '--nats',
        o.nats,
        '--ack-wait',
        String(o.ackWaitS),
        '--sandbox-workers',
        '1',
        '--concurrency',
        '2',
        '--trace',
      ]),
    );
  const db = new pg.Pool({ ...parsePgUrl(o.pgUrl).config, password: o.pgPassword, max: 2 });
  const report: ChaosReport = {
    runId,
    acked: 0,
    rewards: { calm: 0, chaos: 0 },
    seconds: { calm: o.calmSeconds, chaos: o.chaosSeconds },
    kills: [],
    errors: { retriable503: 0, connection: 0, other: [] },
    violations: [],
  };
  const acks = new Map<string, Ack>();
  try {
    // The first replica creates the run (and draws its probes); the others join it.
    replicas[0]!.start();
    await replicas[0]!.healthy();
    for (const p of [...replicas.slice(1), ...workers]) p.start();
    await Promise.all([...replicas.slice(1), ...workers].map((p) => p.healthy()));
    const t0 = performance.now();
    const calmEnd = t0 + o.calmSeconds * 1000;
    const end = calmEnd + o.chaosSeconds * 1000;
    const refs = new Map<string, string>();
    const onOutcome = (x: Outcome) => {
      if (x.status === 200 && x.path === '/v1/score')
        if (x.sent < calmEnd) report.rewards.calm += x.items;
        else report.rewards.chaos += x.items;
      else if (x.status === 503 && x.retryAfter) report.errors.retriable503++;
      else if (x.status === 0) report.errors.connection++;
      else if (x.status !== 200) report.errors.other.push(`${x.path} on ${x.replica}: ${x.status} ${x.detail ?? ''}`);
    };
    const clients = Array.from({ length: o.clients }, (_, c) =>
      trainer({
        name: `chaos-${c}`,
        first: c,
        replicas,
        db,
        runId,
        refs,
        tasksPerRequest: 4,
        end,
        resend: true,
        acks,
        onOutcome,
      }),
    );
    const killer = killLoop(o, replicas, workers, calmEnd, end, report);
    await Promise.all([...clients, killer]);
    report.acked = acks.size;
    await check(db, runId, acks, report, o.timed);
    return report;
  } finally {
    await Promise.all([...replicas, ...workers].map((p) => p.stop()));
    await db.end();
  }
}

async function killLoop(
  o: ChaosOptions,
  replicas: Proc[],
  workers: Proc[],
  calmEnd: number,
  end: number,
  report: ChaosReport,
): Promise<void> {
  await sleep(Math.max(0, calmEnd - performance.now()));
  const all = [...replicas, ...workers];
  for (;;) {
    const wait = (o.killEvery[0] + Math.random() * (o.killEvery[1] - o.killEvery[0])) * 1000;
    if (performance.now() + wait > end) return;
    await sleep(wait);
    const p = all[Math.floor(Math.random() * all.length)]!;
    const at = performance.now();
    const gen = p.gen;
    p.kill9();
    await p.closed();
    p.start();
    let failed: string | undefined;
    const restartMs = await p.healthy(60_000).catch((e: Error) => ((failed = e.message), Infinity));
    const kill: Kill = {
      name: p.name,
      kind: p.kind,
      at: (at - calmEnd) / 1000,
      restartMs,
      ...(failed ? { failed } : {}),
    };
    if (p.kind === 'worker') {
      // The batches the killed worker had taken and not answered (its trace lines), and when the first of them was delivered again.
      const taken = new Map<string, boolean>();
      for (const { line } of p.lines.filter((l) => l.gen === gen)) {
        const m = /^(took|answered) batch (\S+)$/.exec(line);
        if (m) taken.set(m[2]!, m[1] === 'took');
      }
      const held = [...taken].filter(([, open]) => open).map(([id]) => id);
      kill.heldBatches = held.length;
      const again = () =>
        workers.flatMap((w) =>
          w.lines
            .filter((l) => l.t > at && held.some((id) => l.line.startsWith(`batch ${id} delivered again`)))
            .map((l) => l.t),
        );
      const deadline = at + 15_000;
      while (held.length > 0 && performance.now() < deadline && again().length === 0) await sleep(50);
      kill.redeliveryMs = again().length ? Math.min(...again()) - at : null;
    }
    report.kills.push(kill);
    o.log(
      `killed ${p.name}; answering again after ${(restartMs / 1000).toFixed(1)} s${kill.redeliveryMs != null ? `; a batch delivered again after ${(kill.redeliveryMs / 1000).toFixed(1)} s` : ''}`,
    );
  }
}

/** Reads the store back (audit.ts), and checks the restarts and what the clients saw. */
async function check(
  db: pg.Pool,
  runId: string,
  acks: Map<string, Ack>,
  report: ChaosReport,
  timed: boolean,
): Promise<void> {
  const v = report.violations;
  v.push(...(await audit(db, runId, acks)));
  for (const k of report.kills) {
    if (k.failed) v.push(`${k.name} did not answer after its restart: ${k.failed}`);
    if (!timed) continue;
    if (k.restartMs > 5000 && !k.failed)
      v.push(`${k.name} answered ${(k.restartMs / 1000).toFixed(1)} s after its restart (over 5 s)`);
    if (k.kind === 'worker' && (k.heldBatches ?? 0) > 0 && (k.redeliveryMs == null || k.redeliveryMs > 5000))
      v.push(`${k.name} held ${k.heldBatches} batches and none was delivered again within 5 s`);
  }
  if (report.errors.other.length)
    v.push(`clients saw ${report.errors.other.length} errors that are not retriable, e.g. ${report.errors.other[0]}`);
}
