#!/usr/bin/env node
// The local Neo4j for development and CI, without Docker: builds graphs/neo4j-launcher (Maven, once;
// offline when ~/.m2 is warm) and runs Neo4j Community embedded with Bolt on 127.0.0.1.
//
//   npm run neo4j -- [--port 7687] [--data .neo4j-data] [--password cogen-neo4j | --no-auth]
//
// Connect with NEO4J_URI=bolt://127.0.0.1:7687 NEO4J_USER=neo4j NEO4J_PASSWORD=cogen-neo4j.
// Signals (SIGINT, SIGTERM) are forwarded to the JVM, which shuts the database down cleanly.
// Environment: NEO4J_LAUNCHER_JAVA (java binary), NEO4J_LAUNCHER_HEAP (default 1g).
//
// Also a module: `startLocalNeo4j({port, dataDir, password, timeoutMs, log})` resolves to
// `{uri, user, password, process, stop()}` once the readiness line is printed (test/setup/neo4j.ts).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, statSync, readdirSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { homedir } from 'node:os';

const here = dirname(fileURLToPath(import.meta.url));
export const LAUNCHER_DIR = join(here, 'neo4j-launcher');
export const LAUNCHER_JAR = join(LAUNCHER_DIR, 'target', 'neo4j-launcher.jar');
export const DEFAULT_USER = 'neo4j';
export const DEFAULT_PASSWORD = 'cogen-neo4j';

function newestMtime(path) {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let newest = st.mtimeMs;
  for (const name of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, name)));
  return newest;
}

/** True when the jar is missing or older than pom.xml / src/. */
export function launcherNeedsBuild() {
  if (!existsSync(LAUNCHER_JAR) || !existsSync(join(LAUNCHER_DIR, 'target', 'lib'))) return true;
  const built = statSync(LAUNCHER_JAR).mtimeMs;
  return newestMtime(join(LAUNCHER_DIR, 'pom.xml')) > built || newestMtime(join(LAUNCHER_DIR, 'src')) > built;
}

/** Builds the launcher with Maven if needed: offline first when the Neo4j artifacts are cached. */
export function buildLauncher(log = (line) => process.stderr.write(line + '\n')) {
  if (!launcherNeedsBuild()) return;
  const warm = existsSync(join(homedir(), '.m2', 'repository', 'org', 'neo4j', 'neo4j'));
  const attempts = warm
    ? [
        ['-o', '-q', '-B', 'package'],
        ['-q', '-B', 'package'],
      ]
    : [['-q', '-B', 'package']];
  for (const args of attempts) {
    log(`neo4j-local: mvn ${args.join(' ')} (in ${LAUNCHER_DIR})`);
    const r = spawnSync('mvn', args, { cwd: LAUNCHER_DIR, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
    if (r.error) throw new Error(`neo4j-local: cannot run mvn: ${r.error.message}`);
    if (r.status === 0) return;
    const tail = `${r.stdout}\n${r.stderr}`.trim().split('\n').slice(-15).join('\n');
    log(`neo4j-local: mvn failed (exit ${r.status}):\n${tail}`);
  }
  throw new Error('neo4j-local: building graphs/neo4j-launcher failed (see the Maven output above)');
}

function javaArgs({ port, dataDir, password, noAuth, pageCacheMb, watchStdin }) {
  const heap = process.env.NEO4J_LAUNCHER_HEAP ?? '1g';
  const args = [`-Xmx${heap}`, '-Xms128m', '-XX:+UseSerialGC'];
  args.push('-jar', LAUNCHER_JAR, '--port', String(port), '--data', resolve(dataDir));
  if (noAuth) args.push('--no-auth');
  else args.push('--password', password);
  if (pageCacheMb) args.push('--page-cache-mb', String(pageCacheMb));
  if (watchStdin) args.push('--exit-on-stdin-eof');
  return args;
}

/**
 * Starts the local Neo4j and resolves once it prints its readiness line. The JVM exits on its own
 * when this Node process dies (it watches its stdin).
 */
export async function startLocalNeo4j({
  port = 7687,
  dataDir = '.neo4j-data',
  password = DEFAULT_PASSWORD,
  noAuth = false,
  pageCacheMb = 64,
  timeoutMs = 180_000,
  log = (line) => process.stderr.write(line + '\n'),
} = {}) {
  buildLauncher(log);
  mkdirSync(dataDir, { recursive: true });
  const java = process.env.NEO4J_LAUNCHER_JAVA ?? 'java';
  const child = spawn(java, javaArgs({ port, dataDir, password, noAuth, pageCacheMb, watchStdin: true }), {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const uri = await new Promise((resolvePromise, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`neo4j-local: no readiness line after ${timeoutMs} ms\n${out}${err}`.trim()));
    }, timeoutMs);
    const onData = (chunk) => {
      out += chunk.toString();
      const ready = /NEO4J READY (\S+)/.exec(out);
      const failed = /NEO4J FAILED (.*)/.exec(out);
      if (ready) {
        clearTimeout(timer);
        resolvePromise(ready[1]);
      } else if (failed) {
        clearTimeout(timer);
        reject(new Error(`neo4j-local: ${failed[1]}`));
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (c) => {
      err += c.toString();
      if (err.length > 20_000) err = err.slice(-10_000);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`neo4j-local: the JVM exited (${signal ?? code}) before it was ready\n${out}${err}`.trim()));
    });
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`neo4j-local: cannot start ${java}: ${e.message}`));
    });
  });
  const exited = new Promise((r) => {
    if (child.exitCode !== null || child.signalCode !== null) r();
    else child.once('exit', () => r());
  });
  return {
    uri,
    user: DEFAULT_USER,
    password: noAuth ? '' : password,
    process: child,
    /** SIGTERM, then SIGKILL after graceMs; resolves when the JVM has exited. */
    async stop(graceMs = 30_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(t);
    },
  };
}

function parseCli(argv) {
  const opts = { port: 7687, dataDir: '.neo4j-data', password: DEFAULT_PASSWORD, noAuth: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--port') opts.port = Number(next());
    else if (a === '--data') opts.dataDir = next();
    else if (a === '--password') opts.password = next();
    else if (a === '--no-auth') opts.noAuth = true;
    else if (a === '--page-cache-mb') opts.pageCacheMb = Number(next());
    else if (a === '--build-only') opts.buildOnly = true;
    else if (a === '--help' || a === '-h') opts.help = true;
    else throw new Error(`unknown argument ${a}`);
  }
  return opts;
}

async function main() {
  let opts;
  try {
    opts = parseCli(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`neo4j-local: ${e.message}\n`);
    process.exit(2);
  }
  if (opts.help) {
    process.stdout.write(
      'usage: npm run neo4j -- [--port 7687] [--data .neo4j-data] [--password P | --no-auth] [--page-cache-mb 64] [--build-only]\n',
    );
    return;
  }
  try {
    buildLauncher();
  } catch (e) {
    process.stderr.write(`${e.message}\n`);
    process.exit(1);
  }
  if (opts.buildOnly) return;
  mkdirSync(opts.dataDir, { recursive: true });
  const java = process.env.NEO4J_LAUNCHER_JAVA ?? 'java';
  // stdout is inherited: the readiness line goes straight to whoever started us.
  const child = spawn(java, javaArgs({ ...opts, pageCacheMb: opts.pageCacheMb ?? 64, watchStdin: false }), {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(sig, () => child.kill(sig === 'SIGHUP' ? 'SIGTERM' : sig));
  }
  child.on('error', (e) => {
    process.stderr.write(`neo4j-local: cannot start ${java}: ${e.message}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main();
}
