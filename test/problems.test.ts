// Verified problems (docs/DESIGN.md, "Tasks"): validation of problem drafts (a verifier that
// accepts anything, a witness it rejects, nondeterminism, limits), hostile answers, bridged answers
// as text, the LLM proposer's problem proposals, exports, probes' trivial baselines and the server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeListChatModel } from '@langchain/core/utils/testing';
import { createRng } from '../core/rng.js';
import {
  isBridgedProblem,
  referenceAnswer,
  answerShape,
  type ProblemDraft,
  type ProblemTask,
  type Skill,
} from '../core/task.js';
import { createSandbox, problemAnswerText, verifyAnswer, verifyMany, type Sandbox } from '../sandbox/index.js';
import { generateTask, getFamily, getProblemFamily, materialise, mutate, renderNatural } from '../generators/index.js';
import { agentsConfigSchema, createProposerAgent, type ProposalRequest } from '../src/agents/index.js';
import { toRecord } from '../src/export.js';
import { canonical, trivialKeys } from '../src/run/testing.js';
import { loadPreset } from '../src/run/config.js';
import { startServer, type RunningServer } from '../src/server/index.js';
import { cogen, tempDir } from './helpers.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { servedTask } from '../src/server/types.js';
import { answerOf } from '../src/run/testing.js';

let sb: Sandbox;
beforeAll(async () => {
  sb = await createSandbox({ workers: 2 });
});
afterAll(async () => {
  await sb?.close();
});

/** "Find x with x * x = 49": many-answer-free but small; the verifier checks the square. */
const square = (over: Partial<ProblemDraft> = {}): ProblemDraft => ({
  type: 'problem',
  family: 'test',
  level: 0,
  skills: [],
  program: 'function f(answer, data) { return typeof answer === "number" && answer * answer === data.n ? 1 : 0; }',
  statement: 'Find a whole number x with x * x = 49.',
  data: { n: 49 },
  witness: 7,
  failures: [6, 8],
  ...over,
});

describe('materialise: problem drafts', () => {
  it('accepts a sound problem, with a budget, a stable id and the program verifier', async () => {
    const m = await materialise(sb, square());
    expect(m.ok, JSON.stringify(m)).toBe(true);
    if (!m.ok) return;
    const t = m.task as ProblemTask;
    expect(t).toMatchObject({
      type: 'problem',
      verifier: 'program',
      witness: 7,
      failures: [6, 8],
      proposer: 'generator',
      parent: null,
    });
    expect(t.budget).toBeGreaterThan(0);
    const again = await materialise(sb, square());
    expect(again.ok && again.task.id).toBe(t.id);
    const other = await materialise(
      sb,
      square({ statement: 'Find a whole number x with x * x = 64.', data: { n: 64 }, witness: 8, failures: [7] }),
    );
    expect(other.ok && other.task.id).not.toBe(t.id);
    const seen = new Set([t.id]);
    expect(await materialise(sb, square(), seen)).toMatchObject({ ok: false, reason: 'duplicate' });
  });

  it.each([
    [
      'a verifier that accepts anything',
      square({ program: 'function f(answer, data) { return 1; }' }),
      'unsound',
      /accepts failure 1/,
    ],
    ['a witness the verifier rejects', square({ witness: 5 }), 'unsound', /witness 0/],
    [
      'a score that is not a number',
      square({ program: 'function f(a, d) { return "yes"; }' }),
      'unsound',
      /not a score/,
    ],
    ['a score above 1', square({ program: 'function f(a, d) { return a === 7 ? 1 : 2; }' }), 'unsound', /not a score/],
    [
      'a verifier that throws',
      square({ program: 'function f(a, d) { if (a !== 7) throw new Error("no"); return 1; }' }),
      'error',
      /runtime-error/,
    ],
    [
      'a verifier with state between calls',
      square({ program: 'var k = 0; function f(a, d) { k++; return k === 1 ? 1 : 0; }', failures: [6] }),
      'nondeterministic',
      /./,
    ],
    ['a verifier that never ends', square({ program: 'function f(a, d) { for (;;) {} }' }), 'timeout', /./],
    ['no failures at all', square({ failures: [] }), 'invalid', /near-miss failures/],
    ['an empty statement', square({ statement: ' ' }), 'invalid', /statement/],
    ['data that is not JSON-like', square({ data: { n: Number.NaN } }), 'invalid', /JSON-like/],
    ['no function f', square({ program: 'const g = 1;' }), 'invalid', /function f/],
  ])('rejects %s', async (_, draft, reason, detail) => {
    const m = await materialise(sb, draft);
    expect(m.ok).toBe(false);
    if (m.ok) return;
    expect(m.reason).toBe(reason);
    expect(m.detail).toMatch(detail);
  });

  it('a problem is not mutated: its draft is the problem itself, which dedup rejects', async () => {
    const task = await generateTask(sb, { family: 'sudoku', level: 0, type: 'problem', rng: createRng(1) });
    const d = mutate(createRng(2), task);
    expect(d).toMatchObject({ type: 'problem', parent: { id: task.id, op: 'change-input' }, proposer: 'mutation' });
    expect(await materialise(sb, d, new Set([task.id]))).toMatchObject({ ok: false, reason: 'duplicate' });
  });

  it('asks the right registry for a family and says which kind a family is', () => {
    expect(() => getFamily('sudoku')).toThrow(/problem family/);
    expect(() => getProblemFamily('arith')).toThrow(/not problems/);
    expect(() => getProblemFamily('nope')).toThrow(/unknown task family 'nope'/);
  });
});

