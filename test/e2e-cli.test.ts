// The CLI driven as a user drives it: spawned processes, real files, the smoke preset.
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { asyncBufferFromFile, parquetReadObjects } from 'hyparquet';
import { spawn } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { createSandbox, verifyAnswer, type Task } from '../src/index.js';
import { CLI, cogen, skillEventsOf, tempDir } from './helpers.js';

describe('cogen run --preset smoke, then skills and export', () => {
  const runsDir = tempDir('cogen-e2e-');
  let runId = '';
  let summary: {
    runId: string;
    dir: string;
    steps: number;
    tasks: number;
    skillsMastered: string[];
    skillsMasterable: number;
    mastery: { skillId: string }[];
    levels: { family: string; passed: number; since: number | null; h: Record<string, number> }[];
  };

  beforeAll(() => {
    const res = cogen([
      'run',
      '--preset',
      'smoke',
      '--seed',
      '3',
      '--runs-dir',
      runsDir,
      '--run-id',
      'first',
      '--json',
    ]);
    expect(res.stderr).toMatch(/solver backend: (wasm|cpu|tensorflow|webgpu)/);
    expect(res.code, res.stderr).toBe(0);
    summary = JSON.parse(res.stdout);
    runId = summary.runId;
  }, 600_000);

  it('leaves a run directory with tasks, per-step metrics, a checkpoint and skill events', () => {
    const dir = join(runsDir, runId);
    expect(existsSync(join(dir, 'run.db'))).toBe(true);
    const db = new Database(join(dir, 'run.db'), { readonly: true });
    const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
    expect(count('SELECT COUNT(*) n FROM tasks')).toBeGreaterThan(0);
    expect(count('SELECT COUNT(*) n FROM metrics')).toBe(summary.steps);
    expect(count('SELECT COUNT(DISTINCT step) n FROM metrics')).toBe(30);
    // smoke checkpoints every 10 of its 30 steps.
    expect(
      (db.prepare('SELECT step FROM checkpoints ORDER BY step').all() as { step: number }[]).map((r) => r.step),
    ).toEqual([10, 20, 30]);
    // The skills whose last event is 'learned' are the ones the summary reports mastered.
    const events = skillEventsOf(dir);
    const last = new Map(events.map((e) => [e.skillId, e.event]));
    // smoke's probes can show arith.add/sub/mul and logic.and/or/not mastered (balanced probe sets,
    // src/run/probes.ts)
    expect(summary.skillsMasterable).toBe(6);
    expect(summary.mastery.map((m) => m.skillId)).toEqual([...summary.skillsMastered].sort());
    expect(
      [...last]
        .filter(([, e]) => e === 'learned')
        .map(([id]) => id)
        .sort(),
    ).toEqual([...summary.skillsMastered].sort());
    // The embedded skill graph received every skill of smoke's families, every task, and one MASTERED interval per 'learned'.
    expect(count('SELECT COUNT(*) n FROM graph_skills')).toBe(16);
    expect(count('SELECT COUNT(*) n FROM graph_tasks')).toBe(count('SELECT COUNT(*) n FROM tasks'));
    expect(count('SELECT COUNT(*) n FROM graph_mastered')).toBe(events.filter((e) => e.event === 'learned').length);
    db.close();
    const ck = readdirSync(join(dir, 'checkpoints')).sort();
    expect(ck).toHaveLength(3);
    expect(readdirSync(join(dir, 'checkpoints', ck.at(-1)!)).some((f) => f.endsWith('.safetensors'))).toBe(true);
  });

  it('proposes the same tasks with the same seed', () => {
    const res = cogen([
      'run',
      '--preset',
      'smoke',
      '--seed',
      '3',
      '--runs-dir',
      runsDir,
      '--run-id',
      'second',
      '--json',
      '--steps',
      '4',
    ]);
    expect(res.code, res.stderr).toBe(0);
    const ids = (id: string) => {
      const db = new Database(join(runsDir, id, 'run.db'), { readonly: true });
      const rows = db.prepare('SELECT id FROM tasks WHERE step <= 4 ORDER BY step, id').all() as { id: string }[];
      db.close();
      return rows.map((r) => r.id);
    };
    expect(ids('second').length).toBeGreaterThan(0);
    expect(ids('second')).toEqual(ids(runId));
  });

  it("records each family's level sets and highest level passed at every probe round, and the summary reports it", () => {
    const db = new Database(join(runsDir, runId, 'run.db'), { readonly: true });
    const rows = (db.prepare('SELECT step, data FROM metrics ORDER BY step').all() as { step: number; data: string }[])
      .map((r): Record<string, number> => ({ step: r.step, ...(JSON.parse(r.data) as Record<string, number>) }))
      .filter((m) => m['skill.arith.add'] !== undefined);
    db.close();
    // smoke probes every 5 of its 30 steps, at levels 0 of arith and logic
    expect(rows.map((m) => m.step)).toEqual([5, 10, 15, 20, 25, 30]);
    for (const m of rows)
      for (const family of ['arith', 'logic']) {
        expect(m[`level.${family}/0`]).toBeGreaterThanOrEqual(0);
        expect([-1, 0]).toContain(m[`passed.${family}`]);
      }
    const last = rows.at(-1)!;
    expect(summary.levels.map((l) => l.family)).toEqual(['arith', 'logic']);
    for (const l of summary.levels) {
      expect(l.passed).toBe(last[`passed.${l.family}`]);
      expect(l.since === null).toBe(l.passed < 0);
      expect(l.h).toEqual({}); // not a level-frontier run
    }
  });

  it('prints the skills with their mastery state', () => {
    const res = cogen(['skills', '--run', runId, '--runs-dir', runsDir]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/arith\.add/);
    expect(res.stdout).toMatch(new RegExp(`${summary.skillsMastered.length} of 16 skills mastered`));
    const json = cogen(['skills', '--run', runId, '--runs-dir', runsDir, '--format', 'json']);
    expect(json.code, json.stderr).toBe(0);
    const table = JSON.parse(json.stdout) as { run: string; skills: { skillId: string; state: string }[] };
    expect(table.run).toBe(runId);
    expect(table.skills).toHaveLength(16);
    for (const s of table.skills) expect(['mastered', 'never', 'forgotten']).toContain(s.state);
    // each family's climb: the level it passes now (none: -), and when each level was first reached
    expect(res.stdout).toMatch(/^levels passed \(the mastery rule on a level's held-out set/m);
    expect(res.stdout).toMatch(/^ {2}arith +passed (-|0 since step \d+) +\(first reached: (none yet|0@\d+)\)$/m);
    expect(res.stdout).toMatch(/^ {2}logic +passed (-|0 since step \d+) +\(first reached: (none yet|0@\d+)\)$/m);
    const passed = (JSON.parse(json.stdout) as { levelsPassed: Record<string, { now: number }> }).levelsPassed;
    expect(Object.keys(passed).sort()).toEqual(['arith', 'logic']);
    for (const l of summary.levels) expect(passed[l.family]!.now).toBe(l.passed);
    expect(
      table.skills
        .filter((s) => s.state === 'mastered')
        .map((s) => s.skillId)
        .sort(),
    ).toEqual([...summary.skillsMastered].sort());
  });

  it('exports tasks whose reference answers verify', async () => {
    const out = join(runsDir, 'tasks.jsonl');
    const res = cogen(['export', '--run', runId, '--runs-dir', runsDir, '--out', out]);
    expect(res.code, res.stderr).toBe(0);
    const lines = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.length).toBe(summary.tasks);
    const sandbox = await createSandbox();
    try {
      for (const rec of lines) {
        for (const key of ['id', 'type', 'family', 'level', 'skills', 'program', 'prompt', 'answer', 'solveRate'])
          expect(rec).toHaveProperty(key);
        if (rec.type === 'induction') expect(rec).toHaveProperty('hidden');
        else expect(rec).toHaveProperty('output');
        const task = { ...rec, hash: rec.hash, parent: rec.parent, proposer: rec.proposer } as Task;
        const verdict = await verifyAnswer(sandbox, task, rec.answer);
        expect(verdict.reward, `${rec.id}: ${verdict.reason}`).toBe(1);
      }
    } finally {
      await sandbox.close();
    }
  });

  it('exports TRL and veRL Parquet records', async () => {
    for (const format of ['trl', 'parquet']) {
      const out = join(runsDir, `tasks.${format}`);
      const res = cogen([
        'export',
        '--run',
        runId,
        '--runs-dir',
        runsDir,
        '--out',
        out,
        '--what',
        'tasks',
        '--format',
        format,
      ]);
      expect(res.code, res.stderr).toBe(0);
      expect(res.stderr).toMatch(new RegExp(`wrote ${summary.tasks} tasks to .*\\(${format}\\)`));
      expect(readFileSync(out).length).toBeGreaterThan(100);
    }
    expect(readFileSync(join(runsDir, 'tasks.parquet')).subarray(0, 4).toString()).toBe('PAR1');
    // veRL's layout, nested: the chat prompt is a list of {role, content}, reward_model and extra_info are structs.
    const rows = (await parquetReadObjects({
      file: await asyncBufferFromFile(join(runsDir, 'tasks.parquet')),
    })) as Record<string, any>[];
    const trl = readFileSync(join(runsDir, 'tasks.trl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows).toHaveLength(summary.tasks);
    rows.forEach((row, i) => {
      expect(row.prompt).toEqual(trl[i].prompt);
      expect(row.reward_model).toEqual({ style: 'rule', ground_truth: trl[i].ground_truth });
      expect(row.extra_info.task).toBe(trl[i].task);
      expect(JSON.parse(row.extra_info.task).id).toBe(row.extra_info.id);
    });
    expect(
      cogen(['export', '--run', runId, '--runs-dir', runsDir, '--out', join(runsDir, 'x'), '--what', 'wishes']).code,
    ).toBe(2);
  });
});

describe('cogen run with the level-frontier controller', () => {
  it("closes with each family's level passed beside its h, and cogen skills shows both", () => {
    const runsDir = tempDir('cogen-e2e-climb-');
    const args = ['--preset', 'smoke', '--curriculum', 'level-frontier', '--runs-dir', runsDir, '--run-id', 'climb'];
    const res = cogen(['run', ...args, '--steps', '2', '--no-progress']);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(
      /^levels passed \(each family's highest now; docs\/levels\.md\): arith (none|0 since step \d), h deduction 0; logic (none|0 since step \d), h deduction 0$/m,
    );
    const skills = cogen(['skills', 'frontier', '--run', 'climb', '--runs-dir', runsDir]);
    expect(skills.code, skills.stderr).toBe(0);
    expect(skills.stdout).toMatch(/^ {2}arith +passed (-|0 since step \d) +\(first reached: [^)]*\) +h deduction 0$/m);
    expect(skills.stdout).toMatch(/^ {2}arith\/deduction +h +0 +\(h at step: 0@1\)$/m);
  });
});

describe('clear errors', () => {
  it('unknown preset', () => {
    const res = cogen(['run', '--preset', 'nope', '--runs-dir', tempDir()]);
    expect(res.code).toBe(1);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
    expect(res.stderr).toMatch(/unknown preset "nope" \(known: .*smoke/);
  });

  it('the frontier proposer without level-frontier, in one line, writing nothing', () => {
    const dir = tempDir();
    const res = cogen(['run', '--preset', 'smoke', '--proposer', 'frontier', '--runs-dir', dir, '--run-id', 'f']);
    expect(res.code).toBe(1);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
    expect(res.stderr).toMatch(
      /curriculum\.evolve\.share: 0\.25 — evolve \(the frontier proposer\) needs controller: level-frontier/,
    );
    expect(existsSync(join(dir, 'f'))).toBe(false);
  });

  it('bad preset field names the field, the value and what was expected', () => {
    const dir = tempDir();
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'steps: -3\nfamilies: [arith]\ncurriculum:\n  controller: psychic\n');
    const res = cogen(['run', '--preset', file, '--runs-dir', dir]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/steps: -3/);
    expect(res.stderr).toMatch(/curriculum\.controller: "psychic"/);
    expect(res.stderr).not.toMatch(/\n\s+at /);
  });

  it('run directory blocked by a file', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'runs'), 'not a directory');
    const res = cogen(['run', '--preset', 'smoke', '--runs-dir', join(dir, 'runs')]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/not writable/);
    expect(
      res.stderr
        .trim()
        .split('\n')
        .filter((l) => !l.startsWith('solver backend')).length,
    ).toBe(1);
  });

  it('an existing run id is refused, not overwritten', () => {
    const dir = tempDir();
    expect(
      cogen(['run', '--preset', 'smoke', '--steps', '1', '--runs-dir', dir, '--run-id', 'taken', '--json']).code,
    ).toBe(0);
    const before = readFileSync(join(dir, 'taken', 'run.db'));
    const res = cogen(['run', '--preset', 'smoke', '--steps', '1', '--runs-dir', dir, '--run-id', 'taken']);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/run "taken" already exists .*--resume taken/);
    expect(readFileSync(join(dir, 'taken', 'run.db')).equals(before)).toBe(true);
  });

  it('a Neo4j that cannot be reached: one line, exit 1, no half-made run left behind', () => {
    const dir = tempDir();
    const res = cogen([
      'run',
      '--preset',
      'smoke',
      '--graph',
      'neo4j',
      '--neo4j-uri',
      'bolt://127.0.0.1:1',
      '--runs-dir',
      dir,
      '--run-id',
      'nope',
    ]);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/cannot reach Neo4j at bolt:\/\/127\.0\.0\.1:1/);
    expect(existsSync(join(dir, 'nope'))).toBe(false);
  });

  it('unknown run id', () => {
    for (const args of [
      ['skills', '--run', 'ghost'],
      ['export', '--run', 'ghost', '--out', '/tmp/x.jsonl'],
    ]) {
      const res = cogen([...args, '--runs-dir', tempDir()]);
      expect(res.code).toBe(1);
      expect(res.stderr).toMatch(/unknown run "ghost"/);
    }
  });

  it('bad usage exits 2', () => {
    expect(cogen(['frobnicate']).code).toBe(2);
    expect(cogen(['export']).code).toBe(2);
  });
});

