// An LLM plays environments through LangChain tool calling (bindTools), with scripted models: one
// that solves (it reads the tool results it is sent), one that loops on tool calls, and ones whose
// tool calls are malformed (arguments that do not parse, an unknown tool, no tool call at all).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AIMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import { createRng } from '../core/rng.js';
import { createSandbox, type Sandbox } from '../sandbox/index.js';
import {
  ENV_KINDS,
  Env,
  ScriptedToolModel,
  generateEnv,
  playEpisode,
  playWithChatModel,
  referenceActions,
  referencePolicy,
  replay,
  trajectoryMessages,
  type EnvKind,
  type EnvSpec,
} from '../envs/index.js';

let sb: Sandbox;
const specs = {} as Record<EnvKind, EnvSpec>;
beforeAll(async () => {
  sb = await createSandbox({ workers: 1 });
  for (const kind of ENV_KINDS)
    specs[kind] = await generateEnv(sb, { kind, family: 'arith', level: 0, rng: createRng(`llm/${kind}`) });
});
afterAll(async () => {
  await sb.close();
});

const toolCall = (name: string, args: Record<string, unknown>, id: string) =>
  new AIMessage({ content: '', tool_calls: [{ name, args, id, type: 'tool_call' }] });
const toolResults = (messages: BaseMessage[]) => messages.filter((m): m is ToolMessage => m instanceof ToolMessage);

describe('an LLM plays through bindTools', () => {
  it('a model that solves: it is bound the env tools, reads each tool result by its call id, and reaches reward 1', async () => {
    for (const kind of ENV_KINDS) {
      const spec = specs[kind];
      const script = referenceActions(spec);
      const seen: string[] = [];
      const model = new ScriptedToolModel((messages) => {
        const results = toolResults(messages);
        // Every earlier call of this model has been answered, by id, in order.
        results.forEach((r, i) => expect(r.tool_call_id).toBe(`m${i}`));
        if (results.length) seen.push(String(results.at(-1)!.content));
        const next = script[results.length]!;
        return toolCall(next.name, JSON.parse(next.arguments as string), `m${results.length}`);
      });
      const t = await playWithChatModel(new Env(spec, sb), model, 0);
      expect(t.reward, kind).toBe(1);
      expect(model.tools.map((x) => x.function.name)).toEqual(
        new Env(spec, sb).reset(0).tools.map((x) => x.function.name),
      );
      expect(seen).toEqual([t.steps[0]!.observation]);
      // The played episode exports as a chat whose calls pair up, and replays the same.
      expect(trajectoryMessages(t).filter((m) => m.role === 'tool')).toHaveLength(t.steps.length);
      expect(await replay(new Env(spec, sb), t)).toEqual(t);
    }
  });

  it('a model that loops on tool calls is stopped by the call budget with reward 0', async () => {
    const spec = specs.probe;
    let i = 0;
    const model = new ScriptedToolModel(() => toolCall('call', { args: spec.argTypes.map(() => 1) }, `loop${i++}`));
    const t = await playWithChatModel(new Env(spec, sb), model, 0);
    expect(t).toMatchObject({ done: true, reward: 0, reason: `budget: more than ${spec.budgets.calls} calls` });
    expect(model.replies.n).toBe(spec.budgets.calls + 1);
  });

  it('malformed tool calls end the episode with reward 0 and a reason; the next episode is unaffected', async () => {
    const spec = specs.search;
    const malformed: [string, AIMessage, RegExp][] = [
      [
        'arguments that do not parse',
        new AIMessage({
          content: '',
          invalid_tool_calls: [
            { name: 'call', args: '{"x": [1,', id: 'bad', error: 'not JSON', type: 'invalid_tool_call' },
          ],
        }),
        /^malformed: arguments are not JSON/,
      ],
      ['an unknown tool', toolCall('format_disk', {}, 'u'), /^malformed: unknown tool "format_disk"/],
      ['wrong argument types', toolCall('submit', { x: 'seven' }, 'w'), /^malformed: submit\.x/],
      [
        'plain text, no tool call',
        new AIMessage({ content: 'I think the answer is 7' }),
        /^malformed: unknown tool "no_tool_call"/,
      ],
    ];
    for (const [what, reply, reason] of malformed) {
      const t = await playWithChatModel(new Env(spec, sb), new ScriptedToolModel(() => reply), 0);
      expect(t, what).toMatchObject({ done: true, reward: 0 });
      expect(t.reason, what).toMatch(reason);
      expect((await playEpisode(new Env(spec, sb), referencePolicy(spec), 0)).reward).toBe(1);
    }
  });

  it("LangChain's ChatOpenAI binds the tools as they are (no network)", () => {
    const tools = new Env(specs.repair, sb).reset(0).tools;
    expect(() => new ChatOpenAI({ apiKey: 'sk-test', model: 'gpt-4o-mini' }).bindTools(tools)).not.toThrow();
  });
});
