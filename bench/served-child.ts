// What the benches that drive a served run from outside share (served-learn.ts, served-restart.ts):
// a `cogen serve` child on a given or free loopback port, healthy before it is handed back and
// stopped with a signal; the cogen CLI; another run's tasks as warm-start data.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from '../test/setup/local-services.js';

const ROOT = join(import.meta.dirname, '..');

export interface ServeChild {
  url: string;
  port: number;
  child: ChildProcess;
}

/** `cogen serve ARGV --port PORT` (a free port unless given), once /health answers. */
export async function startServe(argv: string[], port?: number): Promise<ServeChild> {
  const at = port ?? (await freePort());
  const child = spawn(process.execPath, [join(ROOT, 'bin/cogen.js'), 'serve', ...argv, '--port', String(at)], {
    cwd: ROOT,
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${at}`;
  for (let i = 0; i < 1200; i++) {
    if (child.exitCode !== null) throw new Error(`cogen serve exited with ${child.exitCode}`);
    if (
      await fetch(url + '/health').then(
        (r) => r.ok,
        () => false,
      )
    )
      return { url, port: at, child };
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error('cogen serve was not healthy after 120 s');
}

/** Resolves once the child has exited, after sending it `signal` (if it still runs). */
export const stopChild = (child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> =>
  new Promise((ok) => {
    if (child.exitCode !== null || child.signalCode !== null) return ok();
    child.once('exit', () => ok());
    child.kill(signal);
  });

/** `cogen ARGV`, synchronously; its stdout, or an error with the last line it wrote to stderr. */
export function cogen(argv: string[]): string {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/cogen.js'), ...argv], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  if (r.status !== 0)
    throw new Error(`cogen ${argv.join(' ')}: exit ${r.status}: ${r.stderr.trim().split('\n').at(-1)}`);
  return r.stdout;
}

/**
 * Warm-start data for a served run: another run (`source-SEED`, `steps` steps of `preset`), its
 * tasks exported in the compact view with the served run's probes left out by id, to `out`.
 */
export function warmStartData(o: {
  runsDir: string;
  preset: string;
  sourceSeed: number;
  steps: string;
  served: string;
  out: string;
}): string {
  const source = `source-${o.sourceSeed}`;
  const run = ['run', '--preset', o.preset, '--seed', String(o.sourceSeed), '--steps', o.steps];
  cogen([...run, '--runs-dir', o.runsDir, '--run-id', source]);
  const exclude = ['--view', 'compact', '--exclude-probes', o.served, '--out', o.out];
  return cogen(['export', '--run', source, '--runs-dir', o.runsDir, ...exclude]);
}
