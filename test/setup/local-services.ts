// Starting Debian's PostgreSQL and NATS JetStream servers on free loopback ports, for the test run
// (test/setup/services.ts) and the scale-out benches (bench/scale-*.ts): postgres as the postgres
// user (runuser, when run as root) with a temporary data directory and a random password (written
// to a file only initdb reads, then removed), nats-server with -js. stopLocalServices stops them
// and removes their directories.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  appendFileSync,
  chmodSync,
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const INSTALL = 'apt-get install -y postgresql nats-server';

/** vitest options whose value may follow as the next word. */
const VALUE_OPTIONS = new Set([
  '--project',
  '--reporter',
  '--outputFile',
  '-t',
  '--testNamePattern',
  '--shard',
  '-c',
  '--config',
  '-r',
  '--root',
  '--dir',
  '--pool',
  '--maxWorkers',
]);

/**
 * Whether this test run wants a service: its flag (`on`, `off` or `auto`), under CI always, and
 * otherwise when no file filter is given or a filter matches `names`.
 */
export function wantsService(flag: string | undefined, names: RegExp): boolean {
  const f = (flag ?? 'auto').toLowerCase();
  if (f === 'on' || f === '1' || f === 'true') return true;
  if (f === 'off' || f === '0' || f === 'false') return false;
  if (process.env.CI === 'true' || process.env.CI === '1') return true;
  // The value of an option given as a separate word is no file filter: `npm run test:e2e` is
  // `vitest run --project e2e` (vitest.config.ts), and its `e2e` must not read as one.
  const argv = process.argv.slice(2);
  const args = argv.filter(
    (a, i) => !a.startsWith('-') && !VALUE_OPTIONS.has(argv[i - 1] ?? '') && a !== 'run' && a !== 'watch',
  );
  const filters = args.filter((a) => a.includes('/') || a.includes('test') || /^[\w.-]+$/.test(a));
  return filters.length === 0 || filters.some((a) => names.test(a));
}