describe('verification of problem answers', () => {
  let task: ProblemTask;
  beforeAll(async () => {
    task = (await generateTask(sb, {
      family: 'subset-sum',
      level: 1,
      type: 'problem',
      rng: createRng(7),
    })) as ProblemTask;
  });

  it('scores the witness 1, another valid answer 1, and near misses 0 with a reason', async () => {
    expect((await verifyAnswer(sb, task, referenceAnswer(task))).reward).toBe(1);
    // Any subset with the right sum is right: the witness in another order is another answer.
    expect((await verifyAnswer(sb, task, JSON.stringify([...(task.witness as number[])].reverse()))).reward).toBe(1);
    for (const f of task.failures) {
      const v = await verifyAnswer(sb, task, JSON.stringify(f));
      expect(v.reward).toBe(0);
      expect(v.reason).toMatch(/^wrong/);
    }
  });

  it('gives hostile answers 0 with a reason and nothing else', async () => {
    const hostile = [
      'not json at all',
      '',
      '"' + 'x'.repeat(1_000_000) + '"',
      JSON.stringify(Array.from({ length: 100_000 }, (_, i) => i)),
      '['.repeat(5000) + ']'.repeat(5000),
      '{"__proto__": {"polluted": 1}, "length": 3}',
      '{"__proto__": [0, 1]}',
      'null',
      'true',
      '"[0, 1]"',
      '1e999',
      '{"constructor": {"prototype": {"x": 1}}}',
    ];
    const verdicts = await verifyMany(
      sb,
      hostile.map((answer) => ({ task, answer })),
    );
    verdicts.forEach((v, i) => {
      expect(v.reward, hostile[i]!.slice(0, 40)).toBe(0);
      expect(v.reason, hostile[i]!.slice(0, 40)).toBeTruthy();
    });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // The task still verifies afterwards: nothing leaked into its context.
    expect((await verifyAnswer(sb, task, referenceAnswer(task))).reward).toBe(1);
  });

  it('clamps a verifier score into [0, 1] and turns a non-number into 0 with a reason', async () => {
    const base = { ...task, budget: 100_000 };
    const half = {
      ...base,
      program: 'function f(a, d) { return a === 1 ? 1.5 : a === 2 ? 0.5 : a === 3 ? -2 : "x"; }',
    };
    const [a, b, c, d] = await verifyMany(
      sb,
      ['1', '2', '3', '4'].map((answer) => ({ task: half, answer })),
    );
    expect(a!.reward).toBe(1);
    expect(b).toMatchObject({ reward: 0.5, reason: expect.stringMatching(/below 1/) });
    expect(c!.reward).toBe(0);
    expect(d).toMatchObject({ reward: 0, reason: expect.stringMatching(/not a score/) });
  });

  it('treats a bridged problem as text: its answer shape, reference, and both ways of writing an answer', async () => {
    const bridged: ProblemTask = { ...task, verifier: 'reasoning-gym:basic_arithmetic', witness: '42', program: '' };
    expect(isBridgedProblem(bridged)).toBe(true);
    expect(answerShape(bridged)).toBe('str');
    expect(referenceAnswer(bridged)).toBe('42');
    expect(problemAnswerText('  42 ')).toBe('42');
    expect(problemAnswerText('"42"')).toBe('42');
    expect(problemAnswerText('"unterminated')).toBe('"unterminated');
    expect((await verifyAnswer(sb, bridged, '42')).reason).toMatch(/bridge/);
    expect(renderNatural(bridged)).toContain('answer text only');
  });
});

