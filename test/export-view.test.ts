// `cogen export --view compact` (src/export-view.ts) and `--exclude-probes` (src/run/draw-probes.ts): rows
// in the built-in solver's view for SFT, and a run's held-out probes left out by id. The probes drawn
// again from a run's stored config are the ones its live server holds.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPreset, parseConfig } from '../src/run/config.js';
import { startServer, type RunningServer } from '../src/server/index.js';
import { RunStore } from '../src/run/testing.js';
import { drawRunProbes, storedRunProbeIds } from '../src/run/testing.js';
import { createSandbox } from '../sandbox/index.js';
import { renderCompact, renderNatural } from '../generators/index.js';
import { answerFromView, viewAnswerText } from '../src/solver/index.js';
import { encode, splitView, withSep } from '../src/solver/testing.js';
import { answerShape, referenceAnswer, type Task } from '../core/task.js';
import { cogen, tempDir } from './helpers.js';

const readLines = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

describe("cogen export in the solver's view", () => {
  let runsDir: string;
  let server: RunningServer | undefined;
  let probes: Task[];
  let sampled: string[];

  beforeAll(async () => {
    runsDir = tempDir('cogen-export-view-');
    server = await startServer(loadPreset('smoke'), {
      runsDir,
      preset: 'smoke',
      runId: 'probed',
      host: '127.0.0.1',
      port: 0,
    });
    const served = (await (await fetch(`${server.url}/v1/probes`)).json()) as { tasks: { id: string }[] };
    sampled = (
      (await (
        await fetch(`${server.url}/v1/sample`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"n":6}',
        })
      ).json()) as { tasks: { id: string }[] }
    ).tasks.map((t) => t.id);
    await server.close();
    server = undefined;
    // The run holds its probes as tasks too (as a run whose tasks are exported to train on might):
    // drawn again from its config, and checked to be the ones its server held.
    const store = RunStore.open(join(runsDir, 'probed'), { create: false });
    try {
      const config = parseConfig(JSON.parse(store.getMeta('config')!), 'of the test run', {
        stored: true,
        note: () => {},
      });
      const sandbox = await createSandbox();
      probes = (await drawRunProbes(config, sandbox, new Set()).finally(() => sandbox.close())).map((p) => p.task);
      expect(probes.map((t) => t.id)).toEqual(served.tasks.map((t) => t.id));
      expect([...(await storedRunProbeIds(store, 'probed'))].sort()).toEqual(probes.map((t) => t.id).sort());
      store.issueTasks({
        step: 0,
        newTasks: probes.map((task) => ({ task, compact: renderCompact(task), natural: renderNatural(task) })),
        issues: [],
        outbox: [],
      });
    } finally {
      store.close();
    }
  }, 120_000);
  afterAll(async () => {
    await server?.close();
  });

  it("writes each task's prompt and reference answer in the view, and leaves the run's probes out", () => {
    const out = join(runsDir, 'sft.jsonl');
    const res = cogen([
      'export',
      '--run',
      'probed',
      '--runs-dir',
      runsDir,
      '--view',
      'compact',
      '--exclude-probes',
      'probed',
      '--out',
      out,
    ]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/in the solver's view; the \d+ probes of run probed left out/);
    const rows = readLines(out);
    const probeIds = new Set(probes.map((t) => t.id));
    expect(rows.filter((r) => probeIds.has(r.id))).toEqual([]);
    expect(new Set(rows.map((r) => r.id))).toEqual(new Set(sampled));
    const store = RunStore.open(join(runsDir, 'probed'), { create: false });
    try {
      for (const r of rows) {
        const task = store.task(r.id)!;
        expect(Object.keys(r)).toEqual([
          'id',
          'type',
          'family',
          'level',
          'skills',
          'prompt',
          'completion',
          'answer',
          'view',
        ]);
        expect(splitView(r.prompt)).toEqual(withSep(encode(renderCompact(task))));
        expect(r.completion.endsWith(' <eos>')).toBe(true);
        expect(answerFromView(answerShape(task), viewAnswerText(r.completion) as string)).toBe(referenceAnswer(task));
        expect([r.answer, r.skills, r.level, r.view]).toEqual([
          referenceAnswer(task),
          task.skills,
          task.level,
          'words-signed',
        ]);
      }
    } finally {
      store.close();
    }
  });

  it('keeps the probes without --exclude-probes, and the chat view as it was', () => {
    const out = join(runsDir, 'all.trl.jsonl');
    expect(
      cogen(['export', '--run', 'probed', '--runs-dir', runsDir, '--view', 'compact', '--format', 'trl', '--out', out])
        .code,
    ).toBe(0);
    const rows = readLines(out);
    expect(rows.filter((r) => probes.some((t) => t.id === r.task_id))).toHaveLength(probes.length);
    expect(typeof rows[0].prompt).toBe('string');
    expect(rows[0].completion).toMatch(/ <eos>$/);
    const chat = join(runsDir, 'chat.jsonl');
    const res = cogen(['export', '--run', 'probed', '--runs-dir', runsDir, '--out', chat]);
    expect(res.stderr).toBe(`wrote ${rows.length} tasks to ${chat} (jsonl)\n`);
    expect(readLines(chat)[0].prompt).toContain('Task type');
  });

  it('refuses combinations it cannot honour in one line and a non-zero exit, writing nothing', () => {
    const out = join(runsDir, 'never.jsonl');
    for (const [args, why] of [
      [['--view', 'compact', '--format', 'parquet'], /^cogen: --view compact writes jsonl or trl rows/],
      [
        ['--view', 'compact', '--what', 'trajectories'],
        /^cogen: --view compact writes tasks \(--what tasks or eval\), not trajectories/,
      ],
      [
        ['--exclude-probes', 'probed', '--what', 'proposals'],
        /^cogen: --exclude-probes leaves a run's probes out of tasks/,
      ],
      [['--exclude-probes', 'nosuchrun'], /unknown run "nosuchrun"/],
    ] as const) {
      const res = cogen(['export', '--run', 'probed', '--runs-dir', runsDir, '--out', out, ...args]);
      expect(res.code).not.toBe(0);
      expect(res.stderr).toMatch(why);
      expect(res.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(() => readFileSync(out)).toThrow();
  });
});
