// Environment arms in an autonomous run (docs/DESIGN.md, "Environments"): the curriculum picks
// (family, level, kind) arms beside the task arms; the built-in solver plays their episodes, which
// the store records and the update trains on; the held-out environments score the env.* skills
// against the random valid-action policy; and a run stopped after an uncheckpointed step resumes to
// exactly the run that was never stopped.
import Database from 'better-sqlite3';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { minProbes } from '../curricula/index.js';
import { loadPreset, startRun } from '../src/index.js';
import { openServedRun } from '../src/server/index.js';
import { cogen, lastCheckpoint, runRows, tempDir } from './helpers.js';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'llm-proposals.json');

const config = loadPreset('smoke', {
  steps: 4,
  batch: 6,
  group: 2,
  checkpointEvery: 2,
  families: ['arith', 'str'],
  environments: ['repair', 'search'],
  curriculum: { controller: 'uniform' },
  probes: { every: 2, perArm: 1 },
  solver: { backend: 'wasm', workers: 1 },
});

interface EnvRow {
  step: number;
  env_id: string;
  kind: string;
  family: string;
  reward: number;
  reason: string | null;
  trajectory: string;
}
const envRows = (dir: string): EnvRow[] => {
  const db = new Database(join(dir, 'run.db'), { readonly: true });
  try {
    return db
      .prepare('SELECT step, env_id, kind, family, reward, reason, trajectory FROM env_episodes ORDER BY id')
      .all() as EnvRow[];
  } finally {
    db.close();
  }
};

