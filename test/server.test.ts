// `cogen serve` as a trainer meets it: a real server on a loopback port, real HTTP and WebSocket
// clients. Right answers come from the run store (the reference answer of each task), not from the
// server's responses.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import WebSocket from 'ws';
import { loadPreset } from '../src/run/config.js';
import { startServer, type RunningServer } from '../src/server/index.js';
import { RunStore } from '../src/run/testing.js';
import { referenceAnswer } from '../core/task.js';
import { tempDir } from './helpers.js';

interface Sampled {
  id: string;
  type: string;
  family: string;
  level: number;
  prompt: { role: string; content: string }[];
  answer_kind: string;
}

const config = (over: Record<string, unknown> = {}) => loadPreset('smoke', { probes: { every: 2 }, ...over });

async function call(url: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url + path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json };
}

/** A POST whose body goes out in chunks (transfer-encoding: chunked, no content-length). */
async function streamed(url: string, path: string, parts: string[]) {
  const body = new ReadableStream({
    start(c) {
      for (const p of parts) c.enqueue(new TextEncoder().encode(p));
      c.close();
    },
  });
  const res = await fetch(url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    duplex: 'half',
  } as RequestInit);
  return { status: res.status, json: await res.json() };
}

describe('cogen serve', () => {
  let runsDir: string;
  let server: RunningServer;
  let now = Date.UTC(2026, 0, 1);
  const reference = (id: string): string => {
    const store = RunStore.open(join(runsDir, 'served'), { create: false });
    try {
      return referenceAnswer(store.task(id)!);
    } finally {
      store.close();
    }
  };

  beforeAll(async () => {
    runsDir = tempDir('cogen-serve-');
    server = await startServer(config(), {
      runsDir,
      preset: 'smoke',
      runId: 'served',
      host: '127.0.0.1',
      port: 0,
      now: () => now,
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('samples tasks from the live curriculum as chat prompts', async () => {
    const { status, json } = await call(server.url, '/v1/sample', { n: 5 });
    expect(status).toBe(200);
    expect(json.run_id).toBe('served');
    expect(json.tasks).toHaveLength(5);
    for (const t of json.tasks as Sampled[]) {
      expect(t.prompt.map((m) => m.role)).toEqual(['system', 'user']);
      expect(t.prompt[1]!.content).toContain('function f');
      expect(t.answer_kind).toBe('literal');
    }
  });

  it('serves a request from one arm when asked, and mixes arms otherwise', async () => {
    const armsOf = async (oneArm: boolean): Promise<Set<string>[]> => {
      const out: Set<string>[] = [];
      for (let i = 0; i < 6; i++) {
        const { status, json } = await call(server.url, '/v1/sample', { n: 12, one_arm: oneArm });
        expect(status).toBe(200);
        expect(json.tasks).toHaveLength(12);
        out.push(new Set((json.tasks as Sampled[]).map((t) => `${t.family}/${t.level}/${t.type}`)));
      }
      return out;
    };
    for (const arms of await armsOf(true)) expect(arms.size).toBe(1);
    expect((await armsOf(false)).some((arms) => arms.size > 1)).toBe(true);
  });

  it('scores right and wrong completions, extracting the answer from free text', async () => {
    const [t] = (await call(server.url, '/v1/sample', { n: 1 })).json.tasks as Sampled[];
    const right = reference(t!.id);
    const wrong = JSON.stringify(right === 'true' ? false : right === 'false' ? true : 'surely not');
    const res = await call(server.url, '/v1/score', {
      items: [
        { task_id: t!.id, completion: `Let me think.\n\`\`\`json\n${right}\n\`\`\`` },
        { task_id: t!.id, completion: `ANSWER: ${wrong}` },
        { task_id: t!.id, completion: 'no idea' },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.json.results.map((r: { reward: number }) => r.reward)).toEqual([1, 0, 0]);
    expect(res.json.results[0].answer).toBe(right);
    expect(res.json.results[2].reason).toMatch(/^malformed/);
  });

  it('applies a retried request once and refuses a reused key with another body', async () => {
    const [t] = (await call(server.url, '/v1/sample', { n: 1 })).json.tasks as Sampled[];
    const before = (await call(server.url, '/v1/stats')).json;
    const body = { items: [{ task_id: t!.id, completion: reference(t!.id) }], idempotency_key: 'retry-1' };
    const [a, b, c] = await Promise.all([
      call(server.url, '/v1/score', body),
      call(server.url, '/v1/score', body),
      call(server.url, '/v1/score', body),
    ]);
    expect([a.status, b.status, c.status]).toEqual([200, 200, 200]);
    expect([a, b, c].filter((r) => !r.json.replayed)).toHaveLength(1);
    expect(b.json.results).toEqual(a.json.results);
    const after = (await call(server.url, '/v1/stats')).json;
    expect(after.completions - before.completions).toBe(1);
    expect(after.groups - before.groups).toBe(1);
    const other = await call(
      server.url,
      '/v1/score',
      { items: [{ task_id: t!.id, completion: 'x' }] },
      { 'idempotency-key': 'retry-1' },
    );
    expect(other.status).toBe(409);
  });

  it('keeps rewards right under concurrent scoring and feeds each group once', async () => {
    const unsampled = (await call(server.url, '/v1/stats')).json;
    const tasks = (await call(server.url, '/v1/sample', { n: 8 })).json.tasks as Sampled[];
    const before = (await call(server.url, '/v1/stats')).json;
    const answers = tasks.map((t) => reference(t.id));
    // Four workers, each scoring two tasks with one right and one wrong completion.
    const results = await Promise.all(
      [0, 1, 2, 3].map((w) =>
        call(server.url, '/v1/score', {
          items: tasks.slice(2 * w, 2 * w + 2).flatMap((t, j) => [
            { task_id: t.id, completion: answers[2 * w + j]! },
            { task_id: t.id, completion: '"certainly wrong"' },
          ]),
          idempotency_key: `worker-${w}`,
        }),
      ),
    );
    for (const r of results) expect(r.json.results.map((x: { reward: number }) => x.reward)).toEqual([1, 0, 1, 0]);
    const after = (await call(server.url, '/v1/stats')).json;
    // A task drawn twice in one sample (a replay) is one issue, and forms one group of its request.
    const distinct = new Set(tasks.map((t) => t.id)).size;
    expect(after.groups - before.groups).toBe(distinct);
    expect(after.completions - before.completions).toBe(16);
    expect(before.issued - unsampled.issued).toBe(distinct);
    expect(after.open).toBe(unsampled.open);
  });

  it('answers bad input with a 4xx and one line', async () => {
    const bad = [
      [await call(server.url, '/v1/score', '{"items": ['), 400, /Malformed JSON/],
      [await call(server.url, '/v1/score', { items: [{ task_id: 3 }] }), 400, /^items\.0\.task_id/],
      [await call(server.url, '/v1/score', { items: [] }), 400, /^items/],
      [await call(server.url, '/v1/score', { items: [{ task_id: 'nope', completion: '1' }] }), 404, /unknown task id/],
      [await call(server.url, '/v1/sample', { n: 100000 }), 400, /^n:/],
      [await call(server.url, '/v1/verify', { task: '{not json', completion: '1' }), 400, /not valid JSON/],
      [await call(server.url, '/v1/score', 'x'.repeat(9 * 1024 * 1024)), 413, /over/],
      // Sent in chunks, with no content-length: read and parsed as a whole, and refused once over the limit.
      [await streamed(server.url, '/v1/score', ['{"items"', ': []}']), 400, /^items/],
      [
        await streamed(
          server.url,
          '/v1/score',
          Array.from({ length: 9 }, () => 'x'.repeat(1024 * 1024)),
        ),
        413,
        /over/,
      ],
      [await call(server.url, '/nowhere'), 404, /no route/],
    ] as const;
    for (const [res, status, line] of bad) {
      expect(res.status).toBe(status);
      expect(res.json.error).toMatch(line);
      expect(res.json.error).not.toContain('\n');
    }
  });

  it('runs a hostile completion only in the sandbox', async () => {
    const res = await call(server.url, '/v1/verify', {
      task: { type: 'induction', visible: [{ input: [1], output: 2 }], hidden: [{ input: [3], output: 6 }] },
      completion: '```js\nfunction f(a) { for (;;) {} }\n```',
    });
    expect(res.status).toBe(200);
    expect(res.json.reward).toBe(0);
    expect(res.json.reason).toMatch(/timeout|budget/);
    const ok = await call(server.url, '/v1/verify', {
      task: JSON.stringify({
        type: 'induction',
        visible: [{ input: [1], output: 2 }],
        hidden: [{ input: [3], output: 6 }],
      }),
      completion: '(a) => a * 2',
    });
    expect(ok.json).toEqual({ reward: 1, reason: null, answer: '(a) => a * 2' });
  });

  it('turns a probe report into skill events, once per round', async () => {
    const set = (await call(server.url, '/v1/probes')).json;
    expect(set.due).toBe(true);
    const answers = (set.tasks as Sampled[]).map((t) => ({ task_id: t.id, completion: '0' }));
    const first = await call(server.url, '/v1/probes', { round: set.round, answers });
    expect(first.json.accepted).toBe(true);
    // The probe set is balanced: a constant answer passes none of it whole, overall or per skill.
    expect(first.json.accuracy).toBeGreaterThanOrEqual(0);
    expect(first.json.accuracy).toBeLessThan(1);
    const perSkill = first.json.per_skill as Record<string, number>;
    expect(Object.keys(perSkill)).toContain('arith.add');
    for (const accuracy of Object.values(perSkill)) expect(accuracy).toBeLessThan(1);
    // The round joins the step's metrics row, beside what the step's scores wrote there.
    const store = RunStore.open(join(runsDir, 'served'), { create: false });
    try {
      const { step } = (await call(server.url, '/v1/stats')).json as { step: number };
      const row = store.metrics().find((m) => m.step === step)!;
      expect(row).toMatchObject({ probeAccuracy: first.json.accuracy, meanReward: expect.any(Number) });
      for (const [id, accuracy] of Object.entries(perSkill)) expect(row[`skill.${id}`]).toBe(accuracy);
    } finally {
      store.close();
    }
    const again = await call(server.url, '/v1/probes', { round: set.round, answers });
    expect(again.json).toMatchObject({ accepted: false, detail: expect.stringMatching(/reported already/) });
    expect((await call(server.url, '/v1/probes')).json.due).toBe(false);
    const stale = await call(server.url, '/v1/probes', { round: set.round + 5, answers });
    expect(stale.json.accepted).toBe(false);
    const notProbe = await call(server.url, '/v1/probes', {
      round: set.round,
      answers: [{ task_id: 'zzz', completion: '1' }],
    });
    expect(notProbe.status).toBe(422);
    const scoreProbe = await call(server.url, '/v1/score', { items: [answers[0]] });
    expect(scoreProbe.status).toBe(422);
  });

  it('abandons tasks past their time-to-live and does not feed their late scores', async () => {
    const [t] = (await call(server.url, '/v1/sample', { n: 1 })).json.tasks as Sampled[];
    const before = (await call(server.url, '/v1/stats')).json;
    now += (server.run.config.serve.ttlSeconds + 1) * 1000;
    const res = await call(server.url, '/v1/score', { items: [{ task_id: t!.id, completion: reference(t!.id) }] });
    expect(res.json.results[0].reward).toBe(1);
    const after = (await call(server.url, '/v1/stats')).json;
    expect(after.abandoned).toBeGreaterThan(before.abandoned);
    expect(after.groups).toBe(before.groups);
    expect(after.unfed_groups).toBe(before.unfed_groups + 1);
  });

  it('speaks OpenEnv over HTTP', async () => {
    const reset = await call(server.url, '/reset', {});
    expect(reset.json).toMatchObject({ reward: null, done: false, observation: { task_id: expect.any(String) } });
    const id = reset.json.observation.task_id as string;
    const step = await call(server.url, '/step', { action: { task_id: id, completion: reference(id) } });
    expect(step.json).toMatchObject({ reward: 1, done: true, observation: { task_id: id } });
    const schema = (await call(server.url, '/schema')).json;
    expect(Object.keys(schema).sort()).toEqual(['action', 'observation', 'state']);
    expect((await call(server.url, '/health')).json.status).toBe('healthy');
  });

  it('speaks OpenEnv over the WebSocket, one session per connection', async () => {
    const ws = new WebSocket(server.url.replace('http', 'ws') + '/ws');
    await new Promise((ok, ko) => (ws.once('open', ok), ws.once('error', ko)));
    const replies: any[] = [];
    const waiters: ((m: unknown) => void)[] = [];
    ws.on('message', (d) => {
      const m = JSON.parse(String(d));
      const w = waiters.shift();
      if (w) w(m);
      else replies.push(m);
    });
    const ask = (m: unknown) =>
      new Promise<any>((ok) => {
        waiters.push(ok);
        ws.send(typeof m === 'string' ? m : JSON.stringify(m));
      });
    const reset = await ask({ type: 'reset', data: { episode_id: 'ep-1' } });
    expect(reset.type).toBe('observation');
    const id = reset.data.observation.task_id as string;
    const step = await ask({ type: 'step', data: { completion: reference(id) } });
    expect(step).toMatchObject({ type: 'observation', data: { reward: 1, done: true } });
    expect(await ask({ type: 'state' })).toEqual({
      type: 'state',
      data: { episode_id: 'ep-1', step_count: 1, task_id: id },
    });
    expect((await ask('{oops')).data.code).toBe('INVALID_JSON');
    expect((await ask({ type: 'jump' })).data.code).toBe('UNKNOWN_TYPE');
    expect((await ask({ type: 'step', data: { completion: 7 } })).data.code).toBe('VALIDATION_ERROR');
    ws.close();
  });

  it('shows the skill graph of the served run', async () => {
    const res = await call(server.url, '/v1/skills?view=mastery');
    expect(res.status).toBe(200);
    expect(res.json.rows.map((r: { skillId: string }) => r.skillId)).toContain('logic.and');
    expect((await call(server.url, '/v1/skills?view=sideways')).status).toBe(400);
    const metrics = await fetch(server.url + '/metrics').then((r) => r.text());
    expect(metrics).toMatch(/^cogen_completions_scored_total \d+/m);
  });

  it('resumes with everything it acknowledged', async () => {
    const [t] = (await call(server.url, '/v1/sample', { n: 1 })).json.tasks as Sampled[];
    const keyed = {
      items: [
        { task_id: t!.id, completion: reference(t!.id) },
        { task_id: t!.id, completion: '```json\n"wrong"\n```' },
      ],
      idempotency_key: 'before-restart',
    };
    const first = await call(server.url, '/v1/score', keyed);
    const before = (await call(server.url, '/v1/stats')).json;
    // The key now holds this test's body: another body under it is refused, before and after the restart.
    const reused = () =>
      call(
        server.url,
        '/v1/score',
        { items: [{ task_id: 'x', completion: '1' }] },
        { 'idempotency-key': 'before-restart' },
      );
    expect(first.status).toBe(200);
    expect((await reused()).status).toBe(409);
    await server.close();
    server = await startServer(config(), {
      runsDir,
      preset: 'smoke',
      runId: 'served',
      resume: true,
      host: '127.0.0.1',
      port: 0,
      now: () => now,
    });
    const after = (await call(server.url, '/v1/stats')).json;
    expect(after).toEqual(before);
    expect((await reused()).status).toBe(409);
    const again = await call(server.url, '/v1/score', keyed);
    expect(again.json).toEqual({ ...first.json, replayed: true });
    expect((await call(server.url, '/v1/stats')).json).toEqual(before);
  });
});

describe('cogen serve on another address', () => {
  it('refuses to start without a token, and then demands it', async () => {
    const runsDir = tempDir('cogen-serve-auth-');
    await expect(startServer(config(), { runsDir, preset: 'smoke', host: '0.0.0.0', port: 0 })).rejects.toThrow(
      /COGEN_TOKEN/,
    );
    const server = await startServer(config(), {
      runsDir,
      preset: 'smoke',
      runId: 'auth',
      host: '127.0.0.1',
      port: 0,
      token: 's3cret-token',
    });
    try {
      expect((await call(server.url, '/health')).status).toBe(200);
      const denied = await call(server.url, '/v1/stats');
      expect(denied.status).toBe(401);
      expect(JSON.stringify(denied.json)).not.toContain('s3cret');
      expect((await call(server.url, '/v1/stats', undefined, { authorization: 'Bearer wrong' })).status).toBe(401);
      expect((await call(server.url, '/v1/stats', undefined, { authorization: 'Bearer s3cret-token' })).status).toBe(
        200,
      );
    } finally {
      await server.close();
    }
  });
});

describe('cogen serve when its run store fails', () => {
  it('acknowledges nothing it could not commit, stops, and resumes from the last commit', async () => {
    const runsDir = tempDir('cogen-serve-fail-');
    let server = await startServer(config(), { runsDir, preset: 'smoke', runId: 'fail', host: '127.0.0.1', port: 0 });
    try {
      const tasks = (await call(server.url, '/v1/sample', { n: 2 })).json.tasks as Sampled[];
      const ok = await call(server.url, '/v1/score', {
        items: [{ task_id: tasks[0]!.id, completion: '1' }],
        idempotency_key: 'a',
      });
      expect(ok.status).toBe(200);
      const before = (await call(server.url, '/v1/stats')).json;
      // Another writer holds the database past the store's busy timeout: the commit fails.
      const blocker = new Database(join(runsDir, 'fail', 'run.db'));
      blocker.exec('BEGIN IMMEDIATE');
      const failed = await call(server.url, '/v1/score', {
        items: [{ task_id: tasks[1]!.id, completion: '1' }],
        idempotency_key: 'b',
      });
      blocker.exec('ROLLBACK');
      blocker.close();
      expect(failed.status).toBe(503);
      expect(failed.json.error).toMatch(/--resume fail/);
      expect((await call(server.url, '/v1/sample', { n: 1 })).status).toBe(503);
      await server.close();
      server = await startServer(config(), {
        runsDir,
        preset: 'smoke',
        runId: 'fail',
        resume: true,
        host: '127.0.0.1',
        port: 0,
      });
      expect((await call(server.url, '/v1/stats')).json).toEqual(before);
      const retried = await call(server.url, '/v1/score', {
        items: [{ task_id: tasks[1]!.id, completion: '1' }],
        idempotency_key: 'b',
      });
      expect(retried.json.replayed).toBe(false);
      expect((await call(server.url, '/v1/stats')).json.completions).toBe(before.completions + 1);
    } finally {
      await server.close();
    }
  });
});

describe('cogen serve WebSocket sessions', () => {
  it('caps the sessions open at once, and admits again once one closes', async () => {
    const runsDir = tempDir('cogen-serve-ws-');
    const server = await startServer(config({ serve: { maxSessions: 1 } }), {
      runsDir,
      preset: 'smoke',
      runId: 'ws',
      host: '127.0.0.1',
      port: 0,
    });
    const open = async () => {
      const ws = new WebSocket(server.url.replace('http', 'ws') + '/ws');
      const first = new Promise<{ type: string; data: { code?: string } } | null>((ok) => {
        ws.once('message', (d) => ok(JSON.parse(String(d))));
        ws.once('close', () => ok(null));
      });
      await new Promise((ok, ko) => (ws.once('open', ok), ws.once('error', ko)));
      return { ws, first };
    };
    try {
      const a = await open();
      a.ws.send(JSON.stringify({ type: 'state' }));
      expect((await a.first)?.type).toBe('state');
      const b = await open();
      expect((await b.first)?.data.code).toBe('CAPACITY_REACHED');
      await new Promise((ok) => (b.ws.readyState === WebSocket.CLOSED ? ok(null) : b.ws.once('close', ok)));
      await new Promise((ok) => (a.ws.once('close', ok), a.ws.close()));
      // The server counts the first session out when its close arrives; a later one is admitted.
      let admitted = false;
      for (let i = 0; i < 50 && !admitted; i++) {
        const c = await open();
        c.ws.send(JSON.stringify({ type: 'state' }));
        admitted = (await c.first)?.type === 'state';
        c.ws.close();
      }
      expect(admitted).toBe(true);
    } finally {
      await server.close();
    }
  });
});
