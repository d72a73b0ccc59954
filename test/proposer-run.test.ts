// The learned grammar proposer inside a run (issue 24): its tasks carry its identity, its drafts are
// recorded as proposals with their learnability, its per-step metrics are logged, and a run stopped
// after an uncheckpointed step resumes to exactly the run that was never stopped: the same tasks,
// metrics, proposals and the same preferences in the last checkpoint.
import Database from 'better-sqlite3';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPreset, startRun } from '../src/index.js';
import { LEARNED_PROPOSER } from '../proposers/index.js';
import { tempDir } from './helpers.js';

const config = loadPreset('smoke', { steps: 8, batch: 8, checkpointEvery: 3, probes: { every: 4, perArm: 2 }, proposer: { learned: { enabled: true } } });

function rows(dir: string) {
  const db = new Database(join(dir, 'run.db'), { readonly: true });
  const out = {
    tasks: db.prepare('SELECT id, step, attempts, solved, proposer FROM tasks ORDER BY step, id').all() as { proposer: string }[],
    metrics: (db.prepare('SELECT data FROM metrics ORDER BY step').all() as { data: string }[]).map((r) => {
      const { ms: _ms, ...rest } = JSON.parse(r.data) as Record<string, number>;
      return rest;
    }),
    proposals: db.prepare('SELECT step, family, level, type, proposer, prompt, raw, outcome, task_id, learnability FROM proposals ORDER BY id').all() as { proposer: string; outcome: string; learnability: number | null }[],
  };
  db.close();
  return out;
}

function lastProposerState(dir: string): unknown {
  const ckDir = join(dir, 'checkpoints');
  const last = readdirSync(ckDir).filter((d) => !d.endsWith('.tmp')).sort().at(-1)!;
  return (JSON.parse(readFileSync(join(ckDir, last, 'loop.json'), 'utf8')) as { proposer?: unknown }).proposer;
}

describe('a run with the learned proposer', () => {
  it('marks, records and logs its drafts, and resumes exactly after a kill', async () => {
    const runsDir = tempDir('cogen-proposer-');
    const full = await startRun(config, { runsDir, preset: 'smoke', runId: 'full' });
    const cut = await startRun(config, { runsDir, preset: 'smoke', runId: 'cut', stopAfter: 5 });
    expect(cut.steps).toBe(5);
    const resumed = await startRun(config, { runsDir, preset: 'smoke', runId: 'cut', resume: true });
    expect(resumed.steps).toBe(8);

    const a = rows(full.dir);
    const fresh = a.tasks.filter((t) => t.proposer === LEARNED_PROPOSER);
    expect(fresh.length).toBeGreaterThan(a.tasks.length / 2);
    expect(a.proposals.length).toBeGreaterThanOrEqual(fresh.length);
    expect(a.proposals.every((p) => p.proposer === LEARNED_PROPOSER)).toBe(true);
    expect(a.proposals.filter((p) => p.outcome === 'accepted').every((p) => p.learnability !== null)).toBe(true);
    for (const m of a.metrics) {
      expect(m['proposer.drafts']).toBeGreaterThan(0);
      expect(m['proposer.validity']).toBeGreaterThan(0);
      expect(m['proposer.reward']).toBeGreaterThanOrEqual(0);
    }

    const b = rows(resumed.dir);
    expect(b).toEqual(a);
    expect(lastProposerState(resumed.dir)).toEqual(lastProposerState(full.dir));
    expect(lastProposerState(full.dir)).toMatchObject({ version: 1, pending: [] });
  }, 600_000);
});