describe('the LLM proposer proposes verified problems', () => {
  const skills: Skill[] = [
    { id: 'test.square', family: 'test', name: 'squares', description: 'x * x', requires: [], level: 0 },
  ];
  const req: ProposalRequest = { family: 'test', level: 0, type: 'problem', skills, references: [], seed: 1 };
  // The model is passed in (a LangChain fake); the script path only satisfies the scripted provider's schema.
  const cfg = () =>
    agentsConfigSchema.parse({
      proposer: {
        share: 1,
        provider: 'scripted',
        scriptPath: 'unused.json',
        model: 'scripted-model',
        backoffMs: 1,
        timeoutMs: 5_000,
      },
    }).proposer;
  const answer = (draft: ProblemDraft): string =>
    'Here is one.\n```json\n' +
    JSON.stringify({
      statement: draft.statement,
      data: draft.data,
      program: draft.program,
      witness: draft.witness,
      failures: draft.failures,
    }) +
    '\n```';

  it('asks for statement, data, verifier, witness and failures, and the sandbox accepts a sound one', async () => {
    const agent = createProposerAgent(cfg(), {
      log: () => {},
      model: new FakeListChatModel({ responses: [answer(square())] }),
    })!;
    const out = await agent.propose(req);
    expect(out.prompt).toMatch(/VERIFIED PROBLEM/);
    expect(out.prompt).toMatch(/"witness"/);
    expect(out.prompt).toMatch(/"failures"/);
    expect(out.draft).toMatchObject({
      type: 'problem',
      family: 'test',
      skills: ['test.square'],
      witness: 7,
      failures: [6, 8],
      proposer: 'llm:scripted-model',
    });
    const m = await materialise(sb, out.draft!);
    expect(m.ok && m.task).toMatchObject({ type: 'problem', proposer: 'llm:scripted-model' });
  });

  it('the sandbox rejects a proposal whose verifier accepts anything, or whose witness fails', async () => {
    const lax = square({ program: 'function f(answer, data) { return 1; }' });
    const wrong = square({ witness: 8, failures: [6, 7] });
    const agent = createProposerAgent(cfg(), {
      log: () => {},
      model: new FakeListChatModel({ responses: [answer(lax), answer(wrong)] }),
    })!;
    for (const reason of ['unsound', 'unsound']) {
      const out = await agent.propose(req);
      expect(out.draft).not.toBeNull();
      expect(await materialise(sb, out.draft!)).toMatchObject({ ok: false, reason });
    }
  });

  it('rejects a proposal without failures at the schema, before the sandbox', async () => {
    const raw =
      '```json\n' +
      JSON.stringify({ statement: 's', data: 1, program: 'function f(a, d) { return 1; }', witness: 1, failures: [] }) +
      '\n```';
    const agent = createProposerAgent(cfg(), { log: () => {}, model: new FakeListChatModel({ responses: [raw] }) })!;
    const out = await agent.propose(req);
    expect(out).toMatchObject({ draft: null, rejection: 'schema' });
    expect(out.detail).toMatch(/failures/);
  });
});

describe('exports and probes', () => {
  it('exports a problem with its statement, data, verifier, witness and failures, and the natural prompt', async () => {
    const task = await generateTask(sb, { family: 'maze', level: 1, type: 'problem', rng: createRng(3) });
    const r = toRecord({
      task,
      step: 1,
      compact: '',
      natural: renderNatural(task),
      attempts: 4,
      solved: 1,
    }) as unknown as Record<string, unknown>;
    expect(r).toMatchObject({
      type: 'problem',
      family: 'maze',
      answer: referenceAnswer(task),
      prompt: renderNatural(task),
      solveRate: 0.25,
    });
    expect(r).toMatchObject({
      statement: (task as ProblemTask).statement,
      data: (task as ProblemTask).data,
      witness: (task as ProblemTask).witness,
      verifier: 'program',
    });
    expect((r.failures as unknown[]).length).toBeGreaterThanOrEqual(2);
  });

  it("trivial baselines: a group's constant witnesses and plain values, scored by the verifiers", async () => {
    const rng = createRng(5);
    const tasks = [];
    for (let i = 0; i < 6; i++)
      tasks.push(await generateTask(sb, { family: 'mod-inverse', level: 0, type: 'problem', rng }));
    const keys = await trivialKeys(sb, tasks);
    tasks.forEach((t, i) => {
      // Each task's own witness is one of its group's constants, so a constant policy solves it.
      expect(keys[i]).toContain(`problem/0/int const:${canonical((t as ProblemTask).witness)}`);
      for (const k of keys[i]!) expect(k.startsWith('problem/0/int const:')).toBe(true);
    });
  });
});

