// The short version of bench:scale-chaos (bench/scale/chaos.ts, docs/scale-out.md): 2 replicas on
// one PostgreSQL run and 3 workers on NATS JetStream, 2 clients scoring with idempotency keys, and a
// random replica or worker killed with SIGKILL and restarted every 6–9 s for 25 s. Every
// acknowledged score is in the store exactly once, no key is answered twice with different bodies,
// clients see only retriable errors, and every restarted process answers again (how fast is
// bench:scale-chaos's to measure). Then the short version of bench:scale-chaos --services
// (bench/scale/service-faults.ts): PostgreSQL stopped -m immediate, a replica paused while it holds
// the writer lock, and (where this machine makes network namespaces) a partition between a replica
// and PostgreSQL, each on a fresh cluster under load: no cogen process exits, the store holds every
// acknowledged request once with its rewards, the outage's requests get 503s or failed connections,
// and every replica and worker serves again, with nothing restarted by hand.
import { afterAll, describe, expect, it } from 'vitest';
import { runChaos } from '../bench/scale/chaos.js';
import { namespacesUnavailable } from '../bench/scale/netns.js';
import { runServiceFault, type ServiceFault } from '../bench/scale/service-faults.js';
import { isCI, natsUrl, postgresUrl } from './services.js';
import { startNats, stopLocalServices } from './setup/local-services.js';
import { tempDir } from './helpers.js';

const pg = postgresUrl();
const nats = natsUrl();

describe('replicas and workers under kill -9', () => {
  if (!pg.url || !nats.url) {
    // Under CI a missing server fails the run; elsewhere the test is skipped with the reason.
    const why = [pg.url ? '' : pg.reason, nats.url ? '' : nats.reason].filter(Boolean).join('; ');
    if (isCI) it('has PostgreSQL and nats-server', () => expect.fail(why));
    else it.skip(`needs PostgreSQL and nats-server: ${why}`, () => undefined);
    return;
  }
  // A nats-server of its own: its workers take from the queue's fixed subjects, and on the shared
  // server they would take the batches test/workers-nats.test.ts means for its own workers.
  afterAll(() => stopLocalServices());
  it('lose no acknowledged score, answer no key twice differently, and come back', async () => {
    const ownNats = await startNats();
    const report = await runChaos({
      preset: 'smoke',
      pgUrl: pg.url!,
      pgPassword: process.env.PGPASSWORD ?? '',
      nats: ownNats,
      replicas: 2,
      workers: 3,
      clients: 2,
      calmSeconds: 3,
      chaosSeconds: 25,
      killEvery: [6, 9],
      ackWaitS: 2,
      runsDir: tempDir('cogen-chaos-'),
      log: () => undefined,
      // The 5 s bounds on restarts and redeliveries are the bench's to check (tests time nothing).
      timed: false,
    });
    expect(report.violations).toEqual([]);
    expect(report.kills.length).toBeGreaterThanOrEqual(2);
    expect(report.acked).toBeGreaterThan(10);
    expect(report.errors.other).toEqual([]);
  }, 240_000);

  it('ride out faults of the services: lose nothing, exit never, serve again', async () => {
    const faults: ServiceFault[] = ['pg-stop', 'pause', ...(namespacesUnavailable() ? [] : ['partition-pg' as const])];
    for (const fault of faults) {
      const r = await runServiceFault({
        fault,
        preset: 'smoke',
        clients: 2,
        calmSeconds: 3,
        // Past the server's 4 s limits, for the pause.
        outageSeconds: 6,
        afterSeconds: 5,
        runsDir: tempDir('cogen-svc-'),
        log: () => undefined,
      });
      await stopLocalServices();
      expect({ fault, violations: r.violations }).toEqual({ fault, violations: [] });
      expect(r.acked).toBeGreaterThan(5);
      if (r.pause) expect(r.pause.heldLock).toBe(true);
    }
  }, 420_000);
});
