// vitest globalSetup: the PostgreSQL and NATS JetStream servers the scale-out tests use
// (docs/scale-out.md). With COGEN_TEST_POSTGRES_URL (its password in PGPASSWORD) or
// COGEN_TEST_NATS_URL set, that server is used as is. Otherwise Debian's postgresql is started as the
// postgres user (runuser, when run as root) on a free loopback port with a temporary data directory,
// and nats-server with JetStream (-js) likewise; both are stopped at teardown. Tests read them with
// inject('services') (or the environment variables, which are set too). When a server cannot be had,
// its `error` says why in one line: the tests that need it FAIL under CI (CI=true) and are skipped
// elsewhere. Outside CI they are only started when the selected tests may need them (no file filter,
// or a filter naming postgres/replica/worker/scale/chaos/nats); COGEN_TEST_SERVICES=on|off overrides.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

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

const INSTALL = 'apt-get install -y postgresql nats-server';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, ms: number, alive: () => boolean): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (!alive()) throw new Error('the server exited before it listened');
    const ok = await new Promise<boolean>((resolve) => {
      const s = createConnection({ port, host: '127.0.0.1' }, () => (s.end(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing listened on 127.0.0.1:${port} after ${ms / 1000} s`);
}

function wanted(): boolean {
  const flag = (process.env.COGEN_TEST_SERVICES ?? 'auto').toLowerCase();
  if (flag === 'on' || flag === '1' || flag === 'true') return true;
  if (flag === 'off' || flag === '0' || flag === 'false') return false;
  if (process.env.CI === 'true' || process.env.CI === '1') return true;
  const args = process.argv.slice(2).filter((a) => !a.startsWith('-') && a !== 'run' && a !== 'watch');
  const filters = args.filter((a) => a.includes('/') || a.includes('test') || /^[\w.-]+$/.test(a));
  if (filters.length === 0) return true;
  return filters.some((f) => /postgres|replica|worker|scale|chaos|nats/i.test(f));
}

/** The newest Debian PostgreSQL's bin directory. */
function postgresBin(): string | null {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return null;
  const versions = readdirSync(base).filter((v) => existsSync(join(base, v, 'bin', 'initdb'))).sort((a, b) => Number(b) - Number(a));
  return versions.length ? join(base, versions[0]!, 'bin') : null;
}

/** Stops the servers this setup started (each resolves once its process exited), then removes their directories. */
const stops: (() => Promise<void>)[] = [];
const dirs: string[] = [];

const exited = (child: ChildProcess, ms: number): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((resolve) => {
        const t = setTimeout(() => (child.kill('SIGKILL'), resolve()), ms);
        child.once('exit', () => (clearTimeout(t), resolve()));
      });

/** Runs a PostgreSQL binary as the postgres user when we are root (initdb and postgres refuse root). */
function asPostgres(bin: string, args: string[]): { cmd: string; args: string[] } {
  return process.getuid?.() === 0 ? { cmd: 'runuser', args: ['-u', 'postgres', '--', bin, ...args] } : { cmd: bin, args };
}

async function startPostgres(): Promise<{ url: string; password: string }> {
  const bin = postgresBin();
  if (!bin) throw new Error(`Debian's postgresql is not installed (${INSTALL})`);
  const dir = mkdtempSync(join(tmpdir(), 'cogen-pg-test-'));
  dirs.push(dir);
  const password = randomBytes(18).toString('hex');
  const pwfile = join(dir, 'pw');
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (process.getuid?.() === 0) {
    const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
    const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
    chownSync(dir, uid, gid);
    chownSync(pwfile, uid, gid);
    chmodSync(dir, 0o700);
  }
  const init = asPostgres(join(bin, 'initdb'), ['-D', join(dir, 'data'), '-A', 'scram-sha-256', '-U', 'postgres', `--pwfile=${pwfile}`, '--no-sync']);
  const made = spawnSync(init.cmd, init.args, { encoding: 'utf8' });
  rmSync(pwfile, { force: true });
  if (made.status !== 0) throw new Error(`initdb failed: ${(made.stderr || made.stdout).trim().split('\n').slice(-1)[0]}`);
  const port = await freePort();
  // fsync off: the tests kill replicas, never PostgreSQL, and this keeps 2 cores free for them.
  const run = asPostgres(join(bin, 'postgres'), ['-D', join(dir, 'data'), '-c', 'listen_addresses=127.0.0.1', '-p', String(port), '-k', dir, '-c', 'fsync=off', '-c', 'max_connections=200']);
  const child: ChildProcess = spawn(run.cmd, run.args, { stdio: 'ignore' });
  stops.push(() => {
    const stop = asPostgres(join(bin, 'pg_ctl'), ['-D', join(dir, 'data'), 'stop', '-m', 'immediate']);
    spawnSync(stop.cmd, stop.args, { stdio: 'ignore' });
    return exited(child, 10_000);
  });
  await waitForPort(port, 60_000, () => child.exitCode === null);
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, password };
}

async function startNats(): Promise<string> {
  const found = spawnSync('nats-server', ['--version'], { encoding: 'utf8' });
  if (found.error) throw new Error(`nats-server is not installed (${INSTALL})`);
  const dir = mkdtempSync(join(tmpdir(), 'cogen-nats-test-'));
  dirs.push(dir);
  const port = await freePort();
  const child = spawn('nats-server', ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', dir], { stdio: 'ignore' });
  stops.push(() => {
    child.kill('SIGTERM');
    return exited(child, 10_000);
  });
  await waitForPort(port, 30_000, () => child.exitCode === null);
  return `nats://127.0.0.1:${port}`;
}

const oneLine = (e: unknown): string => (e instanceof Error ? e.message : String(e)).split('\n')[0]!;

export async function setup(project: TestProject): Promise<void> {
  const services: TestServices = { postgres: { url: null, error: null, password: '' }, nats: { url: null, error: null } };
  const start = wanted();
  if (process.env.COGEN_TEST_POSTGRES_URL) {
    services.postgres = { url: process.env.COGEN_TEST_POSTGRES_URL, error: null, password: process.env.PGPASSWORD ?? '' };
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
  await Promise.all(stops.map((stop) => stop().catch(() => undefined)));
  stops.length = 0;
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs.length = 0;
}