describe('environment arms in a run', () => {
  it('plays, records and probes them, leaves out an arm that makes none, and resumes exactly', async () => {
    const runsDir = tempDir('cogen-loop-envs-');
    const lines: string[] = [];
    const full = await startRun(config, { runsDir, preset: 'smoke', runId: 'full', log: (l) => lines.push(l) });
    // str programs have no operator a planted bug can change: str/0/repair is left out, with one line
    expect(lines.filter((l) => l.includes('environment arm str/0/repair left out'))).toHaveLength(1);
    expect(lines.some((l) => /environments repair, search \(3 arms\)/.test(l))).toBe(true);

    const eps = envRows(full.dir);
    expect(eps.length).toBeGreaterThan(0);
    expect(new Set(eps.map((e) => e.kind))).toEqual(new Set(['repair', 'search']));
    expect(eps.some((e) => e.kind === 'repair' && e.family === 'str')).toBe(false);
    for (const e of eps) {
      expect(e.reward).toBeGreaterThanOrEqual(0);
      expect(e.reward).toBeLessThanOrEqual(1);
      const t = JSON.parse(e.trajectory) as { steps: unknown[]; done: boolean; envId: string };
      expect(t.envId).toBe(e.env_id);
      expect(t.done).toBe(true);
      expect(t.steps.length).toBeGreaterThan(0);
    }
    const rows = runRows(full.dir);
    // the metrics of a step count exactly the episodes it recorded (group 2 per picked environment)
    for (const m of rows.metrics) {
      const recorded = eps.filter((e) => e.step === m.step).length;
      expect(m['env.episodes'] ?? 0).toBe(recorded);
      if (recorded > 0) expect(m['env.solveRate']).toBeGreaterThanOrEqual(0);
    }
    // probe rounds score the environment arms and skills
    const probed = rows.metrics.filter((m) => m['probe.arith/0/search'] !== undefined);
    expect(probed.map((m) => m.step)).toEqual([2, 4]);
    expect(
      probed.every(
        (m) =>
          m['probe.arith/0/repair'] !== undefined &&
          m['probe.str/0/search'] !== undefined &&
          m['probe.str/0/repair'] === undefined,
      ),
    ).toBe(true);
    const db = new Database(join(full.dir, 'run.db'), { readonly: true });
    const plan = JSON.parse(
      (db.prepare("SELECT value FROM meta WHERE key = 'probePlan'").get() as { value: string }).value,
    ) as { skills: Record<string, { probes: number; baseline: number }> };
    db.close();
    for (const s of ['env.repair', 'env.search']) {
      expect(plan.skills[s]!.probes).toBeGreaterThanOrEqual(minProbes(config.curriculum.mastery));
      expect(plan.skills[s]!.baseline).toBeLessThan(0.5);
    }

    const cut = await startRun(config, { runsDir, preset: 'smoke', runId: 'cut', stopAfter: 3 });
    expect(cut.steps).toBe(3);
    const resumed = await startRun(config, { runsDir, preset: 'smoke', runId: 'cut', resume: true });
    expect(resumed.steps).toBe(4);
    expect(runRows(resumed.dir)).toEqual(rows);
    expect(envRows(resumed.dir)).toEqual(eps);
    const [x, y] = [lastCheckpoint(full.dir), lastCheckpoint(resumed.dir)];
    expect(readFileSync(join(y, 'model.safetensors')).equals(readFileSync(join(x, 'model.safetensors')))).toBe(true);
  }, 400_000);

  it('environment arms above level 0: under level-frontier each kind has its own h, and episodes are played at the levels it opens', async () => {
    const climbing = loadPreset('smoke', {
      steps: 3,
      batch: 4,
      group: 2,
      families: ['arith'],
      maxLevel: 2,
      types: ['deduction'],
      environments: ['search'],
      // every judgement at h promotes: the frontier opens the levels above 0 at once
      curriculum: { controller: 'level-frontier', levelFrontier: { promoteAt: 0, minPrompts: 1 } },
      probes: { every: 10, perArm: 1 },
      solver: { backend: 'wasm', workers: 1 },
    });
    const runsDir = tempDir('cogen-loop-envs-frontier-');
    const run = await startRun(climbing, { runsDir, preset: 'smoke', runId: 'f', log: () => {} });
    const levels = envRows(run.dir).map((e) => (JSON.parse(e.trajectory) as { level: number }).level);
    expect(levels.length).toBeGreaterThan(0);
    expect(Math.max(...levels)).toBeGreaterThan(0);
    const last = runRows(run.dir).metrics.at(-1)!;
    expect(last['frontier.arith/search']).toBeGreaterThan(0);
  }, 240_000);

  it('needs the built-in solver (one line, nothing written)', async () => {
    const llm = loadPreset('smoke', {
      steps: 1,
      environments: ['search'],
      agents: { solver: { enabled: true, provider: 'scripted', scriptPath: FIXTURE, model: 'm' } },
    });
    const runsDir = tempDir('cogen-loop-envs-llm-');
    await expect(startRun(llm, { runsDir, preset: 'smoke', runId: 'l' })).rejects.toThrow(
      /^environments: in `cogen run` the built-in solver plays them/,
    );
    expect(existsSync(join(runsDir, 'l'))).toBe(false);
  });

  it('from the CLI: the taxonomy lists the env skills, a preset with environments runs, and its episodes export as chats', () => {
    const tax = cogen(['skills', '--taxonomy']);
    expect(tax.code, tax.stderr).toBe(0);
    expect(tax.stdout).toMatch(/env\.repair\s+0\s+arith\.add,logic\.compare\s+repair a planted bug/);
    const dir = tempDir('cogen-loop-envs-cli-');
    const runs = join(dir, 'runs');
    const run = cogen([
      'run',
      '--preset',
      'agentic',
      '--steps',
      '2',
      '--backend',
      'wasm',
      '--runs-dir',
      runs,
      '--run-id',
      'a',
      '--no-progress',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/environments repair, search \(4 arms\)/);
    expect(run.stdout).toMatch(/run a finished: 2 steps/);
    const out = join(dir, 'chats.jsonl');
    const exp = cogen(['export', '--run', 'a', '--runs-dir', runs, '--what', 'trajectories', '--out', out]);
    expect(exp.code, exp.stderr).toBe(0);
    const chats = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { kind: string; messages: { role: string; tool_calls?: unknown[] }[] });
    expect(chats.length).toBe(envRows(join(runs, 'a')).length);
    for (const c of chats) {
      expect(['repair', 'search']).toContain(c.kind);
      expect(c.messages.slice(0, 2).map((m) => m.role)).toEqual(['system', 'user']);
      expect(c.messages.some((m) => m.role === 'assistant' && (m.tool_calls?.length ?? 0) === 1)).toBe(true);
    }
  }, 240_000);

  it('is refused by cogen serve with one line, before it writes anything', async () => {
    const runsDir = tempDir('cogen-loop-envs-serve-');
    await expect(
      openServedRun(loadPreset('smoke', { environments: ['search'] }), { runsDir, preset: 'smoke', runId: 's' }),
    ).rejects.toThrow(/^cogen serve takes no `environments` in its config: /);
    expect(existsSync(join(runsDir, 's'))).toBe(false);
  });

  it('refuses an unknown environment kind in a config (one line naming it)', () => {
    expect(() => loadPreset('smoke', { environments: ['maze'] })).toThrow(/environments\.0: "maze"/);
  });
});
