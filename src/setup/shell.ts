// The child processes and files `cogen setup` works with: a command run to completion (its output
// kept, not streamed), the last line of what it said, a symlink put in place, a size on disk.
import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { lstatSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

export function run(
  cmd: string,
  args: string[],
  opts: SpawnSyncOptions = {},
): { ok: boolean; out: string; stdout: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  return {
    ok: r.status === 0 && !r.error,
    out: r.error ? String(r.error.message) : out,
    stdout: String(r.stdout ?? ''),
  };
}

export function lastLine(s: string): string {
  return (
    s
      .trim()
      .split('\n')
      .filter((l) => l.trim())
      .pop() ?? ''
  );
}

export const mb = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MB`;

export function duBytes(path: string): number {
  const st = lstatSync(path);
  if (st.isSymbolicLink()) return 0;
  if (!st.isDirectory()) return st.size;
  return readdirSync(path).reduce((a, n) => a + duBytes(join(path, n)), 0);
}

export function link(dir: string, name: string, target: string): void {
  const p = join(dir, name);
  try {
    lstatSync(p);
    rmSync(p);
  } catch {
    /* absent */
  }
  symlinkSync(target, p);
}
