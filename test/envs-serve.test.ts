// Environment episodes through `cogen serve`: OpenEnv-shaped /reset and /step over HTTP and /ws
// sessions, multi-turn (reset gives the first prompt and the tools, each step one tool call), the
// finished episodes recorded in the run store. The single-turn behaviour has its own tests
// (server.test.ts), unchanged. The reference actions come from making the same environment here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import WebSocket from 'ws';
import { loadPreset } from '../src/run/config.js';
import { startServer, type RunningServer } from '../src/server/index.js';
import { RunStore } from '../src/run/testing.js';
import { createSandbox, type Sandbox } from '../sandbox/index.js';
import { generateEnv, referenceActions, requestRng, type EnvKind } from '../envs/index.js';
import { tempDir } from './helpers.js';

async function call(url: string, path: string, body?: unknown) {
  const res = await fetch(url + path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as any };
}

let runsDir: string;
let server: RunningServer;
let sb: Sandbox;

/** The reference policy's actions for the environment a request makes. */
async function servedReference(kind: EnvKind, family: string, level: number, seed: number) {
  const spec = await generateEnv(sb, { kind, family, level, rng: requestRng(kind, family, level, seed) });
  return { id: spec.id, actions: referenceActions(spec) };
}

beforeAll(async () => {
  runsDir = tempDir('cogen-serve-env-');
  sb = await createSandbox({ workers: 1 });
  server = await startServer(loadPreset('smoke'), {
    runsDir,
    preset: 'smoke',
    runId: 'served',
    host: '127.0.0.1',
    port: 0,
  });
});
afterAll(async () => {
  await server?.close();
  await sb?.close();
});

describe('environment episodes over HTTP', () => {
  it('reset names an environment: the first prompt, the tools, the budgets; each step is one tool call; the reference reaches reward 1', async () => {
    for (const kind of ['probe', 'repair', 'search'] as const) {
      const reset = await call(server.url, '/reset', { env: { kind, family: 'arith', level: 0 }, seed: 11 });
      expect(reset.status).toBe(200);
      expect(reset.json).toMatchObject({
        reward: null,
        done: false,
        observation: { kind, family: 'arith', level: 0, seed: 11, budgets: { calls: expect.any(Number) } },
      });
      const o = reset.json.observation;
      expect(o.prompt.map((m: any) => m.role)).toEqual(['system', 'user']);
      expect(o.tools.map((t: any) => t.function.name)).toContain('submit');
      const ref = await servedReference(kind, 'arith', 0, 11);
      expect(o.env_id).toBe(ref.id);
      let last: any;
      for (const a of ref.actions) {
        last = await call(server.url, '/step', { action: { episode_id: o.episode_id, ...a } });
        expect(last.status).toBe(200);
        expect(typeof last.json.observation.result).toBe('string');
      }
      expect(last.json).toMatchObject({ reward: 1, done: true });
      // The episode is over: its id is unknown now.
      expect(
        (await call(server.url, '/step', { action: { episode_id: o.episode_id, ...ref.actions[0] } })).status,
      ).toBe(404);
    }
  });

  it('a malformed call ends the episode with reward 0 and a reason; bad requests are one clear line', async () => {
    const reset = await call(server.url, '/reset', { env: { kind: 'probe' }, seed: 3 });
    const id = reset.json.observation.episode_id;
    const bad = await call(server.url, '/step', { action: { episode_id: id, name: 'call', arguments: '{"args": [' } });
    expect(bad.json).toMatchObject({
      reward: 0,
      done: true,
      observation: { reason: expect.stringMatching(/^malformed: arguments are not JSON/) },
    });
    expect((await call(server.url, '/reset', { env: { kind: 'dance' } })).status).toBe(400);
    expect((await call(server.url, '/reset', { env: { kind: 'probe', family: 'nope' } })).json.error).toMatch(
      /unknown task family 'nope'/,
    );
    const noArgs = await call(server.url, '/step', { action: { episode_id: 'x', name: 'call' } });
    expect(noArgs).toMatchObject({ status: 400, json: { error: expect.stringMatching(/^action\.arguments/) } });
    // A single-turn step is still validated as one.
    const single = await call(server.url, '/step', { action: { task_id: 'x' } });
    expect(single).toMatchObject({ status: 400, json: { error: expect.stringMatching(/^action\.completion/) } });
    expect(
      (await call(server.url, '/step', { action: { episode_id: 'gone', name: 'submit', arguments: {} } })).status,
    ).toBe(404);
  });

  it('the single-turn reset is unchanged when no environment is named', async () => {
    const reset = await call(server.url, '/reset', {});
    expect(reset.json).toMatchObject({ reward: null, done: false, observation: { task_id: expect.any(String) } });
  });
});

describe('environment episodes over /ws', () => {
  it('a session plays an episode: reset with env, steps of {name, arguments}, state; then a single-turn reset still works', async () => {
    const ws = new WebSocket(server.url.replace('http', 'ws') + '/ws');
    await new Promise((ok, ko) => (ws.on('open', ok), ws.on('error', ko)));
    const waiters: ((m: any) => void)[] = [];
    ws.on('message', (d) => waiters.shift()?.(JSON.parse(String(d))));
    const ask = (m: unknown) => new Promise<any>((ok) => (waiters.push(ok), ws.send(JSON.stringify(m))));
    const reset = await ask({
      type: 'reset',
      data: { env: { kind: 'search', family: 'arith', level: 0 }, seed: 5, episode_id: 'ep-env' },
    });
    expect(reset).toMatchObject({
      type: 'observation',
      data: { done: false, observation: { episode_id: 'ep-env', kind: 'search' } },
    });
    const ref = await servedReference('search', 'arith', 0, 5);
    let last: any;
    for (const a of ref.actions) last = await ask({ type: 'step', data: a });
    expect(last).toMatchObject({ type: 'observation', data: { reward: 1, done: true } });
    expect((await ask({ type: 'state' })).data).toMatchObject({
      episode_id: 'ep-env',
      step_count: ref.actions.length,
      env_episode: 'ep-env',
    });
    expect((await ask({ type: 'step', data: ref.actions[0] })).data.code).toBe('VALIDATION_ERROR');
    expect((await ask({ type: 'reset', data: { env: { kind: 'nope' } } })).data.code).toBe('VALIDATION_ERROR');
    const single = await ask({ type: 'reset', data: {} });
    expect(single.data.observation.task_id).toEqual(expect.any(String));
    ws.close();
  });

  it('finished episodes are in the run store, and export as trajectories', async () => {
    const store = RunStore.open(join(runsDir, 'served'), { create: false });
    const rows = store.envEpisodes();
    store.close();
    expect(rows.length).toBeGreaterThanOrEqual(5);
    expect(rows.filter((r) => r.trajectory.reward === 1).length).toBeGreaterThanOrEqual(4);
    expect(rows.some((r) => /^malformed/.test(r.trajectory.reason ?? ''))).toBe(true);
  });
});
