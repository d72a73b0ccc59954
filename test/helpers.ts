// Shared helpers for the end-to-end tests: run the real CLI as a user would, in a temp directory, and read a run store back.
import Database from 'better-sqlite3';
import { expect } from 'vitest';
import { RunStore, startRun, type RunConfig, type RunSummary } from '../src/run/index.js';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '..');
export const CLI = join(ROOT, 'bin', 'cogen.js');

/** A run store's tasks, metrics (without wall time) and proposals, for comparing a run with its resumed twin. */
export function runRows(dir: string) {
  const db = new Database(join(dir, 'run.db'), { readonly: true });
  const out = {
    tasks: db.prepare('SELECT id, step, attempts, solved, proposer FROM tasks ORDER BY step, id').all() as {
      proposer: string;
    }[],
    metrics: (db.prepare('SELECT data FROM metrics ORDER BY step').all() as { data: string }[]).map((r) => {
      const { ms: _ms, ...rest } = JSON.parse(r.data) as Record<string, number>;
      return rest;
    }),
    proposals: db
      .prepare(
        'SELECT step, family, level, type, proposer, prompt, raw, outcome, task_id, learnability FROM proposals ORDER BY id',
      )
      .all() as { proposer: string; outcome: string; learnability: number | null }[],
  };
  db.close();
  return out;
}

/** A run's last finished checkpoint directory. */
export function lastCheckpoint(dir: string): string {
  const ck = join(dir, 'checkpoints');
  return join(
    ck,
    readdirSync(ck)
      .filter((d) => !d.endsWith('.tmp'))
      .sort()
      .at(-1)!,
  );
}

/**
 * A run made whole ('full'), and the same run stopped after `stopAfter` steps, an uncheckpointed one
 * among them, then resumed ('cut'): a resumed run must equal the run that was never stopped.
 */
export async function fullAndResumed(
  config: RunConfig,
  runsDir: string,
  stopAfter: number,
): Promise<{ full: RunSummary; resumed: RunSummary }> {
  const full = await startRun(config, { runsDir, preset: 'smoke', runId: 'full' });
  const cut = await startRun(config, { runsDir, preset: 'smoke', runId: 'cut', stopAfter });
  expect(cut.steps).toBe(stopAfter);
  const resumed = await startRun(config, { runsDir, preset: 'smoke', runId: 'cut', resume: true });
  expect(resumed.steps).toBe(config.steps);
  return { full, resumed };
}

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

/** A finished run's mastery events, in order, as its store reads them (from the graph events it recorded). */
export function skillEventsOf(dir: string) {
  const store = RunStore.open(dir, { create: false });
  try {
    return store.skillEvents();
  } finally {
    store.close();
  }
}
