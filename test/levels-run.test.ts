// Open levels where users meet them (docs/levels.md): a served run whose trainer answers right
// climbs the level frontier past level 4 and /v1/stats shows h; `cogen export --what eval` writes a
// run's evaluation set and refuses bad options in one line; `cogen skills --taxonomy` states the rules.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { referenceAnswer } from '../core/task.js';
import { loadPreset } from '../src/run/config.js';
import { openServedRun } from '../src/server/index.js';
import { RunStore } from '../src/run/testing.js';
import { evalSet, LevelEvals, taskPrompt } from '../src/run/testing.js';
import { masteryConfigSchema } from '../curricula/testing.js';
import { renderCompact } from '../generators/index.js';
import { exportEval } from '../src/export-eval.js';
import { createSandbox } from '../sandbox/index.js';
import { cogen, tempDir } from './helpers.js';

describe('a served run with the level frontier', () => {
  it('climbs past level 4 as the trainer answers right, and /v1/stats shows h now', async () => {
    const config = loadPreset('smoke', {
      families: ['arith'],
      maxLevel: null,
      probes: { every: 1000 },
      curriculum: { controller: 'level-frontier', explore: 0, rehearsal: 0, levelFrontier: { minPrompts: 2 } },
    });
    const runsDir = tempDir('cogen-levels-serve-');
    const run = await openServedRun(config, { runsDir, preset: 'smoke', runId: 'served' });
    const levels: number[] = [];
    try {
      for (let round = 0; round < 12; round++) {
        const { tasks } = await run.sample(8);
        const store = RunStore.open(join(runsDir, 'served'), { create: false });
        const items = tasks.flatMap((t) => {
          levels.push(t.level);
          return [0, 1].map(() => ({ task_id: t.id, completion: referenceAnswer(store.task(t.id)!) }));
        });
        store.close();
        await run.score(items);
      }
      const h = (await run.stats()).frontier!['arith/deduction']!;
      expect(h).toBeGreaterThan(5);
      expect(Math.max(...levels)).toBeLessThanOrEqual(h);
      expect(levels.some((l) => l > 4)).toBe(true);
      const store = RunStore.open(join(runsDir, 'served'), { create: false });
      expect(store.metrics().at(-1)!['frontier.arith/deduction']).toBe(h);
      store.close();
    } finally {
      await run.close();
    }
  }, 120_000);
});

describe('level sets above the tables (src/run/level-evals.ts)', () => {
  const types = ['deduction', 'abduction', 'induction'] as const;
  const mastery = masteryConfigSchema.parse({});
  /** The ids a run of seed 3 holds out for logic at level 12, on a fresh sandbox, as a resumed run makes them again. */
  const build = async () => {
    const sandbox = await createSandbox({ workers: 1 });
    try {
      const logged: string[] = [];
      const evals = new LevelEvals(sandbox, {
        seed: 3,
        perArm: 4,
        mastery,
        tabled: new Map([['logic', 5]]),
        types: () => [...types],
        ask: (t) => taskPrompt(t, renderCompact(t)),
        log: (line) => logged.push(line),
      });
      const seen = new Set<string>();
      await evals.ensure('logic', 12, seen);
      await evals.ensure('logic', 3, seen); // a tabled level: the probes hold its set
      return { ids: [...seen], logged, sets: evals.size };
    } finally {
      await sandbox.close();
    }
  };

  it('hold max(minProbes, perArm × types) tasks within the aim, the same on a fresh build', async () => {
    const a = await build();
    const b = await build();
    expect(a.sets).toBe(1);
    expect(a.ids).toHaveLength(17); // minProbes, above 4 × 3
    expect(b.ids).toEqual(a.ids);
    expect(a.logged).toEqual([]);
    const sandbox = await createSandbox({ workers: 1 });
    try {
      const set = await evalSet(sandbox, { family: 'logic', level: 12, types, n: 17, seed: 3, aim: 0.5 });
      expect(set.tasks.map((t) => t.id)).toEqual(a.ids);
      expect(set.baseline).toBeLessThanOrEqual(0.5);
      expect(set.balanced).toBe(true);
      // the stream's first 17 tasks, taken as they come (an aim of 1 skips none), are not: a constant
      // answer passes more than half of them
      const unbalanced = await evalSet(sandbox, { family: 'logic', level: 12, types, n: 17, seed: 3, aim: 1 });
      expect(unbalanced.baseline).toBeGreaterThan(0.5);
      expect(unbalanced.tasks.map((t) => t.type)).toEqual(set.tasks.map((t) => t.type));
    } finally {
      await sandbox.close();
    }
  }, 120_000);
});

