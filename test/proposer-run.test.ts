// The learned grammar proposer inside a run (docs/proposers.md): its tasks carry its
// identity, its drafts are recorded as proposals with their learnability, its per-step metrics are
// logged, and a run stopped after an uncheckpointed step resumes to exactly the run that was never
// stopped: the same tasks, metrics, proposals and the same preferences in the last checkpoint.
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPreset } from '../src/index.js';
import { exportRun } from '../src/export.js';
import { formatProposerReport, proposerReport } from '../src/cli/proposer.js';
import { RunStore } from '../src/run/testing.js';
import { openSkillGraph, renderSkills, showSkill } from '../graphs/index.js';
import { LEARNED_PROPOSER } from '../proposers/index.js';
import { fullAndResumed, runRows, tempDir } from './helpers.js';

const config = loadPreset('smoke', {
  steps: 8,
  batch: 8,
  checkpointEvery: 3,
  probes: { every: 4, perArm: 2 },
  proposer: { learned: { enabled: true } },
});

function lastProposerState(dir: string): unknown {
  const ckDir = join(dir, 'checkpoints');
  const last = readdirSync(ckDir)
    .filter((d) => !d.endsWith('.tmp'))
    .sort()
    .at(-1)!;
  return (JSON.parse(readFileSync(join(ckDir, last, 'loop.json'), 'utf8')) as { proposer?: unknown }).proposer;
}

describe('a run with the learned proposer', () => {
  it('marks, records and logs its drafts, and resumes exactly after a kill', async () => {
    const runsDir = tempDir('cogen-proposer-');
    const { full, resumed } = await fullAndResumed(config, runsDir, 5);

    const a = runRows(full.dir);
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

    const b = runRows(resumed.dir);
    expect(b).toEqual(a);
    expect(lastProposerState(resumed.dir)).toEqual(lastProposerState(full.dir));
    expect(lastProposerState(full.dir)).toMatchObject({ version: 2, pending: [] });

    // cogen proposer: per arm, its choice points with learned against fixed probabilities.
    const store = RunStore.open(full.dir, { create: false });
    try {
      const report = proposerReport(store);
      expect(report.step).toBe(8);
      expect(report.arms.map((x) => x.arm).sort()).toEqual(['arith/0/deduction', 'logic/0/deduction']);
      for (const arm of report.arms) {
        expect(arm.drafts).toBeGreaterThan(0);
        for (const p of arm.points) {
          expect(p.options.length).toBeGreaterThan(0);
          for (const o of p.options) for (const x of [o.learned, o.fixed]) expect(x).toBeGreaterThanOrEqual(0);
        }
      }
      expect(report.arms.some((x) => x.points.some((p) => p.moved > 0))).toBe(true);
      expect(formatProposerReport(report, 'table')).toMatch(/logic\/0\/deduction .*\n\s+prod:bool\s+moved/);
      expect(JSON.parse(formatProposerReport(report, 'json'))).toEqual(report);
      // ... and through the CLI, with one clear line for a run that does not use it.
      const cli = (...argv: string[]) =>
        spawnSync(
          process.execPath,
          [join(import.meta.dirname, '..', 'bin', 'cogen.js'), ...argv, '--runs-dir', runsDir],
          { encoding: 'utf8' },
        );
      const shown = cli('proposer', '--run', 'full', '--format', 'json');
      expect(shown.status).toBe(0);
      expect(JSON.parse(shown.stdout)).toEqual(report);
      const missing = cli('proposer', '--run', 'nope');
      expect(missing.status).not.toBe(0);
      expect(missing.stderr.trim().split('\n')).toHaveLength(1);

      // cogen export --what proposals: every draft with its prompt (arm + choice trace), program and reward.
      const out = join(runsDir, 'proposals.jsonl');
      expect(await exportRun(store, 'proposals', out, 'jsonl')).toBe(a.proposals.length);
      const recs = readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { prompt: string; output: string; learnability: number | null; outcome: string });
      expect(recs[0]!.prompt).toMatch(/^(arith|logic)\/0\/deduction (prod|leaf|int):\S+=\S+/);
      expect(recs[0]!.output).toMatch(/function f\(/);
      expect(recs.map((r) => r.learnability)).toEqual(a.proposals.map((p) => p.learnability));
      const trl = join(runsDir, 'proposals.trl.jsonl');
      await exportRun(store, 'proposals', trl, 'trl');
      const t0 = JSON.parse(readFileSync(trl, 'utf8').split('\n')[0]!) as {
        prompt: { role: string }[];
        completion: { role: string; content: string }[];
        reward: number;
        label: boolean;
      };
      expect(t0.prompt[0]!.role).toBe('user');
      expect(t0.completion[0]!.content).toBe(recs[0]!.output);
      expect(t0.label).toBe(t0.reward > 0);
      expect(await exportRun(store, 'proposals', join(runsDir, 'proposals.parquet'), 'parquet')).toBe(
        a.proposals.length,
      );

      // The skill graph knows which proposer wrote the tasks that exercise (and so teach) a skill.
      const graph = await openSkillGraph({ kind: 'embedded', db: store.db });
      await graph.init();
      const detail = await showSkill(graph, 'logic.and', { runId: 'full', exemplars: 50 });
      expect(detail.exemplars.length).toBeGreaterThan(0);
      const byId = new Map(a.tasks.map((t) => [(t as unknown as { id: string }).id, t.proposer]));
      for (const t of detail.exemplars) expect(t.proposer).toBe(byId.get(t.id));
      expect(detail.exemplars.some((t) => t.proposer === LEARNED_PROPOSER)).toBe(true);
      const skillsShown = await renderSkills(graph, {
        view: 'show',
        skill: 'logic.and',
        runId: 'full',
        format: 'table',
      });
      expect(skillsShown).toMatch(/proposer[\s\S]*learned:grammar@2/);
    } finally {
      store.close();
    }
  }, 600_000);
});
