// An episode as a chat in the OpenAI messages format: the prompt as a user message, each action as
// an assistant message with one tool call, each result as a tool message answering that call's id.
// One home for this shape: the export, the LLM solver and the served sessions all use it.
import type { Trajectory } from './types.js';

export const ENV_SYSTEM_PROMPT =
  'You are an agent in a programming environment. Act only through the tools you are given: call them to explore, and end the episode with submit.';

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type EnvMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls: ToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

/** The id of the i-th tool call of an episode (0-based): stable, so a replay writes the same chat. */
export const toolCallId = (i: number): string => `call_${i}`;

/** The whole episode as messages (system, user, then assistant/tool pairs). */
export function trajectoryMessages(t: Pick<Trajectory, 'prompt' | 'steps'>): EnvMessage[] {
  const messages: EnvMessage[] = [
    { role: 'system', content: ENV_SYSTEM_PROMPT },
    { role: 'user', content: t.prompt },
  ];
  t.steps.forEach((s, i) => {
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: toolCallId(i), type: 'function', function: { name: s.action.name, arguments: s.action.arguments } },
      ],
    });
    messages.push({ role: 'tool', tool_call_id: toolCallId(i), content: s.observation });
  });
  return messages;
}
