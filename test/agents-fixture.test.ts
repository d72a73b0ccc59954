// The scripted fixture replayed through the LLM proposer, then through materialise in the real
// sandbox, as the loop does; and the LLM solver answering natural renderings, verified there.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  agentsConfigSchema,
  createLlmPolicy,
  createProposerAgent,
  passAtK,
  ScriptedChatModel,
} from '../src/agents/index.js';
import { materialise, renderNatural } from '../generators/index.js';
import { createSandbox, verifyAnswer, type Sandbox } from '../sandbox/index.js';
import type { Task, TaskType } from '../core/task.js';

const FIXTURE = join(import.meta.dirname, 'fixtures', 'llm-proposals.json');

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await createSandbox({ workers: 1 });
});
afterAll(async () => {
  await sandbox?.close();
});

describe('LLM proposals through materialise', () => {
  it('lands valid proposals as tasks and counts sandbox rejections by reason', async () => {
    const cfg = agentsConfigSchema.parse({
      proposer: { share: 0.5, provider: 'scripted', scriptPath: FIXTURE, model: 'scripted-model', backoffMs: 1 },
    }).proposer;
    const agent = createProposerAgent(cfg, { log: () => {} })!;
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
    const seen = new Set<string>();
    const outcomes: string[] = [];
    const tasks: Task[] = [];
    for (const [i, type] of types.entries()) {
      const out = await agent.propose({ family: 'arith', level: 1, type, skills: [], references: tasks, seed: i });
      if (!out.draft) {
        outcomes.push(out.rejection!);
        continue;
      }
      const m = await materialise(sandbox, out.draft, seen);
      if (m.ok) {
        tasks.push(m.task);
        outcomes.push('ok');
      } else outcomes.push(m.reason);
    }
    expect(outcomes).toEqual([
      'ok',
      'ok',
      'ok',
      'unparsable',
      'schema',
      'timeout',
      'duplicate',
      'error',
      'unreachable',
      'unparsable',
    ]);
    expect(tasks.map((t) => t.proposer)).toEqual(['llm:scripted-model', 'llm:scripted-model', 'llm:scripted-model']);
    expect(tasks[0]).toMatchObject({ type: 'deduction', input: [4], output: 22 });
    expect(tasks[2]).toMatchObject({ type: 'induction' });
  });
});

describe('LLM solver on natural renderings', () => {
  it('answers are extracted, verified in the sandbox, and give pass@k', async () => {
    const dedu = await materialise(sandbox, {
      type: 'deduction',
      family: 'arith',
      level: 0,
      skills: [],
      program: 'function f(x) { return x * 3; }',
      inputs: [[5]],
    });
    const indu = await materialise(sandbox, {
      type: 'induction',
      family: 'arith',
      level: 0,
      skills: [],
      program: 'function f(x) { return x + 2; }',
      inputs: [[1], [2], [3], [4]],
      visibleCount: 2,
      message: 'add',
    });
    if (!dedu.ok || !indu.ok) throw new Error('fixture tasks did not materialise');
    const tasks = [dedu.task, indu.task];
    const model = new ScriptedChatModel([
      'It multiplies by three.\n```json\n15\n```',
      'ANSWER: 14',
      '15',
      '```javascript\nfunction f(x) { return x + 2; }\n```',
      'ANSWER: (x) => x + 2',
      'I do not know.',
    ]);
    const cfg = agentsConfigSchema.parse({
      solver: { enabled: true, provider: 'scripted', scriptPath: FIXTURE, model: 'm', concurrency: 1 },
    }).solver;
    const policy = createLlmPolicy(cfg, { log: () => {}, model });
    const { answers } = await policy.sample(
      tasks.map((t) => ({
        text: renderNatural(t),
        kind: t.type === 'induction' ? ('program' as const) : ('literal' as const),
      })),
      3,
    );
    const rewards = await Promise.all(
      answers.map((g, i) => Promise.all(g.map(async (a) => (await verifyAnswer(sandbox, tasks[i]!, a)).reward))),
    );
    expect(rewards).toEqual([
      [1, 0, 1],
      [1, 1, 0],
    ]);
    expect(passAtK(rewards, 1)).toBeCloseTo(2 / 3, 12);
    expect(passAtK(rewards, 2)).toBe(1);
  });
});
