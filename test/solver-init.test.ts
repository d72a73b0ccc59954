// solver.init: a run whose solver starts from another run's checkpoint. It differs from a fresh run
// of its seed, resumes exactly like any run, and a checkpoint that is not there is one line of error
// with no run left behind.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPreset, startRun } from '../src/index.js';
import { cogen, lastCheckpoint, runRows, tempDir } from './helpers.js';

const base = { steps: 4, batch: 6, checkpointEvery: 2, probes: { every: 2, perArm: 2 } };

describe('solver.init', () => {
  it('starts from the checkpoint, differs from a fresh run, and resumes exactly', async () => {
    const runsDir = tempDir('cogen-init-');
    const first = await startRun(loadPreset('smoke', { ...base, seed: 11 }), {
      runsDir,
      preset: 'smoke',
      runId: 'first',
    });
    const init = lastCheckpoint(first.dir);
    const lines: string[] = [];
    const cfg = loadPreset('smoke', { ...base, seed: 12, solver: { init } });
    const full = await startRun(cfg, { runsDir, preset: 'smoke', runId: 'full', log: (l) => lines.push(l) });
    expect(lines).toContain(`solver: starts from the weights of ${init} (solver.init)`);
    const fresh = await startRun(loadPreset('smoke', { ...base, seed: 12 }), {
      runsDir,
      preset: 'smoke',
      runId: 'fresh',
    });
    // same seed, same tasks at step 1; the answers (and so the metrics) come from other weights
    const step1 = (dir: string) =>
      runRows(dir).tasks.flatMap((t) => {
        const r = t as unknown as { id: string; step: number };
        return r.step === 1 ? [r.id] : [];
      });
    expect(step1(full.dir)).toEqual(step1(fresh.dir));
    expect(runRows(full.dir).metrics[0]).not.toEqual(runRows(fresh.dir).metrics[0]);
    await startRun(cfg, { runsDir, preset: 'smoke', runId: 'cut', stopAfter: 3 });
    const resumed = await startRun(cfg, { runsDir, preset: 'smoke', runId: 'cut', resume: true });
    expect(resumed.steps).toBe(4);
    expect(runRows(resumed.dir)).toEqual(runRows(full.dir));
  }, 600_000);

  it('a checkpoint that is not there: one line, a non-zero exit, no run left', () => {
    const dir = tempDir('cogen-init-cli-');
    const preset = join(dir, 'p.yaml');
    writeFileSync(
      preset,
      'families: [arith]\nmaxLevel: 0\nsteps: 2\nbatch: 4\nsolver:\n  backend: cpu\n  init: /nowhere/step-000002\n',
    );
    const r = cogen(['run', '--preset', preset, '--runs-dir', join(dir, 'runs'), '--run-id', 'x']);
    expect(r.code).not.toBe(0);
    const errLines = r.stderr
      .trim()
      .split('\n')
      .filter((l) => l.includes('solver.init'));
    expect(errLines).toHaveLength(1);
    expect(errLines[0]).toMatch(/solver\.init: cannot start from \/nowhere\/step-000002: ENOENT/);
    expect(existsSync(join(dir, 'runs', 'x'))).toBe(false);
  }, 120_000);
});
