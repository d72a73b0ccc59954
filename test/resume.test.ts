// A run stopped after a step that was never checkpointed (as a killed run would be) resumes from its
// last checkpoint and ends exactly where an uninterrupted run ends: the same tasks, the same metrics,
// the same weights, and no duplicated rows.
import Database from 'better-sqlite3';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPreset, startRun } from '../src/index.js';
import { skillEventsOf, tempDir } from './helpers.js';

const config = loadPreset('smoke', { steps: 8, batch: 8, checkpointEvery: 3, probes: { every: 4, perArm: 2 } });

function rows(dir: string) {
  const db = new Database(join(dir, 'run.db'), { readonly: true });
  const out = {
    tasks: db.prepare('SELECT id, step, attempts, solved FROM tasks ORDER BY step, id').all(),
    episodes: (db.prepare('SELECT COUNT(*) n FROM episodes').get() as { n: number }).n,
    metrics: (db.prepare('SELECT data FROM metrics ORDER BY step').all() as { data: string }[]).map((r) => {
      const { ms: _ms, ...rest } = JSON.parse(r.data);
      return rest;
    }),
    events: skillEventsOf(dir).map(({ step, skillId, event }) => ({ step, skillId, event })),
  };
  db.close();
  return out;
}

function lastWeights(dir: string): Buffer {
  const ckDir = join(dir, 'checkpoints');
  const last = readdirSync(ckDir)
    .filter((d) => !d.endsWith('.tmp'))
    .sort()
    .at(-1)!;
  const file = readdirSync(join(ckDir, last)).find((f) => f.endsWith('.safetensors'))!;
  return readFileSync(join(ckDir, last, file));
}

describe('resume', () => {
  it('stop after an uncheckpointed step, resume, and match the uninterrupted run', async () => {
    const runsDir = tempDir('cogen-resume-');
    const full = await startRun(config, { runsDir, preset: 'smoke', runId: 'full' });
    expect(full.steps).toBe(8);

    const cut = await startRun(config, { runsDir, preset: 'smoke', runId: 'cut', stopAfter: 5 });
    expect(cut.steps).toBe(5);
    const resumed = await startRun(config, { runsDir, preset: 'smoke', runId: 'cut', resume: true });
    expect(resumed.steps).toBe(8);

    const a = rows(full.dir);
    const b = rows(resumed.dir);
    expect(b.tasks).toEqual(a.tasks);
    expect(b.episodes).toBe(a.episodes);
    expect(b.metrics).toEqual(a.metrics);
    expect(b.events).toEqual(a.events);
    expect(lastWeights(resumed.dir).equals(lastWeights(full.dir))).toBe(true);
  }, 600_000);

  it('refuses, in one line, to resume a run whose stored probe sets differ from those its config draws now', async () => {
    const runsDir = tempDir('cogen-resume-probes-');
    const cut = await startRun(config, { runsDir, preset: 'smoke', runId: 'cut', stopAfter: 2 });
    // as a run started by a version whose probe builder chose other probes would have stored
    const db = new Database(join(cut.dir, 'run.db'));
    const plan = JSON.parse(
      (db.prepare("SELECT value FROM meta WHERE key = 'probePlan'").get() as { value: string }).value,
    );
    const skill = Object.keys(plan.skills)[0]!;
    plan.skills[skill].baseline += 0.1;
    db.prepare("UPDATE meta SET value = ? WHERE key = 'probePlan'").run(JSON.stringify(plan));
    const before = rows(cut.dir);
    db.close();
    await expect(startRun(config, { runsDir, preset: 'smoke', runId: 'cut', resume: true })).rejects.toThrow(
      /^run "cut" was started by a cogen that drew other held-out probes from its config/,
    );
    expect(rows(cut.dir)).toEqual(before); // nothing truncated or added
    // a run started before every level had a held-out set stored none: refused, saying so
    const old = new Database(join(cut.dir, 'run.db'));
    delete plan.levels;
    plan.skills[skill].baseline -= 0.1;
    old.prepare("UPDATE meta SET value = ? WHERE key = 'probePlan'").run(JSON.stringify(plan));
    old.close();
    await expect(startRun(config, { runsDir, preset: 'smoke', runId: 'cut', resume: true })).rejects.toThrow(
      /^run "cut" was started by a cogen that drew other held-out probes from its config \(it was started before every level had a held-out set\)/,
    );
    expect(rows(cut.dir)).toEqual(before);
  }, 600_000);

  it('a level-frontier run above level 4 (open maxLevel, evaluation sets made on the way) resumes exactly', async () => {
    // promoteAt 0 and one prompt: h rises at every task scored at h, so the run passes level 4 in a few steps.
    const open = loadPreset('smoke', {
      steps: 7,
      batch: 4,
      group: 4,
      families: ['arith'],
      maxLevel: null,
      checkpointEvery: 5,
      probes: { every: 3, perArm: 1 },
      curriculum: { controller: 'level-frontier', levelFrontier: { promoteAt: 0, minPrompts: 1, start: 3 } },
    });
    const runsDir = tempDir('cogen-resume-open-');
    const full = await startRun(open, { runsDir, preset: 'smoke', runId: 'full' });
    await startRun(open, { runsDir, preset: 'smoke', runId: 'cut', stopAfter: 6 });
    const resumed = await startRun(open, { runsDir, preset: 'smoke', runId: 'cut', resume: true });
    const a = rows(full.dir);
    const b = rows(resumed.dir);
    // The checkpoint (step 5) comes after the first tasks above level 4: the resumed run makes their evaluation sets again.
    const db = new Database(join(full.dir, 'run.db'), { readonly: true });
    expect(
      (db.prepare('SELECT COUNT(*) n FROM tasks WHERE step <= 5 AND level > 4').get() as { n: number }).n,
    ).toBeGreaterThan(0);
    db.close();
    // the levels above the table have their sets (src/run/level-evals.ts) beside the tabled ones, and the family its level passed
    const levels = Object.keys(a.metrics.at(-1)!).filter((k) => k.startsWith('level.arith/'));
    expect(levels.filter((k) => Number(k.split('/')[1]) > 4).length).toBeGreaterThan(0);
    expect(levels).toContain('level.arith/0');
    expect(a.metrics.at(-1)!['passed.arith']).toBe(-1);
    expect(b.tasks).toEqual(a.tasks);
    expect(b.metrics).toEqual(a.metrics);
    expect(lastWeights(resumed.dir).equals(lastWeights(full.dir))).toBe(true);
  }, 600_000);
});
