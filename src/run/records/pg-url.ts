// `--store postgres://user@host:port/db`: where a served run's records live. The password is read by
// the pg client from PGPASSWORD (or ~/.pgpass), never from the URL, so that it appears on no command
// line, in no process list and in no log line.
import type { PoolConfig } from 'pg';
import { UserError } from '../../../core/errors.js';

export interface PgTarget {
  config: PoolConfig;
  /** The URL without credentials, for messages. */
  display: string;
}

export function parsePgUrl(url: string): PgTarget {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new UserError('--store: expected postgres://user@host[:port]/database');
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:')
    throw new UserError(`--store: expected a postgres:// URL, got ${u.protocol}//…`);
  if (u.password)
    throw new UserError(
      '--store: the URL carries a password; set PGPASSWORD in the environment instead (a password on a command line shows in process lists)',
    );
  const database = decodeURIComponent(u.pathname.replace(/^\//, ''));
  if (!database) throw new UserError('--store: the URL names no database (postgres://user@host/database)');
  const user = decodeURIComponent(u.username) || process.env.PGUSER || undefined;
  const host = u.hostname.replace(/^\[|\]$/g, '') || 'localhost';
  const port = u.port ? Number(u.port) : 5432;
  return {
    config: { host, port, database, user },
    display: `postgres://${user ? `${user}@` : ''}${u.host || host}/${database}`,
  };
}
