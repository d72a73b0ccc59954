// `cogen serve` in the solver's view (src/server/served-view.ts; the rule is src/solver/served-view.ts):
// a real server on a loopback port serves each task's prompt as the solver's tokens, scores an answer
// written in them as the same answer in text, and serves the vocabulary as a tokenizer.json.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { loadPreset } from '../src/run/config.js';
import { startServer, type RunningServer } from '../src/server/index.js';
import { RunStore } from '../src/run/testing.js';
import { answerShape, referenceAnswer, type Task } from '../core/task.js';
import { renderCompact } from '../generators/index.js';
import { viewAnswer } from '../src/solver/index.js';
import { BOS, encode, SEP, splitView, withSep } from '../src/solver/testing.js';
import { tempDir } from './helpers.js';

interface CompactSampled {
  id: string;
  prompt: string;
  prompt_ids: number[];
  answer_shape: string;
  expires_at: string;
}

async function call(url: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url + path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as any };
}

describe("cogen serve in the solver's view", () => {
  let runsDir: string;
  let server: RunningServer;
  const stored = (id: string): Task => {
    const store = RunStore.open(join(runsDir, 'viewed'), { create: false });
    try {
      return store.task(id)!;
    } finally {
      store.close();
    }
  };
  /** A task's reference answer written in the view, <eos> last. */
  const written = (id: string): string => {
    const task = stored(id);
    return viewAnswer(answerShape(task), referenceAnswer(task));
  };

  beforeAll(async () => {
    runsDir = tempDir('cogen-serve-view-');
    server = await startServer(loadPreset('smoke', { probes: { every: 2 } }), {
      runsDir,
      preset: 'smoke',
      runId: 'viewed',
      host: '127.0.0.1',
      port: 0,
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("samples tasks whose prompt is the solver's tokens of the compact rendering, <sep> before the last, and states the rule", async () => {
    const { status, json } = await call(server.url, '/v1/sample', { n: 4, view: 'compact' });
    expect(status).toBe(200);
    expect(json.view).toEqual({
      name: 'words-signed',
      separator: ' ',
      space: '␣',
      prompt_sep: '<sep>',
      prompt_sep_at: 'before the last token',
      answer_end: '<eos>',
    });
    for (const t of json.tasks as CompactSampled[]) {
      const ids = [BOS, ...withSep(encode(renderCompact(stored(t.id))))];
      expect(t.prompt_ids).toEqual(ids);
      expect(splitView(t.prompt)).toEqual(ids.slice(1));
      expect(t.expires_at).toMatch(/Z$/);
    }
  });

  it('keeps the default view as it was: chat messages, no view field', async () => {
    const { json } = await call(server.url, '/v1/sample', { n: 1 });
    expect(json).not.toHaveProperty('view');
    expect(json.tasks[0].prompt.map((m: { role: string }) => m.role)).toEqual(['system', 'user']);
    expect(json.tasks[0]).not.toHaveProperty('prompt_ids');
  });

  it('scores an answer written in the view as the same answer in text', async () => {
    const [t] = (await call(server.url, '/v1/sample', { n: 1, view: 'compact' })).json.tasks as CompactSampled[];
    const right = written(t!.id);
    const res = await call(server.url, '/v1/score', {
      view: 'compact',
      items: [
        { task_id: t!.id, completion: right },
        { task_id: t!.id, completion: `${right} 7 7 7` }, // what follows <eos> is dropped
        { task_id: t!.id, completion: '" n o p e " <eos>' },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.json.results.map((r: { reward: number }) => r.reward)).toEqual([1, 1, 0]);
    expect(res.json.results[0].answer).toBe(referenceAnswer(stored(t!.id)));
  });

  it('refuses a completion with a word that is no token in one line naming the item, and acknowledges nothing', async () => {
    const [t] = (await call(server.url, '/v1/sample', { n: 1, view: 'compact' })).json.tasks as CompactSampled[];
    const before = (await call(server.url, '/v1/stats')).json;
    const res = await call(server.url, '/v1/score', {
      view: 'compact',
      items: [
        { task_id: t!.id, completion: 'true' },
        { task_id: t!.id, completion: '[1, 2]' },
      ],
    });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatch(/^items\.1\.completion: "\[1," is not a token of the solver's view words-signed/);
    expect(res.json.error).not.toContain('\n');
    expect((await call(server.url, '/v1/stats')).json.completions).toBe(before.completions);
    expect((await call(server.url, '/v1/sample', { n: 1, view: 'pixels' })).status).toBe(400);
  });

  it('replays a retried request and refuses its key with the same items in another view', async () => {
    const [t] = (await call(server.url, '/v1/sample', { n: 1, view: 'compact' })).json.tasks as CompactSampled[];
    const body = {
      view: 'compact',
      items: [{ task_id: t!.id, completion: written(t!.id) }],
      idempotency_key: 'view-retry',
    };
    const a = await call(server.url, '/v1/score', body);
    const b = await call(server.url, '/v1/score', body);
    expect([a.status, b.status, a.json.replayed, b.json.replayed]).toEqual([200, 200, false, true]);
    expect(b.json.results).toEqual(a.json.results);
    expect((await call(server.url, '/v1/score', { ...body, view: 'chat' })).status).toBe(409);
  });

  it('serves the probes, takes their report and verifies statelessly in the view', async () => {
    const probes = (await call(server.url, '/v1/probes?view=compact')).json;
    expect(probes.view.name).toBe('words-signed');
    expect(probes.tasks.length).toBeGreaterThan(0);
    for (const t of probes.tasks as CompactSampled[]) expect(splitView(t.prompt)).toEqual(t.prompt_ids.slice(1));
    expect((await call(server.url, '/v1/probes?view=nope')).status).toBe(400);
    const bad = await call(server.url, '/v1/probes', {
      round: probes.round,
      view: 'compact',
      answers: [{ task_id: probes.tasks[0].id, completion: 'xyz' }],
    });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatch(/^answers\.0\.completion: /);
    const [t] = (await call(server.url, '/v1/sample', { n: 1, view: 'compact' })).json.tasks as CompactSampled[];
    const task = stored(t!.id);
    const ok = await call(server.url, '/v1/verify', { task, view: 'compact', completion: written(t!.id) });
    expect([ok.status, ok.json.reward, ok.json.answer]).toEqual([200, 1, referenceAnswer(task)]);
    expect((await call(server.url, '/v1/verify', { task, view: 'compact', completion: '1,' })).status).toBe(400);
  });

  it("serves the solver's vocabulary as a tokenizer.json, and documents the view and the route", async () => {
    const { status, json } = await call(server.url, '/v1/tokenizer');
    expect(status).toBe(200);
    expect(json.model.type).toBe('WordLevel');
    expect(json.model.vocab['<sep>']).toBe(SEP);
    expect(json.post_processor.single[0]).toEqual({ SpecialToken: { id: '<bos>', type_id: 0 } });
    const doc = (await call(server.url, '/openapi.json')).json;
    expect(doc.paths['/v1/tokenizer'].get).toBeDefined();
    expect(doc.components.schemas.SampleRequest.properties.view.enum).toEqual(['chat', 'compact']);
    // its own object: a ServedTask extended would require a chat prompt too (Schemathesis checks responses against it)
    expect(doc.components.schemas.CompactTask.properties.prompt.type).toBe('string');
    expect(doc.components.schemas.CompactTask.allOf).toBeUndefined();
  });
});
