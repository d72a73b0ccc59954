// vitest globalSetup: the PostgreSQL and NATS JetStream servers the scale-out tests use
// (docs/scale-out.md). With COGEN_TEST_POSTGRES_URL (its password in PGPASSWORD) or
// COGEN_TEST_NATS_URL set, that server is used as is. Otherwise Debian's postgresql is started as the
// postgres user (runuser, when run as root) on a free loopback port with a temporary data directory,
// and nats-server with JetStream (-js) likewise; both are stopped at teardown. Tests read them with
// inject('services') (or the environment variables, which are set too). When a server cannot be had,
// its `error` says why in one line: the tests that need it FAIL under CI (CI=true) and are skipped
// elsewhere. Outside CI they are only started when the selected tests may need them (no file filter,
// or a filter naming postgres/replica/worker/scale/chaos/nats); COGEN_TEST_SERVICES=on|off overrides.
import type { TestProject } from 'vitest/node';
import { startNats, startPostgres, stopLocalServices, wantsService } from './local-services.js';

export interface ServiceConnection {
  url: string | null;
  /** Why there is none (null when url is set). */
  error: string | null;
}

export interface TestServices {
  postgres: ServiceConnection & { password: string };
  nats: ServiceConnection;
}

declare module 'vitest' {
  export interface ProvidedContext {
    services: TestServices;
  }
}

const wanted = (): boolean =>
  wantsService(process.env.COGEN_TEST_SERVICES, /postgres|replica|worker|scale|chaos|nats/i);

const oneLine = (e: unknown): string => (e instanceof Error ? e.message : String(e)).split('\n')[0]!;

export async function setup(project: TestProject): Promise<void> {
  const services: TestServices = {
    postgres: { url: null, error: null, password: '' },
    nats: { url: null, error: null },
  };
  const start = wanted();
  if (process.env.COGEN_TEST_POSTGRES_URL) {
    services.postgres = {
      url: process.env.COGEN_TEST_POSTGRES_URL,
      error: null,
      password: process.env.PGPASSWORD ?? '',
    };
  } else if (!start) {
    services.postgres.error = 'PostgreSQL not started (no selected test needs it)';
  } else {
    try {
      const pg = await startPostgres();
      services.postgres = { url: pg.url, error: null, password: pg.password };
      process.stderr.write(`[services] PostgreSQL at ${pg.url}\n`);
    } catch (e) {
      services.postgres.error = `no PostgreSQL: ${oneLine(e)}`;
      process.stderr.write(`[services] ${services.postgres.error}\n`);
    }
  }
  if (process.env.COGEN_TEST_NATS_URL) {
    services.nats = { url: process.env.COGEN_TEST_NATS_URL, error: null };
  } else if (!start) {
    services.nats.error = 'nats-server not started (no selected test needs it)';
  } else {
    try {
      services.nats = { url: await startNats(), error: null };
      process.stderr.write(`[services] NATS JetStream at ${services.nats.url}\n`);
    } catch (e) {
      services.nats.error = `no NATS: ${oneLine(e)}`;
      process.stderr.write(`[services] ${services.nats.error}\n`);
    }
  }
  if (services.postgres.url) {
    process.env.COGEN_TEST_POSTGRES_URL = services.postgres.url;
    process.env.PGPASSWORD = services.postgres.password;
  }
  if (services.nats.url) process.env.COGEN_TEST_NATS_URL = services.nats.url;
  project.provide('services', services);
}

export async function teardown(): Promise<void> {
  await stopLocalServices();
}
