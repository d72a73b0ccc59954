// Shared helpers for the end-to-end tests: run the real CLI as a user would, in a temp directory.
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..');
export const CLI = join(ROOT, 'bin', 'cogen.js');

export function tempDir(prefix = 'cogen-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function cogen(args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}) {
  const res = spawnSync(process.execPath, [CLI, ...args], {
    cwd: opts.cwd ?? ROOT,
    env: { ...process.env, ...opts.env },
    encoding: 'utf8',
    timeout: 240_000,
  });
  return { code: res.status, stdout: res.stdout, stderr: res.stderr };
}
