// The dashboard's read-only API (through the Hono app, no socket) and `cogen plot`, over a run store
// written with the store's own commitStep: the API returns what the store holds (curves, heat map,
// tasks with lineage and answers, proposals), the run is opened read-only (its file is unchanged),
// unknown / empty / starting runs answer plainly, and the SVG holds the run's points while the PNG is
// a PNG of the SVG's size. The page itself is tested in a real browser: dashboard.browser.test.ts.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { dashboardApp } from '../src/dashboard/server.js';
import { plotRuns, plotSvg, loadPlotRuns, svgToPng } from '../src/dashboard/plot.js';
import { curvesOf } from '../src/dashboard/data.js';
import { RunStore } from '../src/run/testing.js';
import type { Task } from '../core/task.js';
import { loadPreset } from '../src/run/config.js';
import { startServer } from '../src/server/index.js';
import { cogen, tempDir } from './helpers.js';

const task = (
  id: string,
  family: string,
  level: number,
  program: string,
  output: number | boolean,
  parent: { id: string; op: string } | null = null,
): Task => ({
  id,
  type: 'deduction',
  family,
  level,
  skills: [`${family}.x`],
  program,
  hash: `h-${id}`,
  parent,
  proposer: parent ? 'mutation' : 'generator',
  input: [1],
  output,
});

const STEPS = 5;
const metricsAt = (s: number) => ({
  meanReward: s / 10,
  solveRate: s / 8,
  entropy: 1 - s / 10,
  kl: s / 100,
  lr: 0.001 * s,
  probeAccuracy: s >= 3 ? 0.5 : 0,
  'probe.arith/0/deduction': s >= 3 ? 0.25 : null,
  ms: 500,
  // a level-frontier run above level 4 (docs/levels.md): h per family × type, each level's held-out accuracy,
  // each family's highest level passed at a probe round
  'frontier.arith/deduction': s + 3,
  'level.arith/10': s >= 5 ? 0 : null,
  'level.arith/5': s >= 3 ? 1 : null,
  'passed.arith': s >= 3 ? s - 2 : null,
});

function writeRun(runsDir: string, id: string, steps: number): void {
  const store = RunStore.open(join(runsDir, id), { create: true });
  store.setMeta({
    runId: id,
    preset: 'smoke',
    status: 'running',
    startedAt: '2026-01-01T00:00:00.000Z',
    config: JSON.stringify({ families: ['arith', 'logic'] }),
  });
  const tasks = [
    task('t1', 'arith', 0, 'function f(a) { return a + 1; }', 2),
    task('t2', 'arith', 1, 'function f(a) { return (a + 1) * 2; }', 4, { id: 't1', op: 'wrap' }),
    task('t3', 'arith', 1, 'function f(a) { return (a + 1) * 2 - 1; }', 3, { id: 't2', op: 'perturb' }),
    task('t4', 'logic', 0, 'function f(p) { return !p; }', false),
  ];
  for (let s = 1; s <= steps; s++) {
    const fresh = s === 1 ? tasks.slice(0, 2) : s === 2 ? tasks.slice(2) : [];
    const served = s === 1 ? ['t1', 't2'] : ['t2', 't3', 't4'];
    store.commitStep({
      step: s,
      newTasks: fresh.map((t) => ({ task: t, compact: t.id, natural: `What does f(1) return? (${t.id})` })),
      scored: served.map((t) => ({ taskId: t, solved: 1, attempts: 2 })),
      episodes: served.flatMap((t) => [
        { taskId: t, answer: '2', reward: 1, reason: null },
        { taskId: t, answer: '7', reward: 0, reason: 'wrong: output differs' },
      ]),
      metrics: metricsAt(s),
      outbox: [],
      proposals:
        s === 1
          ? [
              {
                step: s,
                family: 'arith',
                level: 0,
                type: 'deduction',
                proposer: 'llm:fake',
                prompt: 'p',
                raw: 'r',
                outcome: 'accepted',
                detail: null,
                taskId: 't1',
                inputTokens: 1,
                outputTokens: 1,
                tokensEstimated: true,
                ms: 1,
                learnability: 0.5,
              },
              {
                step: s,
                family: 'arith',
                level: 0,
                type: 'deduction',
                proposer: 'llm:fake',
                prompt: 'p',
                raw: 'r',
                outcome: 'malformed',
                detail: 'no JSON',
                taskId: null,
                inputTokens: 1,
                outputTokens: 1,
                tokensEstimated: true,
                ms: 1,
                learnability: null,
              },
            ]
          : [],
    });
  }
  store.setMeta({ status: 'finished' });
  store.close();
}

