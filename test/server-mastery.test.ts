// A served run reports mastery as the autonomous run's summary does (src/run/probes.ts,
// curricula/mastery.ts): each mastered skill beside its trivial baseline, the skills ever learned,
// and what was forgotten. A real server on a loopback port; the right answers to the probes come
// from drawing the same probe set here (the same config and stream), not from the server's
// responses.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPreset } from '../src/run/config.js';
import { startServer, type RunningServer } from '../src/server/index.js';
import { buildProbes } from '../src/run/testing.js';
import { sandboxOf, taskSpace } from '../src/run/testing.js';
import { createMasteryTracker } from '../curricula/index.js';
import { renderNatural } from '../generators/index.js';
import { createRng } from '../core/rng.js';
import { referenceAnswer } from '../core/task.js';
import { join } from 'node:path';
import { RunStore } from '../src/run/testing.js';
import { cogen, tempDir } from './helpers.js';

const config = loadPreset('smoke', { probes: { every: 2 } });

async function call(url: string, path: string, body?: unknown) {
  const res = await fetch(url + path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as any };
}

describe('a served run reports mastery and forgetting', () => {
  let server: RunningServer;
  const references = new Map<string, string>();
  const runsDir = tempDir('cogen-serve-mastery-');

  beforeAll(async () => {
    const space = taskSpace(config);
    const sandbox = await sandboxOf(config);
    try {
      const opts = { perArm: config.probes.perArm, mastery: createMasteryTracker(config.curriculum.mastery).opts };
      const probes = await buildProbes(
        sandbox,
        space.arms,
        space.skills,
        opts,
        createRng(`${config.seed}/probes`),
        new Set(),
        renderNatural,
      );
      for (const p of probes) references.set(p.task.id, referenceAnswer(p.task));
    } finally {
      await sandbox.close();
    }
    server = await startServer(config, {
      runsDir,
      preset: 'smoke',
      runId: 'served',
      host: '127.0.0.1',
      port: 0,
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('learned skills carry their trivial baselines; a later failed round shows them forgotten', async () => {
    const before = (await call(server.url, '/v1/stats')).json;
    expect(before).toMatchObject({ mastery: [], skills_ever_learned: [], forgotten: { skills: [], share: 0 } });
    expect(before.skills_masterable).toBeGreaterThan(0);

    const set = (await call(server.url, '/v1/probes')).json;
    const ids = (set.tasks as { id: string }[]).map((t) => t.id);
    expect(ids.every((id) => references.has(id))).toBe(true);
    const right = await call(server.url, '/v1/probes', {
      round: set.round,
      answers: ids.map((id) => ({ task_id: id, completion: references.get(id)! })),
    });
    expect(right.json.accuracy).toBe(1);

    const learned = (await call(server.url, '/v1/stats')).json;
    expect(learned.mastery.length).toBe(before.skills_masterable);
    for (const m of learned.mastery) {
      expect(m.accuracy).toBe(1);
      expect(m.baseline).toBeLessThanOrEqual(0.7);
    }
    expect(learned.skills_ever_learned).toEqual(learned.mastery.map((m: { skill_id: string }) => m.skill_id));
    expect(learned.forgotten).toEqual({ skills: [], share: 0 });

    // Two groups later the next round is due; a constant answer fails it.
    const sampled = (await call(server.url, '/v1/sample', { n: 2 })).json.tasks as { id: string }[];
    expect(
      (await call(server.url, '/v1/score', { items: sampled.map((t) => ({ task_id: t.id, completion: '0' })) })).status,
    ).toBe(200);
    const next = (await call(server.url, '/v1/probes')).json;
    expect(next).toMatchObject({ round: set.round + 1, due: true });
    await call(server.url, '/v1/probes', {
      round: next.round,
      answers: ids.map((id) => ({ task_id: id, completion: '0' })),
    });

    const after = (await call(server.url, '/v1/stats')).json;
    expect(after.mastery).toEqual([]);
    expect(after.skills_ever_learned).toEqual(learned.skills_ever_learned);
    expect(after.forgotten).toEqual({ skills: learned.skills_ever_learned, share: 1 });

    // Each round's level sets (the probes of each family's level 0: smoke's only level) and each family's
    // highest level passed join the metrics, as an autonomous run's do; cogen skills shows the climb.
    const store = RunStore.open(join(runsDir, 'served'), { create: false });
    const rounds = store.metrics().filter((m) => m['passed.arith'] !== undefined);
    store.close();
    expect(rounds.map((m) => [m['level.arith/0'], m['level.logic/0'], m['passed.arith'], m['passed.logic']])).toEqual([
      [1, 1, 0, 0],
      [expect.any(Number), expect.any(Number), -1, -1],
    ]);
    expect((await call(server.url, '/v1/skills')).status).toBe(200); // (the skill graph is fed from the outbox by now)
    const skills = cogen(['skills', '--run', 'served', '--runs-dir', runsDir]);
    expect(skills.code, skills.stderr).toBe(0);
    const first = Number(rounds[0]!.step);
    expect(skills.stdout).toMatch(new RegExp(`^ {2}arith +passed - +\\(first reached: 0@${first}\\)$`, 'm'));
  });
});