describe('cogen export --what eval', () => {
  it('writes the set a run of that seed makes, the same on every call', async () => {
    const dir = tempDir('cogen-eval-');
    const out = join(dir, 'eval.jsonl');
    const r = cogen([
      'export',
      '--what',
      'eval',
      '--family',
      'loop',
      '--level',
      '9',
      '--n',
      '6',
      '--seed',
      '41',
      '--out',
      out,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^wrote 6 eval tasks of loop at level 9 \(seed 41\)/);
    const records = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(records.map((x) => [x.level, x.type])).toEqual(
      [0, 1, 2, 3, 4, 5].map((i) => [9, ['deduction', 'abduction', 'induction'][i % 3]]),
    );
    const sandbox = await createSandbox();
    try {
      const { tasks } = await evalSet(sandbox, {
        family: 'loop',
        level: 9,
        types: ['deduction', 'abduction', 'induction'],
        n: 6,
        seed: 41,
        aim: 0.5, // the default mastery rule's learnAt − margin
      });
      expect(records.map((x) => x.id)).toEqual(tasks.map((t) => t.id));
    } finally {
      await sandbox.close();
    }
    expect(
      cogen([
        'export',
        '--what',
        'eval',
        '--family',
        'loop',
        '--level',
        '9',
        '--n',
        '6',
        '--seed',
        '41',
        '--out',
        join(dir, 'again.jsonl'),
      ]).code,
    ).toBe(0);
    expect(readFileSync(join(dir, 'again.jsonl'), 'utf8')).toBe(readFileSync(out, 'utf8'));
  }, 120_000);

  it('refuses bad options in one line with a non-zero exit', () => {
    const out = join(tempDir('cogen-eval-bad-'), 'x.jsonl');
    const cases: [string[], RegExp][] = [
      [['--family', 'nope', '--level', '5'], /^cogen: --family: unknown task family 'nope'/],
      [
        ['--family', 'hanoi', '--level', '600'],
        /^cogen: family 'hanoi': level 600 cannot be rendered within the served limits: .*64 KiB/,
      ],
      [['--family', 'arith'], /^cogen: --what eval needs --family and --level$/],
    ];
    for (const [args, message] of cases) {
      const r = cogen(['export', '--what', 'eval', ...args, '--out', out]);
      expect(r.code, args.join(' ')).not.toBe(0);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr.trim(), args.join(' ')).toMatch(message);
    }
  });

  it('refuses types the family does not make, and an empty set', async () => {
    const out = join(tempDir('cogen-eval-bad-'), 'x.jsonl');
    await expect(
      exportEval({ family: 'arith', level: 5, n: 4, seed: 0, types: ['problem'], out, format: 'jsonl' }),
    ).rejects.toThrow(/^--types: family 'arith' makes deduction, abduction, induction, not 'problem'$/);
    await expect(exportEval({ family: 'arith', level: 5, n: 0, seed: 0, out, format: 'jsonl' })).rejects.toThrow(
      /^--n must be at least 1, got 0$/,
    );
  });
});

describe('cogen skills --taxonomy', () => {
  it("states each native family's rule above level 4 and its levels", () => {
    const r = cogen(['skills', '--taxonomy']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^arith +0-125 /m);
    expect(r.stdout).toMatch(/^hanoi +0-514 /m);
    expect(r.stdout).toMatch(
      /^ {2}above level 4: disks 5 \+ ⌊log2\(d − 3\)⌋ \(at most 13: past it the 2\^14 − 1 moves/m,
    );
    expect(r.stdout).toMatch(
      /^ {2}grows slower than tenfold by level 30 \(at least 4× level 4\): an answer doubles with each disk/m,
    );
    const json = JSON.parse(cogen(['skills', '--taxonomy', '--format', 'json']).stdout) as {
      families: { id: string; growth: string[]; lastLevel: number | null }[];
    };
    expect(json.families.find((f) => f.id === 'sort')).toMatchObject({ lastLevel: 100 });
    expect(json.families.find((f) => f.id === 'sort')!.growth.join('; ')).toMatch(/array lengths 3 to 7 \+ 2\(d − 4\)/);
  });
});
