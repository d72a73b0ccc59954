// Self-play inside a run (experimental; docs/proposers.md): the fresh tasks carry
// `self-play@<version>`, the drafts are proposals rows, the proposer role's metrics are logged, and
// a run stopped after an uncheckpointed step resumes to exactly the run that was never stopped
// (tasks, metrics, proposals, checkpointed weights).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPreset, startRun } from '../src/index.js';
import { SELF_PLAY_PROPOSER } from '../proposers/index.js';
import { proposerReport } from '../src/cli/proposer.js';
import { RunStore } from '../src/run/testing.js';
import { fullAndResumed, lastCheckpoint, runRows, tempDir } from './helpers.js';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'llm-proposals.json');

const config = loadPreset('smoke', {
  steps: 6,
  batch: 6,
  checkpointEvery: 2,
  maxLevel: 1,
  probes: { every: 3, perArm: 2 },
  solver: { backend: 'wasm', workers: 1 },
  proposer: { selfPlay: { enabled: true, maxChoices: 24 } },
});

describe('a self-play run', () => {
  it('marks, records and logs its drafts, and resumes exactly after a kill', async () => {
    const runsDir = tempDir('cogen-self-play-');
    const { full, resumed } = await fullAndResumed(config, runsDir, 3);

    const a = runRows(full.dir);
    const fresh = a.tasks.filter((t) => t.proposer === SELF_PLAY_PROPOSER);
    expect(fresh.length).toBeGreaterThan(a.tasks.length / 2);
    expect(a.proposals.every((p) => p.proposer === SELF_PLAY_PROPOSER)).toBe(true);
    expect(a.proposals.filter((p) => p.outcome === 'accepted').every((p) => p.learnability !== null)).toBe(true);
    for (const m of a.metrics) {
      expect(m['selfPlay.drafts']).toBeGreaterThan(0);
      expect(m['selfPlay.validity']).toBeGreaterThan(0);
    }
    expect(a.metrics.some((m) => (m['selfPlay.tokens'] ?? 0) > 0)).toBe(true);

    expect(runRows(resumed.dir)).toEqual(a);
    const [x, y] = [lastCheckpoint(full.dir), lastCheckpoint(resumed.dir)];
    expect(readFileSync(join(y, 'model.safetensors')).equals(readFileSync(join(x, 'model.safetensors')))).toBe(true);
    const loop = JSON.parse(readFileSync(join(x, 'loop.json'), 'utf8')) as { selfPlay?: unknown; proposer?: unknown };
    expect(JSON.parse(readFileSync(join(y, 'loop.json'), 'utf8'))).toEqual(loop);
    expect(loop.selfPlay).toEqual({ version: 1, pending: [] });
    // cogen proposer is about the learned grammar proposer: a self-play run has none (one clear line)
    const store = RunStore.open(full.dir, { create: false });
    try {
      expect(() => proposerReport(store)).toThrow(/does not use the learned proposer/);
    } finally {
      store.close();
    }
  }, 300_000);

  it('needs the built-in solver, and cannot run beside the learned grammar proposer', async () => {
    expect(() =>
      loadPreset('smoke', { proposer: { selfPlay: { enabled: true }, learned: { enabled: true } } }),
    ).toThrow(/selfPlay\.enabled.*enable one|enable one/);
    const llm = loadPreset('smoke', {
      steps: 1,
      agents: { solver: { enabled: true, provider: 'scripted', scriptPath: FIXTURE, model: 'm' } },
      proposer: { selfPlay: { enabled: true } },
    });
    await expect(startRun(llm, { runsDir: tempDir('cogen-self-play-llm-'), preset: 'smoke' })).rejects.toThrow(
      /needs the built-in solver/,
    );
  });
});
