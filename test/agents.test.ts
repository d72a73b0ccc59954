// LLM agents (docs/agents.md) against LangChain's own scripted chat models: no network, no
// timing asserts.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FakeListChatModel, FakeStreamingChatModel } from '@langchain/core/utils/testing';
import { AIMessage } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import { ChatOllama } from '@langchain/ollama';
import { extractAnswer } from '../sandbox/index.js';
import type { ChatResult } from '@langchain/core/outputs';
import {
  agentsConfigSchema,
  buildChatModel,
  createChatClient,
  createLlmPolicy,
  createProposerAgent,
  estimateTokens,
  extractJson,
  loadScript,
  parseProposal,
  passAtK,
  passAtKGroup,
  REJECTION_REASONS,
  learnabilityReward,
  toProposalRecord,
  ScriptedChatModel,
  chatMessages,
  type ProposalRequest,
  type ProposerConfig,
  type LlmSolverConfig,
} from '../src/agents/index.js';
import type { Skill, Task, TaskDraft, TaskType } from '../core/task.js';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'llm-proposals.json');

const proposerCfg = (over: Partial<ProposerConfig> = {}): ProposerConfig =>
  agentsConfigSchema.parse({
    proposer: {
      share: 0.5,
      provider: 'scripted',
      scriptPath: FIXTURE,
      model: 'scripted-model',
      backoffMs: 1,
      timeoutMs: 5_000,
      ...over,
    },
  }).proposer;
const solverCfg = (over: Partial<LlmSolverConfig> = {}): LlmSolverConfig =>
  agentsConfigSchema.parse({
    solver: {
      enabled: true,
      provider: 'scripted',
      scriptPath: FIXTURE,
      model: 'scripted-model',
      backoffMs: 1,
      timeoutMs: 5_000,
      ...over,
    },
  }).solver;

const skills: Skill[] = [
  { id: 'arith.add', family: 'arith', name: 'integer addition', description: 'a + b', requires: [], level: 0 },
  { id: 'arith.mul', family: 'arith', name: 'multiplication', description: 'a * b', requires: ['arith.add'], level: 1 },
];

function refTask(i: number, type: TaskType = 'deduction', family = 'arith'): Task {
  const base = {
    id: `t${i}`,
    family,
    level: 1,
    skills: ['arith.add'],
    program: `function f(x) { return x + ${i}; }`,
    hash: `h${i}`,
    parent: null,
    proposer: 'generator',
  };
  if (type === 'induction')
    return {
      ...base,
      type,
      visible: [{ input: [1], output: 1 + i }],
      hidden: [{ input: [2], output: 2 + i }],
      message: `add ${i}`,
    };
  return { ...base, type: type as 'deduction' | 'abduction', input: [3], output: 3 + i };
}

const req = (type: TaskType, over: Partial<ProposalRequest> = {}): ProposalRequest => ({
  family: 'arith',
  level: 2,
  type,
  skills,
  references: [refTask(1), refTask(2, 'abduction'), refTask(3, 'induction')],
  seed: 7,
  ...over,
});

const fenced = (o: unknown) => '```json\n' + JSON.stringify(o) + '\n```';

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

