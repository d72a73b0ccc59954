// The PostgreSQL and NATS servers of the test run (test/setup/services.ts), or why there are none.
import { inject } from 'vitest';

export const isCI = process.env.CI === 'true' || process.env.CI === '1';

function provided() {
  try {
    return inject('services');
  } catch {
    return undefined;
  }
}

/** The test PostgreSQL's URL (its password is in PGPASSWORD), or the reason there is none. */
export function postgresUrl(): { url: string | null; reason: string } {
  const url = provided()?.postgres.url ?? process.env.COGEN_TEST_POSTGRES_URL ?? null;
  return {
    url,
    reason: provided()?.postgres.error ?? 'COGEN_TEST_POSTGRES_URL is not set and no local PostgreSQL was started',
  };
}

/** The test NATS (JetStream) URL, or the reason there is none. */
export function natsUrl(): { url: string | null; reason: string } {
  const url = provided()?.nats.url ?? process.env.COGEN_TEST_NATS_URL ?? null;
  return {
    url,
    reason: provided()?.nats.error ?? 'COGEN_TEST_NATS_URL is not set and no local nats-server was started',
  };
}