describe('cogen dashboard: the read-only API', () => {
  let runsDir = '';
  let app: ReturnType<typeof dashboardApp>;
  const get = async (path: string) => {
    const res = await app.request(path);
    return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
  };
  const json = async (path: string) => JSON.parse((await get(path)).text);

  beforeAll(() => {
    runsDir = tempDir('cogen-dash-api-');
    writeRun(runsDir, 'r', STEPS);
    const empty = RunStore.open(join(runsDir, 'empty'), { create: true });
    empty.setMeta({ runId: 'empty', status: 'interrupted' });
    empty.close();
    app = dashboardApp({ runsDir });
  });

  it('curves hold the metrics per step (tasks/s from the step time), the run file is untouched', async () => {
    const db = join(runsDir, 'r', 'run.db');
    const before = readFileSync(db);
    const c = await json('/api/run/r/curves');
    expect(c.steps).toEqual([1, 2, 3, 4, 5]);
    const series = (chart: string, key: string) => {
      const ch = c.charts.find((x: { id: string }) => x.id === chart);
      return ch.values[ch.keys.indexOf(key)];
    };
    expect(series('reward', 'meanReward')).toEqual([1, 2, 3, 4, 5].map((s) => metricsAt(s).meanReward));
    expect(series('reward', 'solveRate')).toEqual([1, 2, 3, 4, 5].map((s) => metricsAt(s).solveRate));
    expect(series('probe', 'probe.arith/0/deduction')).toEqual([null, null, 0.25, 0.25, 0.25]);
    expect(series('entropy', 'entropy')).toEqual([1, 2, 3, 4, 5].map((s) => metricsAt(s).entropy));
    expect(series('kl', 'kl')).toEqual([1, 2, 3, 4, 5].map((s) => metricsAt(s).kl));
    expect(series('lr', 'lr')).toEqual([1, 2, 3, 4, 5].map((s) => metricsAt(s).lr));
    expect(series('throughput', 'tasksPerSec')).toEqual([4, 6, 6, 6, 6]);
    expect(series('frontier', 'frontier.arith/deduction')).toEqual([4, 5, 6, 7, 8]);
    expect(c.charts.find((x: { id: string }) => x.id === 'levels').keys).toEqual(['level.arith/5', 'level.arith/10']);
    expect(series('levels', 'level.arith/5')).toEqual([null, null, 1, 1, 1]);
    expect(series('passed', 'passed.arith')).toEqual([null, null, 1, 2, 3]);
    // Each arm's share of the tasks scored so far (all 5 steps lie within the window).
    expect(series('shares', 'share.arith/0/deduction')).toEqual([1 / 2, 1 / 5, 1 / 8, 1 / 11, 1 / 14]);
    expect(series('shares', 'share.logic/0/deduction')).toEqual([0, 1 / 5, 2 / 8, 3 / 11, 4 / 14]);
    // Every group solved 1 of its 2 answers; logic/0 had none before step 2.
    expect(series('solve', 'solve.arith/1/deduction')).toEqual([0.5, 0.5, 0.5, 0.5, 0.5]);
    expect(series('solve', 'solve.logic/0/deduction')).toEqual([null, 0.5, 0.5, 0.5, 0.5]);
    expect(readFileSync(db).equals(before)).toBe(true);
  });

  it("a run made before every level had a set (`eval.<family>/<d>` above the tables) draws in the levels' chart", () => {
    const c = curvesOf([
      { step: 1, 'eval.arith/12': 0.25, 'eval.arith/5': 0.5 },
      { step: 2, 'eval.arith/5': 0.75 },
    ]);
    const levels = c.charts.find((x) => x.id === 'levels')!;
    expect(levels.keys).toEqual(['eval.arith/5', 'eval.arith/12']);
    expect(levels.values).toEqual([
      [0.5, 0.75],
      [0.25, null],
    ]);
  });

  it("an arm's share covers the last 50 steps only", async () => {
    writeRun(runsDir, 'long', 60);
    const c = await json('/api/run/long/curves');
    const at = (key: string, step: number) => {
      const ch = c.charts.find((x: { id: string }) => x.id === (key.startsWith('share.') ? 'shares' : 'solve'));
      return ch.values[ch.keys.indexOf(key)][c.steps.indexOf(step)];
    };
    // Step 1 scored t1 (arith/0) and t2 (arith/1); every later step t2, t3 (arith/1) and t4 (logic/0).
    expect(at('share.arith/0/deduction', 50)).toBeCloseTo(1 / (2 + 49 * 3), 12);
    expect(at('share.arith/0/deduction', 51)).toBe(0);
    expect(at('solve.arith/0/deduction', 50)).toBe(0.5);
    expect(at('solve.arith/0/deduction', 51)).toBeNull(); // no arith/0 task in the window
    expect(at('share.arith/1/deduction', 60)).toBeCloseTo(2 / 3, 12);
    expect(at('share.logic/0/deduction', 60)).toBeCloseTo(1 / 3, 12);
  });

  it('the heat map counts the tasks served per arm and step', async () => {
    const h = await json('/api/run/r/heat');
    expect(h.arms).toEqual(['arith/0/deduction', 'arith/1/deduction', 'logic/0/deduction']);
    expect(h.cells).toEqual([
      [1, 0, 0, 0, 0],
      [1, 2, 2, 2, 2],
      [0, 1, 1, 1, 1],
    ]);
  });

  it('tasks: search by family, level and skill; a task has its program, prompt, reference, answers and lineage', async () => {
    expect((await json('/api/run/r/tasks?family=arith')).total).toBe(3);
    expect((await json('/api/run/r/tasks?family=arith&level=1')).tasks.map((t: { id: string }) => t.id).sort()).toEqual(
      ['t2', 't3'],
    );
    expect((await json('/api/run/r/tasks?skill=logic.x')).tasks.map((t: { id: string }) => t.id)).toEqual(['t4']);
    expect((await json('/api/run/r/tasks?q=return%20!p')).total).toBe(1);
    const t = await json('/api/run/r/task/t3');
    expect(t.program).toBe('function f(a) { return (a + 1) * 2 - 1; }');
    expect(t.prompt).toBe('What does f(1) return? (t3)');
    expect(t.reference).toBe('3');
    expect(t.episodes).toHaveLength(2 * 4);
    expect(t.lineage.map((p: { id: string; op: string }) => `${p.op}:${p.id}`)).toEqual(['perturb:t2', 'wrap:t1']);
    expect((await get('/api/run/r/task/nope')).status).toBe(404);
  });

  it('proposals by outcome', async () => {
    const p = await json('/api/run/r/proposals');
    expect(p.byOutcome).toEqual([
      { outcome: 'accepted', n: 1 },
      { outcome: 'malformed', n: 1 },
    ]);
  });

  it('unknown, empty and starting runs answer plainly', async () => {
    const unknown = await get('/run/nope');
    expect(unknown.status).toBe(404);
    expect(unknown.type).toContain('text/html');
    expect(unknown.text).toContain('No run &quot;nope&quot;');
    expect(unknown.text).not.toMatch(/at .*\.ts:\d+/);
    expect((await get('/api/run/nope/summary')).status).toBe(404);
    expect((await get('/api/run/..%2F..%2Fetc/summary')).status).toBe(404);
    expect((await json('/api/run/empty/summary')).phase).toBe('empty');
    // A directory with no database yet is a run starting.
    mkdirSync(join(runsDir, 'fresh'));
    expect((await json('/api/run/fresh/summary')).phase).toBe('starting');
    expect(await json('/api/run/fresh/curves')).toEqual({ steps: [], charts: [] });
    expect((await json('/api/run/fresh/skills')).skills).toEqual([]);
    expect((await get('/run/fresh')).status).toBe(200);
    const page = await get('/run/r');
    expect(page.text).toContain('assets/uPlot.iife.min.js');
    expect(page.text).not.toMatch(/https?:\/\//); // no CDN
    for (const a of [
      'uPlot.iife.min.js',
      'uPlot.min.css',
      'cytoscape.min.js',
      'dashboard.js',
      'shared.js',
      'charts.js',
      'skills.js',
      'tasks.js',
      'dashboard.css',
    ]) {
      expect((await get(`/assets/${a}`)).status, a).toBe(200);
    }
    for (const missing of ['constructor', 'toString', '__proto__', 'server.ts'])
      expect((await get(`/assets/${missing}`)).status, missing).toBe(404);
    const root = await app.request('/');
    expect(root.status).toBe(302);
  });
});

describe('cogen plot', () => {
  let runsDir = '';
  beforeAll(() => {
    runsDir = tempDir('cogen-plot-');
    writeRun(runsDir, 'a', STEPS);
    writeRun(runsDir, 'b', 3);
  });

  it("the SVG holds the run's points, two runs side by side", () => {
    const svg = plotSvg(loadPlotRuns(runsDir, ['a', 'b']));
    const lines = [...svg.matchAll(/<g data-chart="([^"]+)" data-run="([^"]+)">([\s\S]*?)<\/g>/g)];
    const line = (run: string, key: string) => {
      for (const [, , r, body] of lines) {
        if (r !== run) continue;
        const m = new RegExp(
          `data-key="${key.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}" data-steps="([^"]*)" data-values="([^"]*)"`,
        ).exec(body!);
        if (m) return { steps: m[1]!.split(',').map(Number), values: m[2]!.split(',').map(Number) };
      }
      return undefined;
    };
    expect(line('a', 'solveRate')).toEqual({
      steps: [1, 2, 3, 4, 5],
      values: [1, 2, 3, 4, 5].map((s) => metricsAt(s).solveRate),
    });
    expect(line('a', 'kl')!.values).toEqual([1, 2, 3, 4, 5].map((s) => metricsAt(s).kl));
    expect(line('a', 'probe.arith/0/deduction')).toEqual({ steps: [3, 4, 5], values: [0.25, 0.25, 0.25] });
    expect(line('b', 'solveRate')).toEqual({ steps: [1, 2, 3], values: [1, 2, 3].map((s) => metricsAt(s).solveRate) });
    // Each polyline has one point per value.
    const poly = /<polyline[^>]*points="([^"]*)"[^>]*data-key="solveRate"[^>]*data-values="([^"]*)"/.exec(svg)!;
    expect(poly[1]!.split(' ')).toHaveLength(poly[2]!.split(',').length);
    expect(svg).toContain('run a');
    expect(svg).toContain('run b');
  });

  it('cogen plot writes an SVG and a PNG of the right size; an unknown run is one line and exit 1', async () => {
    const dir = tempDir('cogen-plot-out-');
    const svgPath = join(dir, 'curves.svg');
    const pngPath = join(dir, 'curves.png');
    const a = cogen(['plot', '--run', 'a', '--run', 'b', '--out', svgPath, '--runs-dir', runsDir]);
    expect(a.code, a.stderr).toBe(0);
    const svg = readFileSync(svgPath, 'utf8');
    const [, w, h] = /width="(\d+)" height="(\d+)"/.exec(svg)!;
    const b = cogen(['plot', '--run', 'a', '--out', pngPath, '--runs-dir', runsDir]);
    expect(b.code, b.stderr).toBe(0);
    const png = readFileSync(pngPath);
    expect(png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true);
    const one = plotSvg(loadPlotRuns(runsDir, ['a']));
    const [, w1, h1] = /width="(\d+)" height="(\d+)"/.exec(one)!;
    expect(png.readUInt32BE(16)).toBe(Number(w1));
    expect(png.readUInt32BE(20)).toBe(Number(h1));
    expect(Number(w)).toBe(2 * Number(w1)); // two columns
    expect(Number(h)).toBe(Number(h1));
    // The PNG is rendered from the SVG: the same bytes again from the library.
    expect((await svgToPng(one)).equals(png)).toBe(true);
    const bad = cogen(['plot', '--run', 'nope', '--out', svgPath, '--runs-dir', runsDir]);
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toContain('unknown run "nope"');
    await expect(plotRuns(runsDir, ['a'], join(dir, 'x.gif'))).rejects.toThrow(/\.svg or \.png/);
    expect(existsSync(join(dir, 'x.gif'))).toBe(false);
    await expect(plotRuns(runsDir, ['a', 'b', 'a'], join(dir, 'x.svg'))).rejects.toThrow(/one or two runs/);
  });
});

describe('cogen serve mounts the dashboard of its run at /dashboard', () => {
  it('a served run shows what it has: its scored steps, no solver internals; other runs are not shown', async () => {
    const runsDir = tempDir('cogen-dash-serve-');
    writeRun(runsDir, 'other', 2);
    const server = await startServer(loadPreset('smoke'), {
      runsDir,
      preset: 'smoke',
      runId: 'served',
      host: '127.0.0.1',
      port: 0,
    });
    try {
      const post = async (path: string, body: unknown) =>
        (await (
          await fetch(`${server.url}${path}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(body),
          })
        ).json()) as any;
      const before = await (await fetch(`${server.url}/dashboard/api/run/served/summary`)).json();
      expect(before).toMatchObject({ kind: 'served', phase: 'starting', steps: 0 });
      const sampled = await post('/v1/sample', { n: 2 });
      await post('/v1/score', {
        items: sampled.tasks.map((t: { id: string }) => ({ task_id: t.id, completion: 'ANSWER: 0' })),
      });
      const after = await (await fetch(`${server.url}/dashboard/api/run/served/summary`)).json();
      expect(after).toMatchObject({ kind: 'served', phase: 'ready', steps: 1 });
      const curves = (await (await fetch(`${server.url}/dashboard/api/run/served/curves`)).json()) as {
        charts: { id: string }[];
      };
      const ids = curves.charts.map((c: { id: string }) => c.id);
      expect(ids).toContain('reward');
      for (const internal of ['entropy', 'kl', 'lr']) expect(ids).not.toContain(internal);
      const root = await fetch(`${server.url}/dashboard`, { redirect: 'manual' });
      expect(root.status).toBe(302);
      expect(root.headers.get('location')).toBe('/dashboard/run/served');
      const page = await fetch(`${server.url}/dashboard/run/served`);
      expect(page.status).toBe(200);
      expect((await fetch(`${server.url}/dashboard/assets/cytoscape.min.js`)).status).toBe(200);
      expect((await fetch(`${server.url}/dashboard/run/other`)).status).toBe(404);
      expect((await fetch(`${server.url}/dashboard/api/run/other/summary`)).status).toBe(404);
      expect(await (await fetch(`${server.url}/dashboard/api/runs`)).json()).toHaveLength(1);
    } finally {
      await server.close();
    }
  });
});
