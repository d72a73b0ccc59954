// Credentials of the scale-out setup (docs/scale-out.md) come from the environment only: a store or
// queue URL that carries a password is refused with one line that does not repeat it, and a worker
// bound beyond loopback needs COGEN_TOKEN, as a replica does.
import { describe, expect, it } from 'vitest';
import { parsePgUrl } from '../src/run/testing.js';
import { natsTarget } from '../src/workers/nats.js';
import { cogen } from './helpers.js';

describe('scale-out credentials', () => {
  it('refuse a password in a store or queue URL with one line that does not show it', () => {
    for (const [parse, url, env] of [
      [parsePgUrl, 'postgres://cogen:hunter2-secret@db.example/cogen', 'PGPASSWORD'],
      [natsTarget, 'nats://user:hunter2-secret@queue.example:4222', 'NATS_PASSWORD'],
    ] as const) {
      let message = '';
      try {
        parse(url);
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message).toContain(env);
      expect(message).not.toContain('hunter2');
      expect(message).not.toContain('\n');
    }
    expect(parsePgUrl('postgres://cogen@db.example:5433/runs')).toEqual({
      config: { host: 'db.example', port: 5433, database: 'runs', user: 'cogen' },
      display: 'postgres://cogen@db.example:5433/runs',
    });
  });

  it('keep a worker beyond loopback from starting without a token, before it connects anywhere', () => {
    const env = { ...process.env, COGEN_TOKEN: '' };
    const r = cogen(['worker', '--nats', 'nats://127.0.0.1:1', '--host', '0.0.0.0'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe(
      'cogen: refusing to serve /metrics on 0.0.0.0 without a bearer token: set COGEN_TOKEN (or bind 127.0.0.1)',
    );
    const served = cogen(['serve', '--store', 'postgres://u:pw-in-url@127.0.0.1:1/db', '--run-id', 'x'], { env });
    expect(served.code).toBe(1);
    expect(served.stderr).not.toContain('pw-in-url');
    expect(served.stderr.trim().split('\n')).toHaveLength(1);
  });
});