describe('Ctrl-C', () => {
  it('stops after the current step with a checkpoint, exits 130, and the run resumes to the end', async () => {
    const runsDir = tempDir('cogen-sigint-');
    const child = spawn(
      process.execPath,
      [CLI, 'run', '--preset', 'smoke', '--steps', '8', '--runs-dir', runsDir, '--run-id', 'int', '--no-progress'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    // Wait (by polling the run store, not by the clock) until two steps are committed, then interrupt.
    const db = join(runsDir, 'int', 'run.db');
    const committed = () => {
      if (!existsSync(db)) return 0;
      const h = new Database(db, { readonly: true, fileMustExist: true });
      try {
        return (h.prepare('SELECT COUNT(*) n FROM metrics').get() as { n: number }).n;
      } catch {
        return 0;
      } finally {
        h.close();
      }
    };
    while (committed() < 2 && child.exitCode === null) await new Promise((r) => setTimeout(r, 200));
    child.kill('SIGINT');
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    expect(code, stderr).toBe(130);
    expect(stderr).toMatch(/interrupted after step \d+: checkpoint taken; resume with --resume int/);
    const h = new Database(db, { readonly: true });
    const last = Number((h.prepare("SELECT value FROM meta WHERE key = 'lastStep'").get() as { value: string }).value);
    expect((h.prepare("SELECT value FROM meta WHERE key = 'status'").get() as { value: string }).value).toBe(
      'interrupted',
    );
    expect((h.prepare('SELECT MAX(step) m FROM checkpoints').get() as { m: number }).m).toBe(last);
    h.close();
    expect(last).toBeLessThan(8);
    const resumed = cogen(['run', '--resume', 'int', '--runs-dir', runsDir, '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ steps: 8, status: 'finished' });
  }, 600_000);
});
