// Recording and export of environment episodes: the run store's env_episodes table (absent from runs
// made before environments, which stay readable), and `cogen export --what trajectories` as
// multi-turn chats in the OpenAI messages format whose tool call ids pair up.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { asyncBufferFromFile, parquetReadObjects } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRng } from '../core/rng.js';
import { createSandbox, type Sandbox } from '../sandbox/index.js';
import {
  ENV_KINDS,
  Env,
  generateEnv,
  playEpisode,
  randomPolicy,
  referencePolicy,
  type EnvSpec,
  type Trajectory,
} from '../envs/index.js';
import { RunStore } from '../src/run/testing.js';
import { exportRun } from '../src/export.js';
import { cogen, tempDir } from './helpers.js';

let sb: Sandbox;
let dir: string;
const played: { spec: EnvSpec; trajectory: Trajectory }[] = [];

beforeAll(async () => {
  sb = await createSandbox({ workers: 1 });
  for (const kind of ENV_KINDS) {
    const spec = await generateEnv(sb, { kind, family: 'arith', level: 0, rng: createRng(kind) });
    played.push({ spec, trajectory: await playEpisode(new Env(spec, sb), referencePolicy(spec), 1) });
    played.push({ spec, trajectory: await playEpisode(new Env(spec, sb), randomPolicy(spec, 3), 2) });
    const env = new Env(spec, sb);
    env.reset(0);
    await env.step({ name: 'submit', arguments: '{not json' });
    played.push({ spec, trajectory: env.trajectory() });
  }
  dir = join(tempDir('cogen-envs-'), 'run');
  const store = RunStore.open(dir, { create: true });
  store.addEnvEpisodes(3, played);
  store.close();
});
afterAll(async () => {
  await sb.close();
});

const readLines = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, any>);

/** Every assistant tool call is answered by exactly one tool message right after it, with its id. */
function expectPairedToolCalls(messages: any[]) {
  expect(messages[0]).toMatchObject({ role: 'system' });
  expect(messages[1]).toMatchObject({ role: 'user', content: expect.any(String) });
  const ids = new Set<string>();
  for (let i = 2; i < messages.length; i += 2) {
    const a = messages[i];
    const t = messages[i + 1];
    expect(a.role).toBe('assistant');
    expect(a.tool_calls).toHaveLength(1);
    const c = a.tool_calls[0];
    expect(c).toMatchObject({
      id: expect.any(String),
      type: 'function',
      function: { name: expect.any(String), arguments: expect.any(String) },
    });
    expect(ids.has(c.id)).toBe(false);
    ids.add(c.id);
    expect(t).toMatchObject({ role: 'tool', tool_call_id: c.id, content: expect.any(String) });
  }
  expect(messages.length % 2).toBe(0);
}

describe('env episodes in the run store', () => {
  it('round-trips every episode with its spec, in order', () => {
    const store = RunStore.open(dir, { create: false });
    const rows = store.envEpisodes();
    store.close();
    expect(rows.map((r) => r.trajectory)).toEqual(played.map((p) => p.trajectory));
    expect(rows.map((r) => r.spec)).toEqual(played.map((p) => p.spec));
    expect(rows.every((r) => r.step === 3)).toBe(true);
  });

  it('a run made before environments (no env_episodes table) stays readable and exports no trajectories', async () => {
    const old = join(tempDir('cogen-envs-old-'), 'run');
    RunStore.open(old, { create: true }).close();
    const db = new Database(join(old, 'run.db'));
    db.exec('DROP TABLE env_episodes');
    db.close();
    const store = RunStore.open(old, { create: false });
    expect(store.envEpisodes()).toEqual([]);
    expect(await exportRun(store, 'trajectories', join(old, 't.jsonl'), 'jsonl')).toBe(0);
    store.close();
  });
});

describe('cogen export --what trajectories', () => {
  it('jsonl: one chat per episode, OpenAI messages with paired tool calls, reward and tools', async () => {
    const out = join(tempDir('cogen-envs-'), 't.jsonl');
    const store = RunStore.open(dir, { create: false });
    expect(await exportRun(store, 'trajectories', out, 'jsonl')).toBe(played.length);
    store.close();
    const lines = readLines(out);
    lines.forEach((l, i) => {
      const t = played[i]!.trajectory;
      expect(l).toMatchObject({ env_id: t.envId, kind: t.kind, reward: t.reward, done: true, turns: t.steps.length });
      expect(l.tools.map((x: any) => x.type)).toEqual(t.tools.map(() => 'function'));
      expectPairedToolCalls(l.messages);
      expect(l.messages.filter((m: any) => m.role === 'tool').map((m: any) => m.content)).toEqual(
        t.steps.map((s) => s.observation),
      );
    });
    expect(lines.filter((_, i) => i % 3 === 0).map((l) => l.reward)).toEqual(ENV_KINDS.map(() => 1));
    expect(lines.filter((l) => /^malformed/.test(l.reason ?? ''))).toHaveLength(ENV_KINDS.length);
  });

  it('trl: a conversational prompt and completion with the tools; parquet: veRL rows with the chat as JSON text', async () => {
    const d = tempDir('cogen-envs-');
    const store = RunStore.open(dir, { create: false });
    await exportRun(store, 'trajectories', join(d, 't.trl.jsonl'), 'trl');
    await exportRun(store, 'trajectories', join(d, 't.parquet'), 'parquet');
    store.close();
    for (const l of readLines(join(d, 't.trl.jsonl'))) {
      expectPairedToolCalls([...l.prompt, ...l.completion]);
      expect(l.tools.length).toBeGreaterThan(0);
    }
    const rows = await parquetReadObjects({ file: await asyncBufferFromFile(join(d, 't.parquet')) });
    expect(rows).toHaveLength(played.length);
    expect(rows[0]).toMatchObject({
      data_source: 'cogen/env/probe',
      ability: 'env.probe',
      reward_model: { style: 'rule' },
    });
    expectPairedToolCalls(JSON.parse(rows[0]!.extra_info.messages));
  });

  it('through the CLI', () => {
    const out = join(tempDir('cogen-envs-'), 'cli.jsonl');
    const r = cogen(['export', '--run', 'run', '--runs-dir', join(dir, '..'), '--what', 'trajectories', '--out', out]);
    expect(r.stderr).toContain(`wrote ${played.length} trajectories`);
    expect(r.code).toBe(0);
    expect(readLines(out)).toHaveLength(played.length);
  });
});