describe('cogen serve with problem families', () => {
  let server: RunningServer;
  beforeAll(async () => {
    const config = loadPreset('smoke', {
      families: ['bezout', 'palindrome'],
      types: ['problem'],
      probes: { every: 2, perArm: 2 },
    });
    server = await startServer(config, {
      runsDir: tempDir('cogen-serve-problems-'),
      preset: 'smoke',
      runId: 'served-problems',
      host: '127.0.0.1',
      port: 0,
    });
  });
  afterAll(async () => {
    await server?.close();
  });
  const post = async (path: string, body: unknown) => {
    const res = await fetch(server.url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as any };
  };

  it('samples problems as chat prompts (the natural rendering) and verifies them statelessly', async () => {
    const { status, json } = await post('/v1/sample', { n: 4 });
    expect(status).toBe(200);
    for (const t of json.tasks) {
      expect(t.type).toBe('problem');
      expect(t.answer_kind).toBe('literal');
      expect(t.prompt[1].content).toMatch(/Task type: problem \((bezout|palindrome)\)/);
    }
    const task = await generateTask(sb, { family: 'bezout', level: 0, type: 'problem', rng: createRng(9) });
    const right = await post('/v1/verify', { task, completion: `I think\nANSWER: ${referenceAnswer(task)}` });
    expect(right.json).toMatchObject({ reward: 1, reason: null });
    const wrong = await post('/v1/verify', {
      task: JSON.stringify(task),
      completion: `ANSWER: ${JSON.stringify((task as ProblemTask).failures[0])}`,
    });
    expect(wrong.json.reward).toBe(0);
    expect(wrong.json.reason).toMatch(/wrong/);
  });
});

describe('the CLI with problem families', () => {
  it('lists them in the taxonomy and runs a preset of problems with the built-in solver', () => {
    const tax = cogen(['skills', '--taxonomy']);
    expect(tax.code, tax.stderr).toBe(0);
    expect(tax.stdout).toMatch(/sudoku\s+0-55\s+3\s+problem \(constraints\)/);
    const dir = tempDir('cogen-problems-run-');
    const preset = join(dir, 'problems.yaml');
    writeFileSync(
      preset,
      [
        'seed: 2',
        'steps: 2',
        'batch: 4',
        'group: 2',
        'families: [sudoku, bezout, arith]',
        'maxLevel: 1',
        'types: [deduction, problem]',
        'probes: { every: 2, perArm: 2 }',
        'checkpointEvery: 2',
      ].join('\n'),
    );
    const run = cogen([
      'run',
      '--preset',
      preset,
      '--backend',
      'wasm',
      '--runs-dir',
      join(dir, 'runs'),
      '--run-id',
      'p',
      '--no-progress',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/run p finished: 2 steps/);
    const out = join(dir, 'tasks.jsonl');
    const exp = cogen(['export', '--run', 'p', '--runs-dir', join(dir, 'runs'), '--out', out]);
    expect(exp.code, exp.stderr).toBe(0);
    const records = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; witness?: unknown; family: string });
    expect(new Set(records.map((r) => r.type))).toEqual(new Set(['deduction', 'problem']));
    for (const r of records) if (r.type === 'problem') expect(['sudoku', 'bezout']).toContain(r.family);
  }, 240_000);
});

describe('a bridged problem served to a trainer', () => {
  const bridged: ProblemTask = {
    id: 'b1',
    type: 'problem',
    family: 'rg.countdown',
    level: 0,
    skills: ['rg.countdown.solve'],
    program: '',
    hash: 'h',
    parent: null,
    proposer: 'reasoning-gym',
    statement: 'Using 3, 4 and 5 once each, make 23.',
    data: { dataset: 'countdown' },
    witness: '3*5+4*2',
    failures: [''],
    verifier: 'reasoning-gym:countdown',
  };
  it('asks for the answer as text on an ANSWER line, and takes it from there', () => {
    const served = servedTask(bridged);
    expect(served.prompt[0]!.content).toMatch(/answer is text.*ANSWER: <answer>/);
    expect(served.prompt[0]!.content).not.toMatch(/JSON literal/);
    expect(answerOf('Let me see: 3*5 = 15.\nANSWER: 3*5+4*2', bridged)).toBe('3*5+4*2');
  });
  it('keeps the JSON-literal instructions for a native problem', () => {
    const native: ProblemTask = { ...bridged, family: 'bezout', verifier: 'program', witness: [1, -1] };
    expect(servedTask(native).prompt[0]!.content).toMatch(/JSON literal/);
  });
});
