// The LLM solver path produces skill events like the built-in solver: a chat model that answers
// deduction tasks right (LangChain's fake chat model, its reply computed from the prompt)
// masters the skills it is probed on (arithmetic: level-0 logic is too small a space for a balanced
// probe set), and the events reach the run store and the skill graph.
import { FakeChatModel } from '@langchain/core/utils/testing';
import { AIMessage } from '@langchain/core/messages';
import type { BaseMessage } from '@langchain/core/messages';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { expect, it } from 'vitest';
import { loadPreset, startRun } from '../src/index.js';
import { skillEventsOf, tempDir } from './helpers.js';

/** Reads the program and the call out of a deduction prompt and answers with the true output. */
class OracleChatModel extends FakeChatModel {
  override async _generate(messages: BaseMessage[]) {
    const text = messages.map((m) => String(m.content)).join('\n');
    const program = /```js\n([\s\S]*?)\n```/.exec(text)?.[1];
    const call = /What does (f\(.*\)) return\?/.exec(text)?.[1];
    const answer =
      program && call
        ? `ANSWER: ${JSON.stringify(runInNewContext(`${program}; ${call}`, {}, { timeout: 100 }))}`
        : 'ANSWER: null';
    return { generations: [{ message: new AIMessage(answer), text: answer }], llmOutput: {} };
  }
}

it('--solver llm with a model that answers right: pass@k of 1 and learned skill events', async () => {
  const config = loadPreset('smoke', {
    steps: 2,
    families: ['arith'],
    maxLevel: 0,
    types: ['deduction'],
    probes: { every: 1, perArm: 4 },
    agents: { solver: { enabled: true, provider: 'scripted', model: 'oracle', scriptPath: '/dev/null' } },
  });
  const runsDir = tempDir('cogen-oracle-');
  const summary = await startRun(config, {
    runsDir,
    preset: 'smoke',
    runId: 'oracle',
    chatModels: { solver: new OracleChatModel({}) },
  });
  expect(summary.backend).toBe('llm:oracle');
  expect(summary.skillsMastered.length).toBeGreaterThan(0);
  const db = new Database(join(runsDir, 'oracle', 'run.db'), { readonly: true });
  const metrics = (db.prepare('SELECT data FROM metrics').all() as { data: string }[]).map((r) => JSON.parse(r.data));
  expect(metrics.every((m) => m.passAt1 === 1 && m.passAt8 === 1)).toBe(true);
  const learned = skillEventsOf(join(runsDir, 'oracle')).filter((e) => e.event === 'learned' && e.step === 1);
  expect(learned.map((r) => r.skillId).sort()).toEqual(summary.skillsMastered);
  expect((db.prepare('SELECT COUNT(*) n FROM graph_mastered WHERE until_step IS NULL').get() as { n: number }).n).toBe(
    learned.length,
  );
  db.close();
});