describe('config', () => {
  it('defaults everything and is off by default', () => {
    const cfg = agentsConfigSchema.parse({});
    expect(cfg.proposer.share).toBe(0);
    expect(cfg.proposer.k).toBe(6);
    expect(cfg.solver.enabled).toBe(false);
    expect(createProposerAgent(cfg.proposer, { log: () => {} })).toBeNull();
  });

  it('refuses API keys in configuration and names where they belong', () => {
    const res = agentsConfigSchema.safeParse({ proposer: { share: 0.5, apiKey: 'sk-nope' } });
    expect(res.success).toBe(false);
    expect(JSON.stringify(res.error?.issues)).toMatch(/COGEN_LLM_API_KEY/);
    expect(JSON.stringify(res.error?.issues)).not.toMatch(/sk-nope/);
  });

  it('needs a script for the scripted provider, and an endpoint or key for openai', () => {
    expect(agentsConfigSchema.safeParse({ solver: { enabled: true, provider: 'scripted' } }).success).toBe(false);
    const cfg = agentsConfigSchema.parse({ proposer: { share: 1, provider: 'openai' } }).proposer;
    expect(() => buildChatModel(cfg, { env: {} })).toThrow(/OPENAI_API_KEY/);
    // A local OpenAI-compatible server needs no key; a plain local Ollama needs neither key nor URL.
    const local = buildChatModel({ ...cfg, baseUrl: 'http://127.0.0.1:8080/v1' }, { env: {} });
    expect(local).toBeInstanceOf(ChatOpenAI);
    expect(local).toMatchObject({ model: 'gpt-4o-mini', clientConfig: { baseURL: 'http://127.0.0.1:8080/v1' } });
    const ollama = buildChatModel({ ...cfg, provider: 'ollama' }, { env: {} });
    expect(ollama).toBeInstanceOf(ChatOllama);
    expect(ollama).toMatchObject({ model: 'gpt-4o-mini', baseUrl: 'http://127.0.0.1:11434' });
  });
});

describe('proposer: conditioned on solve rates (the frontier)', () => {
  it('shows each reference with how often the learner solves it, and asks for a harder variant of the parent first', async () => {
    const model = new FakeListChatModel({
      responses: [fenced({ program: 'function f(x) { return x * 3 + 7; }', input: [4] })],
    });
    const agent = createProposerAgent(proposerCfg({ k: 2 }), { log: () => {}, model })!;
    const parent = refTask(9);
    const rates: Record<string, number> = { t9: 0.75, t1: 0.25 };
    const out = await agent.propose(
      req('deduction', {
        references: [refTask(1), refTask(2, 'abduction'), parent],
        rateOf: (id) => rates[id],
        variant: { parent, direction: 'harder' },
      }),
    );
    expect(out.prompt).toMatch(
      /### Reference 1 — deduction, family arith, level 1, skills arith.add; the learner solves it in 75% of its attempts\n```javascript\nfunction f\(x\) \{ return x \+ 9; \}/,
    );
    expect(out.prompt).toMatch(
      /Reference 2 — deduction, family arith, level 1, skills arith.add; the learner solves it in 25%/,
    );
    expect(out.prompt).not.toMatch(/Reference 3/); // k = 2: the parent and one other
    expect(out.prompt).toMatch(/variant of Reference 1, one step harder/);
    expect(out.prompt).toMatch(/aim for a task it would solve about half the time/);
    expect(out.draft?.program).toBe('function f(x) { return x * 3 + 7; }');
  });

  it('asks nothing of rates or variants where it is given none', async () => {
    const model = new FakeListChatModel({
      responses: [fenced({ program: 'function f(x) { return x; }', input: [1] })],
    });
    const agent = createProposerAgent(proposerCfg(), { log: () => {}, model })!;
    const out = await agent.propose(req('deduction'));
    expect(out.prompt).not.toMatch(/solves it in|variant of Reference|about half the time/);
  });
});

