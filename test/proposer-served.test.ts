// In a served run the learned grammar proposer learns from the trainer's solve rates: the score
// requests are its rewards, as the built-in solver's groups are in an autonomous run, and its state
// (drafts still waiting for their scores included) is committed with every request and resumed.
// The frontier proposer too makes its children from the trainer's solve rates.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPreset } from '../src/run/config.js';
import { openServedRun } from '../src/server/index.js';
import { RunStore } from '../src/run/testing.js';
import { referenceAnswer, type Task } from '../core/task.js';
import { FRONTIER_PROPOSER } from '../generators/index.js';
import { LEARNED_PROPOSER, type LearnedState } from '../proposers/index.js';
import { tempDir } from './helpers.js';

const config = loadPreset('smoke', { probes: { every: 50 }, proposer: { learned: { enabled: true } } });

describe('a served run with the learned proposer', () => {
  it('trains on the score requests and resumes with its state', async () => {
    const runsDir = tempDir('cogen-proposer-serve-');
    const opts = { runsDir, preset: 'smoke', runId: 'served' };
    const run = await openServedRun(config, opts);
    const read = () => RunStore.open(join(runsDir, 'served'), { create: false });
    let learnedTasks = 0;
    try {
      for (let round = 0; round < 3; round++) {
        const { tasks } = await run.sample(8);
        const store = read();
        const items = tasks.flatMap((t) => {
          const task = store.task(t.id)!;
          if (task.proposer === LEARNED_PROPOSER) learnedTasks++;
          // The trainer's model solves each task 2 times in 4: every group is in the learnable band.
          return [0, 1, 2, 3].map((k) => ({ task_id: t.id, completion: k < 2 ? referenceAnswer(task) : '"not it"' }));
        });
        store.close();
        await run.score(items);
      }
    } finally {
      await run.close();
    }
    expect(learnedTasks).toBeGreaterThan(0);
    const store = read();
    const saved = JSON.parse(store.getMeta('served')!) as { proposer: LearnedState; step: number };
    const metrics = store.db.prepare('SELECT data FROM metrics ORDER BY step').all() as { data: string }[];
    store.close();
    const arms = Object.values(saved.proposer.arms);
    expect(arms.reduce((a, x) => a + x.drafts, 0)).toBeGreaterThanOrEqual(learnedTasks);
    expect(arms.some((x) => x.baseline !== null && x.baseline > 0.5)).toBe(true);
    const m = metrics.map((r) => JSON.parse(r.data) as Record<string, number>);
    expect(m.every((x) => x['proposer.drafts']! > 0 && x['proposer.learnable'] === 1)).toBe(true);

    const again = await openServedRun(config, { ...opts, resume: true });
    try {
      const s2 = read();
      expect((JSON.parse(s2.getMeta('served')!) as { proposer: LearnedState }).proposer).toEqual(saved.proposer);
      s2.close();
      await again.sample(2);
    } finally {
      await again.close();
    }
  }, 300_000);

  it('runs the frontier proposer on the trainer’s solve rates, and resumes with its band and values', async () => {
    const runsDir = tempDir('cogen-frontier-serve-');
    const frontier = loadPreset('smoke', {
      probes: { every: 50 },
      maxLevel: 1,
      curriculum: { controller: 'level-frontier', evolve: { share: 0.5 } },
    });
    const opts = { runsDir, preset: 'smoke', runId: 'frontier' };
    const run = await openServedRun(frontier, opts);
    const read = () => RunStore.open(join(runsDir, 'frontier'), { create: false });
    const children: Task[] = [];
    try {
      for (let round = 0; round < 4; round++) {
        const { tasks } = await run.sample(16);
        const store = read();
        const items = tasks.flatMap((t) => {
          const task = store.task(t.id)!;
          if (task.proposer === FRONTIER_PROPOSER) children.push(task);
          // The trainer's model solves each task 2 times in 4: every scored task is in the band.
          return [0, 1, 2, 3].map((k) => ({ task_id: t.id, completion: k < 2 ? referenceAnswer(task) : '"not it"' }));
        });
        store.close();
        await run.score(items);
      }
    } finally {
      await run.close();
    }
    expect(children.length).toBeGreaterThan(0);
    // A served run makes no held-out set above its parent's level: children stay at it or below.
    const store = read();
    for (const c of children) expect(c.level).toBeLessThanOrEqual(store.task(c.parent!.id)!.level);
    const saved = (JSON.parse(store.getMeta('served')!) as { controller: unknown }).controller;
    store.close();
    expect(JSON.stringify(saved)).toMatch(/"name":"evolve".*"band":\[\{/);
    const again = await openServedRun(frontier, { ...opts, resume: true });
    try {
      const s2 = read();
      expect((JSON.parse(s2.getMeta('served')!) as { controller: unknown }).controller).toEqual(saved);
      s2.close();
    } finally {
      await again.close();
    }
  }, 300_000);

  it('refuses the self-play proposer with one line, before it writes anything', async () => {
    const runsDir = tempDir('cogen-proposer-serve-sp-');
    const sp = loadPreset('smoke', { proposer: { selfPlay: { enabled: true } } });
    await expect(openServedRun(sp, { runsDir, preset: 'smoke', runId: 'sp' })).rejects.toThrow(
      /^cogen serve takes no self-play proposer: .*\(use --proposer learned, or none\)$/,
    );
    expect(existsSync(join(runsDir, 'sp'))).toBe(false);
  });
});
