// The frontier proposer inside a run (curricula/evolve.ts, docs/proposers.md): its children carry
// their parent and operator, are labelled by their own program, stay within the run's levels and
// never equal a held-out probe; every draft is a proposals row with its learnability; and a run
// stopped after an uncheckpointed step resumes to exactly the run that was never stopped.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { argumentLists, type CodeTask } from '../core/task.js';
import { FRONTIER_OPS, FRONTIER_PROPOSER, labelProgram } from '../generators/index.js';
import { loadPreset, startRun } from '../src/index.js';
import { RunStore, storedRunProbeIds } from '../src/run/testing.js';
import { fullAndResumed, lastCheckpoint, runRows, tempDir } from './helpers.js';

const config = loadPreset('smoke', {
  steps: 8,
  batch: 16,
  maxLevel: 1,
  checkpointEvery: 3,
  probes: { every: 4, perArm: 2 },
  curriculum: { controller: 'level-frontier', evolve: { share: 0.5 } },
});

const lastControllerState = (dir: string): unknown =>
  (JSON.parse(readFileSync(join(lastCheckpoint(dir), 'loop.json'), 'utf8')) as { controller: unknown }).controller;

describe('a run with the frontier proposer', () => {
  it('makes labelled children of band tasks, records every draft, and resumes exactly after a kill', async () => {
    const runsDir = tempDir('cogen-evolve-');
    const { full, resumed } = await fullAndResumed(config, runsDir, 5);

    const a = runRows(full.dir);
    expect(runRows(resumed.dir)).toEqual(a);
    expect(lastControllerState(resumed.dir)).toEqual(lastControllerState(full.dir));

    const store = RunStore.open(full.dir, { create: false });
    try {
      const probes = await storedRunProbeIds(store, 'full');
      const children = store
        .tasks()
        .map((r) => r.task as CodeTask)
        .filter((t) => t.proposer === FRONTIER_PROPOSER);
      expect(children.length).toBeGreaterThan(5);
      for (const c of children) {
        expect(FRONTIER_OPS).toContain(c.parent!.op);
        const label = labelProgram(c.family, c.program, argumentLists(c));
        expect([c.level, c.skills]).toEqual([label.level, label.skills]);
        expect(c.level).toBeLessThanOrEqual(1);
        expect(probes.has(c.id)).toBe(false);
      }
      const drafts = a.proposals.filter((p) => p.proposer === FRONTIER_PROPOSER);
      expect(drafts.filter((p) => p.outcome === 'accepted')).toHaveLength(children.length);
      expect(drafts.filter((p) => p.outcome === 'accepted').every((p) => p.learnability !== null)).toBe(true);
    } finally {
      store.close();
    }
  }, 600_000);

  it('hands a share of its picks to an LLM proposer, asked for a variant of the parent with its solve rate', async () => {
    const runsDir = tempDir('cogen-evolve-llm-');
    // Distinct valid answers, so that the variants are not refused as duplicates of each other.
    const script = join(runsDir, 'script.json');
    const answer = (k: number) => ({
      text:
        '```json\n' +
        JSON.stringify({ program: `function f(a) { return a * ${k} + ${k + 1}; }`, input: [k % 9] }) +
        '\n```',
    });
    writeFileSync(script, JSON.stringify({ proposer: Array.from({ length: 400 }, (_, k) => answer(k + 2)) }));
    const withLlm = loadPreset('smoke', {
      ...config,
      steps: 4,
      agents: { proposer: { share: 0.5, provider: 'scripted', scriptPath: script } },
    });
    const run = await startRun(withLlm, { runsDir, preset: 'smoke', runId: 'llm', log: () => {} });
    const rows = runRows(run.dir).proposals as unknown as { proposer: string; prompt: string; outcome: string }[];
    const asked = rows.filter((p) => p.proposer.startsWith('llm:') && /variant of Reference 1/.test(p.prompt));
    expect(asked.length).toBeGreaterThan(0);
    for (const p of asked)
      expect(p.prompt).toMatch(/### Reference 1 .*; the learner solves it in \d+% of its attempts/);
    const store = RunStore.open(run.dir, { create: false });
    try {
      const variants = store.tasks().filter((r) => /^llm-(harder|easier|either)$/.test(r.task.parent?.op ?? ''));
      expect(variants.length).toBe(asked.filter((p) => p.outcome === 'accepted').length);
      expect(variants.length).toBeGreaterThan(0);
    } finally {
      store.close();
    }
  }, 600_000);
});