export function freePort(): Promise<number> {
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

async function waitForPort(port: number, ms: number, alive: () => boolean, host = '127.0.0.1'): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (!alive()) throw new Error('the server exited before it listened');
    const ok = await new Promise<boolean>((resolve) => {
      const s = createConnection({ port, host }, () => (s.end(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`nothing listened on ${host}:${port} after ${ms / 1000} s`);
}

/** The newest Debian PostgreSQL's bin directory. */
function postgresBin(): string | null {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return null;
  const versions = readdirSync(base)
    .filter((v) => existsSync(join(base, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
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
  return process.getuid?.() === 0
    ? { cmd: 'runuser', args: ['-u', 'postgres', '--', bin, ...args] }
    : { cmd: bin, args };
}

/** A PostgreSQL server of this setup, which a fault test or bench can stop (`-m immediate`) and start again on the same port and data. */
export interface LocalPostgres {
  url: string;
  password: string;
  port: number;
  /** pg_ctl stop with this mode; resolves once the server exited. */
  stop(mode?: 'immediate' | 'fast'): Promise<void>;
  /** Starts the server again (after stop); resolves once it listens. */
  start(): Promise<void>;
}

/**
 * Starts a PostgreSQL server on a free port. `listen`: addresses besides 127.0.0.1 it listens on
 * (a network namespace's end of a link, for the chaos bench's partitions), each let in by pg_hba
 * with a password.
 */
export async function postgresServer(opts: { listen?: string[] } = {}): Promise<LocalPostgres> {
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
  const data = join(dir, 'data');
  const init = asPostgres(join(bin, 'initdb'), [
    '-D',
    data,
    '-A',
    'scram-sha-256',
    '-U',
    'postgres',
    `--pwfile=${pwfile}`,
    '--no-sync',
  ]);
  const made = spawnSync(init.cmd, init.args, { encoding: 'utf8' });
  rmSync(pwfile, { force: true });
  if (made.status !== 0)
    throw new Error(`initdb failed: ${(made.stderr || made.stdout).trim().split('\n').slice(-1)[0]}`);
  const listen = ['127.0.0.1', ...(opts.listen ?? [])];
  for (const address of opts.listen ?? [])
    appendFileSync(join(data, 'pg_hba.conf'), `host all all ${address.replace(/\.\d+$/, '.0')}/24 scram-sha-256\n`);
  const port = await freePort();
  // fsync off: nothing here survives the machine, and this keeps 2 cores free for the tests (a
  // server stopped -m immediate recovers from its WAL, which the operating system still holds).
  const run = asPostgres(join(bin, 'postgres'), [
    '-D',
    data,
    '-c',
    `listen_addresses=${listen.join(',')}`,
    '-p',
    String(port),
    '-k',
    dir,
    '-c',
    'fsync=off',
    '-c',
    'max_connections=200',
  ]);
  let child: ChildProcess | null = null;
  const server: LocalPostgres = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    password,
    port,
    async start() {
      const c = spawn(run.cmd, run.args, { stdio: 'ignore' });
      child = c;
      await waitForPort(port, 60_000, () => c.exitCode === null);
      // Listening is not yet accepting: after a stop -m immediate the server first replays its WAL.
      const end = Date.now() + 60_000;
      while (spawnSync(join(bin, 'pg_isready'), ['-q', '-h', '127.0.0.1', '-p', String(port)]).status !== 0) {
        if (Date.now() > end) throw new Error(`PostgreSQL on ${port} did not accept connections after 60 s`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async stop(mode = 'immediate') {
      const c = child;
      if (!c) return;
      const stop = asPostgres(join(bin, 'pg_ctl'), ['-D', data, 'stop', '-m', mode]);
      spawnSync(stop.cmd, stop.args, { stdio: 'ignore' });
      await exited(c, 10_000);
      child = null;
    },
  };
  stops.push(() => server.stop());
  await server.start();
  return server;
}

export async function startPostgres(): Promise<{ url: string; password: string }> {
  const { url, password } = await postgresServer();
  return { url, password };
}

/** The pids of the servers started here (the benches read their CPU time). */
export const servicePids: { postgres?: number; nats?: number } = {};

/** A nats-server (JetStream) of this setup, which a fault test or bench can kill -9 and start again on the same port and store. */
export interface LocalNats {
  url: string;
  kill9(): Promise<void>;
  start(): Promise<void>;
}

/** Starts nats-server -js on a free port of `host` (default 127.0.0.1), its store in a temporary directory. */
export async function natsServer(opts: { host?: string } = {}): Promise<LocalNats> {
  const found = spawnSync('nats-server', ['--version'], { encoding: 'utf8' });
  if (found.error) throw new Error(`nats-server is not installed (${INSTALL})`);
  const dir = mkdtempSync(join(tmpdir(), 'cogen-nats-test-'));
  dirs.push(dir);
  const host = opts.host ?? '127.0.0.1';
  const port = await freePort();
  let child: ChildProcess | null = null;
  const server: LocalNats = {
    url: `nats://${host}:${port}`,
    async start() {
      const c = spawn('nats-server', ['-js', '-a', host, '-p', String(port), '-sd', dir], { stdio: 'ignore' });
      child = c;
      servicePids.nats = c.pid;
      await waitForPort(port, 30_000, () => c.exitCode === null, host);
    },
    async kill9() {
      const c = child;
      if (!c) return;
      c.kill('SIGKILL');
      await exited(c, 10_000);
      child = null;
    },
  };
  stops.push(async () => {
    const c = child;
    if (!c) return;
    c.kill('SIGTERM');
    await exited(c, 10_000);
  });
  await server.start();
  return server;
}

export async function startNats(): Promise<string> {
  return (await natsServer()).url;
}

export async function stopLocalServices(): Promise<void> {
  await Promise.all(stops.map((stop) => stop().catch(() => undefined)));
  stops.length = 0;
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs.length = 0;
}
