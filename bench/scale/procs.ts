// The processes of the scale-out benches (docs/scale-out.md): `cogen serve` replicas and `cogen
// worker`s as real child processes on fixed loopback ports (a restarted one answers where it did),
// with their health, their Prometheus counters and their CPU time read from outside.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..', '..');
const CLI = join(ROOT, 'bin', 'cogen.js');
const TICKS = 100; // USER_HZ on Linux

export interface Proc {
  name: string;
  kind: 'replica' | 'worker';
  url: string;
  child: ChildProcess | null;
  /** Lines it wrote on stderr, each with the time it arrived (ms, performance.now()) and the start it came from (0, 1, …). */
  lines: { t: number; line: string; gen: number }[];
  /** How many times it was started, less one: the start the current process is. */
  gen: number;
  /** Every exit so far: the start it ended, its code or signal, and when (ms, performance.now()). */
  exits: { gen: number; code: number | null; signal: NodeJS.Signals | null; t: number }[];
  /** Resolves once the current process exited and its stderr was read to the end. */
  closed(): Promise<void>;
  start(): void;
  /** ms from start() until /health answered 200. */
  healthy(timeoutMs?: number): Promise<number>;
  kill9(): void;
  stop(): Promise<void>;
}

/**
 * A `cogen` process on `port`. `host`: the address it is reached at (and binds, when not loopback);
 * `wrap`: a command line it runs under, such as `ip netns exec <ns>` (which execs, so signals reach it).
 */
export function proc(
  name: string,
  kind: Proc['kind'],
  port: number,
  args: string[],
  env: Record<string, string> = {},
  where: { host?: string; wrap?: string[] } = {},
): Proc {
  let startedAt = 0;
  const host = where.host ?? '127.0.0.1';
  const argv = [process.execPath, CLI, ...args, '--port', String(port), ...(where.host ? ['--host', host] : [])];
  const command = [...(where.wrap ?? []), ...argv];
  const p: Proc = {
    name,
    kind,
    url: `http://${host}:${port}`,
    child: null,
    lines: [],
    gen: -1,
    exits: [],
    start() {
      startedAt = performance.now();
      const gen = ++p.gen;
      const child = spawn(command[0]!, command.slice(1), {
        cwd: ROOT,
        env: { ...process.env, ...env },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      child.once('exit', (code, signal) => p.exits.push({ gen, code, signal, t: performance.now() }));
      let buf = '';
      child.stderr!.on('data', (d: Buffer) => {
        buf += d.toString();
        const parts = buf.split('\n');
        buf = parts.pop()!;
        for (const line of parts) p.lines.push({ t: performance.now(), line, gen });
      });
      p.child = child;
    },
    async healthy(timeoutMs = 300_000) {
      const end = performance.now() + timeoutMs;
      while (performance.now() < end) {
        if (p.child && p.child.exitCode !== null)
          throw new Error(
            `${name} exited (${p.child.exitCode}): ${p.lines
              .slice(-3)
              .map((l) => l.line)
              .join(' | ')}`,
          );
        try {
          if ((await fetch(`${p.url}/health`, { signal: AbortSignal.timeout(1000) })).status === 200)
            return performance.now() - startedAt;
        } catch {
          // not listening yet
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`${name} was not healthy after ${timeoutMs / 1000} s`);
    },
    kill9() {
      p.child?.kill('SIGKILL');
    },
    closed: () =>
      new Promise<void>((r) => {
        const c = p.child;
        if (!c || ((c.exitCode !== null || c.signalCode !== null) && c.stderr!.readableEnded)) return r();
        c.once('close', () => r());
      }),
    stop: () =>
      new Promise<void>((done) => {
        const c = p.child;
        if (!c || c.exitCode !== null || c.signalCode !== null) return done();
        const t = setTimeout(() => c.kill('SIGKILL'), 20_000);
        c.once('exit', () => (clearTimeout(t), done()));
        c.kill('SIGTERM');
      }),
  };
  return p;
}

/** CPU seconds (user + system) a process has used so far: all its threads, or with `mainOnly` its main thread alone (the thread whose id is the pid). */
export function cpuSeconds(pid: number | undefined, mainOnly = false): number {
  if (!pid) return 0;
  try {
    const stat = readFileSync(mainOnly ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return 0;
  }
}

/** A counter or gauge from a /metrics page (0 when absent). */
export async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

/** The machine's CPU seconds so far: busy (all processes) and idle, over every core (/proc/stat). */
export function machineCpu(): { busy: number; idle: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const idle = fields[3]! + (fields[4] ?? 0);
  const total = fields.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: (total - idle) / TICKS, idle: idle / TICKS };
}