describe('proposer: valid proposals', () => {
  it('turns a deduction answer into a draft with the requested family, level and skills', async () => {
    const model = new FakeListChatModel({
      responses: ['Sure.\n' + fenced({ program: 'function f(x) { return x * 2 + 1; }', input: [5] })],
    });
    const agent = createProposerAgent(proposerCfg(), { log: () => {}, model })!;
    const out = await agent.propose(req('deduction'));
    expect(out.rejection).toBeUndefined();
    expect(out.draft).toEqual({
      type: 'deduction',
      family: 'arith',
      level: 2,
      skills: ['arith.add', 'arith.mul'],
      program: 'function f(x) { return x * 2 + 1; }',
      inputs: [[5]],
      parent: null,
      proposer: 'llm:scripted-model',
    });
    expect(out.raw).toContain('function f');
    expect(agent.counts().ok).toBe(1);
  });

  it('accepts an abduction answer as a bare object with a multi-line program', async () => {
    const raw = 'Here you go: {"program": "function f(a, b) {\n  return a - b;\n}", "input": [9, 4]} hope it helps';
    const agent = createProposerAgent(proposerCfg(), {
      log: () => {},
      model: new FakeListChatModel({ responses: [raw] }),
    })!;
    const out = await agent.propose(req('abduction'));
    expect(out.draft?.type).toBe('abduction');
    expect(out.draft?.program).toBe('function f(a, b) {\n  return a - b;\n}');
    expect((out.draft as TaskDraft | null)?.inputs).toEqual([[9, 4]]);
  });

  it('splits induction inputs into visible and hidden halves and keeps the message', async () => {
    const answer = {
      program: 'function f(s) { return s.length; }',
      inputs: [['a'], ['bb'], ['ccc'], [''], ['xyz1'], ['q']],
      message: 'Measure the string.',
    };
    const agent = createProposerAgent(proposerCfg(), {
      log: () => {},
      model: new FakeListChatModel({ responses: [fenced(answer)] }),
    })!;
    const out = await agent.propose(req('induction'));
    expect(out.draft).toMatchObject({
      type: 'induction',
      inputs: answer.inputs,
      visibleCount: 3,
      message: 'Measure the string.',
    });
  });

  it('builds one prompt per task type with K references, the target and the sandbox rules', async () => {
    const refs = Array.from({ length: 10 }, (_, i) =>
      refTask(100 + i, i % 2 ? 'induction' : 'deduction', i < 5 ? 'arith' : 'logic'),
    );
    const prompts: Record<string, string> = {};
    for (const type of ['deduction', 'abduction', 'induction'] as const) {
      const agent = createProposerAgent(proposerCfg({ k: 4 }), {
        log: () => {},
        model: new FakeListChatModel({ responses: ['no'] }),
      })!;
      prompts[type] = (await agent.propose(req(type, { references: refs }))).prompt;
    }
    expect(prompts.deduction).toMatch(/DEDUCTION/);
    expect(prompts.abduction).toMatch(/ABDUCTION/);
    expect(prompts.induction).toMatch(/INDUCTION/);
    expect(prompts.induction).toMatch(/"inputs"/);
    for (const p of Object.values(prompts)) {
      expect(p.match(/### Reference/g)).toHaveLength(4);
      expect(p).toMatch(/named `f`/);
      expect(p).toMatch(/No Math\.random/);
      expect(p).toMatch(/family "arith", level 2/);
      expect(p).toContain('arith.mul');
      expect(p).toMatch(/```json/);
      // Same-family references come first.
      expect(p).not.toMatch(/family logic/);
    }
    // Same seed, same references.
    const again = createProposerAgent(proposerCfg({ k: 4 }), {
      log: () => {},
      model: new FakeListChatModel({ responses: ['no'] }),
    })!;
    expect((await again.propose(req('deduction', { references: refs }))).prompt).toBe(prompts.deduction);
  });
});

describe('proposer: rejections', () => {
  const run = async (raw: string, type: TaskType = 'deduction') => {
    const logs: string[] = [];
    const agent = createProposerAgent(proposerCfg(), {
      log: (l) => logs.push(l),
      model: new FakeListChatModel({ responses: [raw] }),
    })!;
    return { out: await agent.propose(req(type)), logs, agent };
  };

  it('rejects malformed JSON and prose as unparsable', async () => {
    for (const raw of [
      '```json\n{"program": "function f(x) { return x; }", "input": [1,, }\n```',
      'I cannot do that.',
      '```json\n[1, 2]\n```',
    ]) {
      const { out, logs, agent } = await run(raw);
      expect(out.draft).toBeNull();
      expect(out.rejection).toBe('unparsable');
      expect(out.raw).toBe(raw);
      expect(logs.join('\n')).toMatch(/unparsable/);
      expect(agent.counts().unparsable).toBe(1);
    }
  });

  it('rejects schema violations and says which field', async () => {
    const cases: [unknown, TaskType, RegExp][] = [
      [{ program: 'function f(x) { return x; }', input: 5 }, 'deduction', /input/],
      [{ program: 'const g = (x) => x;', input: [1] }, 'deduction', /function f/],
      [{ input: [1] }, 'abduction', /program/],
      [{ program: 'function f(x) { return x; }', input: [1] }, 'induction', /inputs/],
      [{ program: 'function f(x) { return x; }', inputs: [[1], [2]], message: 'm' }, 'induction', /at least 4/],
      [{ program: 'function f(x) { return x; }', input: [1, 2, 3, 4, 5, 6, 7] }, 'deduction', /at most 6/],
      [{ program: 'function f(x) { return x; }', inputs: [[1], [2], [3], [4]], message: '' }, 'induction', /message/],
    ];
    for (const [answer, type, detail] of cases) {
      const { out } = await run(fenced(answer), type);
      expect(out.rejection, JSON.stringify(answer)).toBe('schema');
      expect(out.detail).toMatch(detail);
      expect(out.draft).toBeNull();
    }
  });

  it('retries an endpoint that errors with exponential backoff, then reports unreachable', async () => {
    // p-retry waits with the global setTimeout: record its backoff waits (≥ 50 ms here) and run them at once.
    const delays: number[] = [];
    const realSetTimeout = globalThis.setTimeout;
    vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms?: number) => {
      if ((ms ?? 0) >= 50) delays.push(ms!);
      return realSetTimeout(fn, (ms ?? 0) >= 50 ? 0 : ms);
    }) as typeof setTimeout);
    vi.spyOn(Math, 'random').mockReturnValue(0.999); // the top of the jitter range
    const logs: string[] = [];
    const model = new FakeStreamingChatModel({ thrownErrorString: 'ECONNREFUSED 127.0.0.1:8080' });
    const agent = createProposerAgent(proposerCfg({ retries: 3, backoffMs: 100 }), {
      log: (l) => logs.push(l),
      model,
    })!;
    const out = await agent.propose(req('deduction'));
    expect(out.draft).toBeNull();
    expect(out.rejection).toBe('unreachable');
    expect(out.detail).toMatch(/ECONNREFUSED/);
    expect(out.raw).toBe('');
    expect(out.tokens.output).toBe(0);
    expect(out.tokens.estimated).toBe(true);
    expect(delays).toEqual([100, 200, 400]);
    expect(logs.filter((l) => /retrying/.test(l))).toHaveLength(3);
    expect(logs.some((l) => /gave up after 4 attempts \(unreachable: ECONNREFUSED/.test(l))).toBe(true);
    expect(agent.counts().unreachable).toBe(1);
    expect(agent.usage().failures).toBe(1);
  });

  it('waits between ½ and 1 × backoffMs · 2^i (jitter), capped at 30 s', async () => {
    const delays: number[] = [];
    const realSetTimeout = globalThis.setTimeout;
    vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms?: number) => {
      if ((ms ?? 0) >= 1000) delays.push(ms!);
      return realSetTimeout(fn, (ms ?? 0) >= 1000 ? 0 : ms);
    }) as typeof setTimeout);
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const model = new FakeStreamingChatModel({ thrownErrorString: '503' });
    const client = createChatClient(proposerCfg({ retries: 7, backoffMs: 2_000 }), { model });
    await expect(client.call(chatMessages('', 'x'))).rejects.toMatchObject({ kind: 'unreachable', attempts: 8 });
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
  });

  it('stops calling a dead endpoint for a while (circuit breaker) and says so', async () => {
    const logs: string[] = [];
    const model = new FakeStreamingChatModel({ thrownErrorString: 'connect ECONNREFUSED' });
    const agent = createProposerAgent(proposerCfg({ retries: 0 }), { log: (l) => logs.push(l), model })!;
    const details: string[] = [];
    for (let i = 0; i < 7; i++) details.push((await agent.propose(req('deduction'))).detail ?? '');
    expect(agent.usage().calls).toBe(4); // 3 failures, 3 skipped, 1 new try
    expect(details.slice(3, 6).every((d) => /not called/.test(d))).toBe(true);
    expect(agent.counts().unreachable).toBe(7);
    expect(logs.filter((l) => /generators propose the next/.test(l)).map((l) => /next (\d+)/.exec(l)![1])).toEqual([
      '3',
      '6',
    ]);
  });

  it('recovers when a retry succeeds', async () => {
    const model = new ScriptedChatModel([
      { error: '503' },
      fenced({ program: 'function f(x) { return -x; }', input: [2] }),
    ]);
    const agent = createProposerAgent(proposerCfg({ retries: 1 }), { log: () => {}, model })!;
    const out = await agent.propose(req('deduction'));
    expect(out.draft?.program).toBe('function f(x) { return -x; }');
  });

  it('gives up on a model that hangs: timeout', async () => {
    const model = new ScriptedChatModel([{ hang: true }]);
    const agent = createProposerAgent(proposerCfg({ timeoutMs: 30, retries: 1 }), { log: () => {}, model })!;
    const out = await agent.propose(req('deduction'));
    expect(out.rejection).toBe('timeout');
    expect(out.detail).toMatch(/30 ms/);
    expect(agent.counts().timeout).toBe(1);
  });

  it('also times out a LangChain fake that sleeps past the deadline', async () => {
    const model = new FakeListChatModel({ responses: ['late'], sleep: 400 });
    const agent = createProposerAgent(proposerCfg({ timeoutMs: 20, retries: 0 }), { log: () => {}, model })!;
    expect((await agent.propose(req('abduction'))).rejection).toBe('timeout');
  });

  it('exports every reason it can return', () => {
    expect([...REJECTION_REASONS].sort()).toEqual(['schema', 'timeout', 'unparsable', 'unreachable']);
  });
});

describe('model client', () => {
  it('counts tokens from usage metadata when given, else estimates chars/4 and says so', async () => {
    const model = new ScriptedChatModel([{ text: 'hello', usage: { input: 11, output: 3 } }, 'twelve chars']);
    const client = createChatClient(proposerCfg(), { model });
    const messages = chatMessages('system text', 'user text here');
    const a = await client.call(messages);
    expect(a.tokens).toEqual({ input: 11, output: 3, estimated: false });
    const b = await client.call(messages);
    expect(b.text).toBe('twelve chars');
    expect(b.tokens).toEqual({ input: estimateTokens('system text\nuser text here'), output: 3, estimated: true });
    expect(client.usage()).toMatchObject({
      calls: 2,
      failures: 0,
      inputTokens: 11 + 7,
      outputTokens: 6,
      estimatedCalls: 1,
    });
  });

  it('keeps at most `concurrency` calls in flight', async () => {
    let inFlight = 0;
    let peak = 0;
    class Counting extends FakeListChatModel {
      override async _generate(): Promise<ChatResult> {
        inFlight++;
        peak = Math.max(peak, inFlight);
        await new Promise((r) => setTimeout(r, 5));
        inFlight--;
        return { generations: [{ message: new AIMessage('ok'), text: 'ok' }] };
      }
    }
    const client = createChatClient(proposerCfg({ concurrency: 2 }), { model: new Counting({ responses: ['ok'] }) });
    const res = await Promise.all(Array.from({ length: 7 }, () => client.call(chatMessages('', 'x'))));
    expect(res.every((r) => r.text === 'ok')).toBe(true);
    expect(peak).toBe(2);
  });

  it('loads scripts per role', () => {
    expect(loadScript(FIXTURE, 'proposer').length).toBeGreaterThan(8);
    expect(loadScript(FIXTURE, 'solver').length).toBeGreaterThan(3);
  });
});

describe('the fixture replayed through the proposer', () => {
  it('yields valid drafts, unparsable and schema rejections, sandbox-bound programs, and unreachable', async () => {
    const agent = createProposerAgent(proposerCfg(), { log: () => {} })!; // built from scriptPath
    const types: TaskType[] = [
      'deduction',
      'abduction',
      'induction',
      'deduction',
      'deduction',
      'induction',
      'deduction',
      'abduction',
      'deduction',
      'deduction',
    ];
    const outs = [];
    for (const [i, type] of types.entries()) outs.push(await agent.propose(req(type, { seed: i })));
    expect(outs.map((o) => o.rejection ?? 'ok')).toEqual([
      'ok',
      'ok',
      'ok',
      'unparsable',
      'schema',
      'ok',
      'ok',
      'ok',
      'unreachable',
      'unparsable',
    ]);
    expect(outs[0]!.tokens).toEqual({ input: 812, output: 96, estimated: false });
    expect(outs[2]!.draft).toMatchObject({ type: 'induction', visibleCount: 3 });
    expect(outs[5]!.draft?.program).toMatch(/while \(true\)/);
    // Cycles: the next one is the first entry again (a duplicate for materialise to reject).
    expect((await agent.propose(req('deduction'))).draft?.program).toBe(outs[0]!.draft?.program);
  });
});

describe('solver: answer extraction', () => {
  it.each([
    ['```json\n[1, 2]\n```', 'literal', '[1, 2]'],
    ['thinking...\n```\n42\n```', 'literal', '42'],
    ['Work: 3+4=7\nANSWER: 7', 'literal', '7'],
    ['**Answer:** `"abc"`', 'literal', '"abc"'],
    ['Final answer: [3]', 'literal', '[3]'],
    ['```javascript\nfunction f(x) { return x; }\n```\nANSWER: 5', 'literal', '5'],
    ['ANSWER: 1\nactually:\n```json\n2\n```', 'literal', '2'],
    ['No idea.', 'literal', ''],
    ['  [2, "x"]\n', 'literal', '[2, "x"]'],
    ['function f(a) { return a; }', 'program', 'function f(a) { return a; }'],
    ['(a, b) => a + b', 'program', '(a, b) => a + b'],
    ['It returns 5', 'literal', ''],
    ['I would write a loop.', 'program', ''],
    [
      '```json\n{"a":1}\n```\n```javascript\nfunction f(o) { return o.a; }\n```\nThat is all.',
      'program',
      'function f(o) { return o.a; }',
    ],
    [
      '```js\nfunction f(x) {\n  return x + 1;\n}\n```\n```json\n3\n```',
      'program',
      'function f(x) {\n  return x + 1;\n}',
    ],
    ['ANSWER:\nfunction f(x) { return 2 * x; }', 'program', 'function f(x) { return 2 * x; }'],
  ] as const)('%j (%s) → %j', (reply, kind, expected) => {
    expect(extractAnswer(reply, kind)).toBe(expected);
  });

  it('extractJson prefers fenced json and falls back to a bare object', () => {
    expect(extractJson('x ```json\n{"a": 1}\n``` y {"b": 2}')).toEqual({ ok: true, value: { a: 1 } });
    expect(extractJson('the object is {"b": "}{"} ok')).toEqual({ ok: true, value: { b: '}{' } });
    expect(extractJson('nothing').ok).toBe(false);
  });

  it('parseProposal is pure and names the proposer', () => {
    const r = parseProposal(
      fenced({ program: 'function f() { return 1; }', input: [] }),
      { family: 'logic', level: 0, type: 'deduction', skills: [] },
      'llm:m',
    );
    expect(r).toEqual({
      draft: {
        type: 'deduction',
        family: 'logic',
        level: 0,
        skills: [],
        program: 'function f() { return 1; }',
        inputs: [[]],
        parent: null,
        proposer: 'llm:m',
      },
    });
  });
});

describe('solver: the policy', () => {
  it('samples G answers per prompt, extracts them, and records tokens per call', async () => {
    const model = new ScriptedChatModel([
      '```json\n14\n```',
      'ANSWER: 7',
      { text: 'ANSWER: 3', usage: { input: 50, output: 4 } },
    ]);
    const policy = createLlmPolicy(solverCfg({ concurrency: 1 }), { log: () => {}, model });
    expect(policy.backend).toBe('llm:scripted-model');
    const rollout = await policy.sample(
      [
        { text: 'What is f(7)?', kind: 'literal' },
        { text: 'Find x.', kind: 'literal' },
      ],
      3,
    );
    expect(rollout.answers.map((g) => g.length)).toEqual([3, 3]);
    expect(rollout.answers.flat().sort()).toEqual(['14', '14', '3', '3', '7', '7']);
    const calls = policy.takeCalls();
    expect(calls).toHaveLength(6);
    expect(calls.filter((c) => !c.tokens.estimated).every((c) => c.tokens.input === 50 && c.tokens.output === 4)).toBe(
      true,
    );
    expect(calls.filter((c) => c.tokens.estimated).length).toBe(4);
    expect(policy.takeCalls()).toHaveLength(0);
    expect(rollout.replies.map((g) => g.length)).toEqual([3, 3]);
  });

  it('greedy asks once per prompt; failures score as empty answers', async () => {
    const logs: string[] = [];
    const model = new ScriptedChatModel(['```javascript\nfunction f(x) { return x * 2; }\n```', { error: 'boom' }]);
    const policy = createLlmPolicy(solverCfg({ retries: 0, concurrency: 1 }), { log: (l) => logs.push(l), model });
    const answers = await policy.greedy([
      { text: 'Write f.', kind: 'program' },
      { text: 'Write g.', kind: 'program' },
    ]);
    expect(answers).toEqual(['function f(x) { return x * 2; }', '']);
    expect(policy.takeCalls().map((c) => c.error)).toEqual([undefined, 'unreachable']);
    expect(logs.some((l) => /1 of 2 greedy calls failed/.test(l))).toBe(true);
  });

  it('trains nothing and saves only the model name', async () => {
    const policy = createLlmPolicy(solverCfg(), { log: () => {}, model: new FakeListChatModel({ responses: ['x'] }) });
    expect(
      await policy.update(
        {
          answers: [
            ['1', '2'],
            ['3', '4'],
          ],
          replies: [
            ['1', '2'],
            ['3', '4'],
          ],
        },
        [
          [1, 0],
          [0, 0],
        ],
      ),
    ).toEqual({ loss: 0, meanAbsAdvantage: 0, clipFraction: 0, kl: 0, entropy: 0, tokens: 0, groups: 0, lr: 0 });
    const dir = mkdtempSync(join(tmpdir(), 'cogen-llm-'));
    try {
      await policy.save(dir);
      expect(readdirSync(dir)).toEqual(['llm-policy.json']);
      expect(JSON.parse(readFileSync(join(dir, 'llm-policy.json'), 'utf8'))).toEqual({
        backend: 'llm:scripted-model',
        provider: 'scripted',
        model: 'scripted-model',
      });
      await policy.load(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    policy.dispose();
  });
});

describe('proposal records', () => {
  it('records prompt, raw output, outcome, tokens; learnability is 1 − p inside (0, 1)', async () => {
    const agent = createProposerAgent(proposerCfg(), {
      log: () => {},
      model: new FakeListChatModel({
        responses: [fenced({ program: 'function f(x) { return x; }', input: [1] }), 'nope'],
      }),
    })!;
    const r = req('deduction');
    const a = await agent.propose(r);
    const accepted = toProposalRecord(3, r, agent.label, a, { ok: true, task: { id: 'abc' } });
    expect(accepted).toMatchObject({
      step: 3,
      family: 'arith',
      level: 2,
      type: 'deduction',
      proposer: 'llm:scripted-model',
      outcome: 'accepted',
      taskId: 'abc',
      detail: null,
      learnability: null,
      tokensEstimated: true,
    });
    expect(accepted.prompt).toBe(a.prompt);
    expect(toProposalRecord(3, r, agent.label, a, { ok: false, reason: 'duplicate', detail: 'seen' })).toMatchObject({
      outcome: 'duplicate',
      detail: 'seen',
      taskId: null,
    });
    const b = await agent.propose(r);
    expect(toProposalRecord(4, r, agent.label, b)).toMatchObject({ outcome: 'unparsable', raw: 'nope', taskId: null });
    expect(learnabilityReward([1, 0, 0, 0])).toBe(0.75);
    expect(learnabilityReward([1, 1])).toBe(0);
    expect(learnabilityReward([0, 0.5])).toBe(0);
    expect(learnabilityReward([])).toBe(0);
  });
});

describe('pass@k', () => {
  it('matches the unbiased estimator 1 − C(n−c, k)/C(n, k)', () => {
    expect(passAtKGroup(5, 0, 1)).toBe(0);
    expect(passAtKGroup(5, 5, 3)).toBe(1);
    expect(passAtKGroup(5, 1, 1)).toBeCloseTo(0.2, 12);
    expect(passAtKGroup(5, 2, 2)).toBeCloseTo(1 - 3 / 10, 12);
    expect(passAtKGroup(10, 3, 5)).toBeCloseTo(1 - 21 / 252, 12);
    expect(passAtKGroup(8, 4, 5)).toBe(1); // n − c < k
    expect(passAtKGroup(4, 1, 10)).toBe(1); // k clamped to n
    expect(() => passAtKGroup(4, 5, 1)).toThrow(RangeError);
  });

  it('averages over groups; a sample passes at reward 1', () => {
    expect(
      passAtK(
        [
          [1, 0, 0, 0, 0],
          [0, 0, 0, 0, 0],
        ],
        1,
      ),
    ).toBeCloseTo(0.1, 12);
    expect(
      passAtK(
        [
          [0.9, 0.5],
          [1, 1],
        ],
        1,
      ),
    ).toBeCloseTo(0.5, 12);
    expect(passAtK([], 1)).toBe(0);
  });
});

describe('secrets', () => {
  const MARKER = 'sk-SECRET-MARKER-7f3a9c';

  it('never logs, returns, prompts or stores the API key', async () => {
    vi.stubEnv('OPENAI_API_KEY', MARKER);
    vi.stubEnv('COGEN_LLM_API_KEY', MARKER);
    const seen: string[] = [];
    const log = (l: string) => seen.push(l);

    // A real ChatOpenAI against a closed local port: the key is in the client, the call fails.
    const openai = createProposerAgent(
      proposerCfg({ provider: 'openai', baseUrl: 'http://127.0.0.1:9/v1', retries: 1, timeoutMs: 2_000 }),
      { log },
    )!;
    const o1 = await openai.propose(req('deduction'));
    expect(o1.rejection).toMatch(/unreachable|timeout/);
    seen.push(JSON.stringify(o1));

    // The same for Ollama (the key only goes into an Authorization header).
    const ollama = createProposerAgent(
      proposerCfg({ provider: 'ollama', baseUrl: 'http://127.0.0.1:9', retries: 0, timeoutMs: 2_000 }),
      { log },
    )!;
    seen.push(JSON.stringify(await ollama.propose(req('abduction'))));

    // A model that echoes the key in its answer and in its errors: redacted everywhere.
    const echo = new ScriptedChatModel([
      fenced({ program: `function f(x) { return "${MARKER}"; }`, input: [MARKER] }),
      { error: `401 invalid key ${MARKER}` },
      `not json ${MARKER}`,
    ]);
    const agent = createProposerAgent(proposerCfg({ retries: 0 }), { log, model: echo })!;
    for (const type of ['deduction', 'abduction', 'induction'] as const)
      seen.push(JSON.stringify(await agent.propose(req(type))));

    const policy = createLlmPolicy(solverCfg({ retries: 0 }), {
      log,
      model: new ScriptedChatModel([`ANSWER: "${MARKER}"`, { error: `bad ${MARKER}` }]),
    });
    seen.push(
      JSON.stringify(await policy.sample([{ text: 'q', kind: 'literal' }], 2)),
      JSON.stringify(policy.takeCalls()),
    );
    const dir = mkdtempSync(join(tmpdir(), 'cogen-llm-'));
    try {
      await policy.save(dir);
      seen.push(readFileSync(join(dir, 'llm-policy.json'), 'utf8'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }

    const all = seen.join('\n');
    expect(all).toContain('[redacted]');
    expect(all).not.toContain(MARKER);
    expect(all).not.toContain('SECRET-MARKER');
  });
});
