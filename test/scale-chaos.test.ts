// The short version of bench:scale-chaos (bench/scale/chaos.ts, docs/scale-out.md): 2 replicas on
// one PostgreSQL run and 3 workers on NATS JetStream, 2 clients scoring with idempotency keys, and a
// random replica or worker killed with SIGKILL and restarted every 6–9 s for 25 s. Every
// acknowledged score is in the store exactly once, no key is answered twice with different bodies,
// clients see only retriable errors, and every restarted process answers again (how fast is
// bench:scale-chaos's to measure).
import { describe, expect, it } from 'vitest';
import { runChaos } from '../bench/scale/chaos.js';
import { isCI, natsUrl, postgresUrl } from './services.js';
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
  it('lose no acknowledged score, answer no key twice differently, and come back', async () => {
    const report = await runChaos({
      preset: 'smoke',
      pgUrl: pg.url!,
      pgPassword: process.env.PGPASSWORD ?? '',
      nats: nats.url!,
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
});
