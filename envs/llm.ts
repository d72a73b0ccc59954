// An LLM plays an environment through LangChain tool calling: the environment's tools are bound to
// the chat model (bindTools, the OpenAI function-calling shape), each tool call the model writes is
// one step, and its result goes back as a tool message answering the call's id. A reply with no
// tool call, or with one LangChain could not parse (invalid_tool_calls), is still an action: the
// environment ends the episode with reward 0 and says why. ScriptedToolModel is a chat model whose
// replies come from a function of the conversation, for tests and benchmarks without a network.
import { BaseChatModel, type BindToolsInput } from '@langchain/core/language_models/chat_models';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { ENV_SYSTEM_PROMPT, toolCallId } from './chat.js';
import type { Env } from './env.js';
import type { EnvAction, ToolSchema, Trajectory } from './types.js';

/** The action a reply that calls no tool becomes (an unknown tool: the episode ends as malformed). */
export const NO_TOOL_CALL = 'no_tool_call';

/** Plays one episode with a chat model that supports bindTools; the trajectory. */
export async function playWithChatModel(env: Env, model: BaseChatModel, seed = 0): Promise<Trajectory> {
  if (typeof model.bindTools !== 'function')
    throw new Error(`the chat model ${model._llmType()} cannot call tools (no bindTools)`);
  const obs = env.reset(seed);
  const bound = model.bindTools(obs.tools as BindToolsInput[]);
  const messages: BaseMessage[] = [new SystemMessage(ENV_SYSTEM_PROMPT), new HumanMessage(obs.text)];
  let n = 0;
  while (!env.done) {
    const ai = (await bound.invoke(messages)) as AIMessage;
    messages.push(ai);
    const calls: { id: string; action: EnvAction }[] = [
      ...(ai.tool_calls ?? []).map((c) => ({
        id: c.id ?? toolCallId(n),
        action: { name: c.name, arguments: JSON.stringify(c.args ?? {}) },
      })),
      // A call whose arguments did not parse: the raw text goes to the environment, which says so.
      ...(ai.invalid_tool_calls ?? []).map((c) => ({
        id: c.id ?? toolCallId(n),
        action: { name: c.name ?? '', arguments: c.args ?? '' },
      })),
    ];
    if (calls.length === 0) {
      await env.step({
        name: NO_TOOL_CALL,
        arguments: JSON.stringify({ text: typeof ai.content === 'string' ? ai.content.slice(0, 200) : '' }),
      });
      break;
    }
    for (const c of calls) {
      if (env.done) break;
      const r = await env.step(c.action);
      messages.push(new ToolMessage({ tool_call_id: c.id, content: r.observation }));
      n++;
    }
  }
  return env.trajectory();
}

/** A reply of a scripted model: the conversation so far and the bound tools in, a message out. */
export type ToolScript = (messages: BaseMessage[], tools: ToolSchema[]) => AIMessage;

export class ScriptedToolModel extends BaseChatModel {
  /** The tools the last bindTools gave (OpenAI function-calling shape). */
  tools: ToolSchema[] = [];
  /** How many replies it gave, across its bound copies. */
  replies = { n: 0 };

  constructor(private readonly script: ToolScript) {
    super({});
  }

  _llmType(): string {
    return 'scripted-tools';
  }

  override bindTools(tools: BindToolsInput[]): ScriptedToolModel {
    const bound = new ScriptedToolModel(this.script);
    bound.tools = tools as ToolSchema[];
    bound.replies = this.replies;
    this.tools = bound.tools;
    return bound;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.replies.n++;
    const message = this.script(messages, this.tools);
    return { generations: [{ message, text: typeof message.content === 'string' ? message.content : '' }] };
  }
}
