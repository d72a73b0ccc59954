// Chat models for the LLM agents, through LangChain: ChatOpenAI (OpenAI or any OpenAI-compatible
// server by base URL), ChatOllama, or a scripted model (LangChain's FakeListChatModel fed from a JSON
// file) for runs and tests without a network. `createChatClient` wraps a model with what a run needs:
// a timeout per attempt, retries with exponential backoff, a concurrency limit, token counts per
// call, and redaction of API keys from everything it returns or logs.
import { readFileSync } from 'node:fs';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, HumanMessage, SystemMessage, type BaseMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import { FakeListChatModel } from '@langchain/core/utils/testing';
import { ChatOpenAI } from '@langchain/openai';
import { ChatOllama } from '@langchain/ollama';
import pLimit from 'p-limit';
import pRetry from 'p-retry';
import { z } from 'zod';
import { API_KEY_ENV, type ModelConfig } from './config.js';

// ---------------------------------------------------------------------------------------------
// Secrets: read from the environment only, and scrubbed from every string that leaves this room.

type Env = Record<string, string | undefined>;

/** The API key from COGEN_LLM_API_KEY, else OPENAI_API_KEY; undefined when neither is set. */
export function apiKeyFromEnv(env: Env = process.env): string | undefined {
  for (const name of API_KEY_ENV) {
    const v = env[name]?.trim();
    if (v) return v;
  }
  return undefined;
}

/** Replaces every occurrence of a key held in the environment by `[redacted]`. */
export function redactSecrets(text: string, env: Env = process.env): string {
  let out = text;
  for (const name of API_KEY_ENV) {
    const v = env[name]?.trim();
    if (v && v.length >= 4) out = out.split(v).join('[redacted]');
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The scripted model: LangChain's FakeListChatModel, with entries that can also fail, hang, or
// report token usage, so that a scripted run exercises the same paths as a real endpoint.

export const scriptEntrySchema = z.union([
  z.string(),
  z
    .object({
      text: z.string().default(''),
      /** Throw this error instead of answering (an endpoint that errors). */
      error: z.string().optional(),
      /** Never answer (until the call is aborted): a model that hangs. */
      hang: z.boolean().optional(),
      /** Answer after this many milliseconds. */
      delayMs: z.number().int().min(0).optional(),
      /** Usage as a provider would report it (usage_metadata). */
      usage: z.object({ input: z.number().int().min(0), output: z.number().int().min(0) }).optional(),
    })
    .strict(),
]);
export type ScriptEntry = z.input<typeof scriptEntrySchema>;
type Entry = z.output<typeof scriptEntrySchema>;

/** A script file: a list of entries, or `{responses}`, or `{proposer, solver}` (one list per role). */
export const scriptFileSchema = z.union([
  z.array(scriptEntrySchema).min(1),
  z.object({ description: z.string().optional(), responses: z.array(scriptEntrySchema).min(1) }),
  z.object({
    description: z.string().optional(),
    proposer: z.array(scriptEntrySchema).min(1).optional(),
    solver: z.array(scriptEntrySchema).min(1).optional(),
  }),
]);

export type ScriptRole = 'proposer' | 'solver';

/** Reads a script file and returns the entries for a role. Throws with the file and the reason. */
export function loadScript(path: string, role: ScriptRole): ScriptEntry[] {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new Error(`script ${path}: ${(e as Error).message}`);
  }
  const parsed = scriptFileSchema.safeParse(raw);
  if (!parsed.success)
    throw new Error(
      `script ${path}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`,
    );
  const data = parsed.data;
  const entries = Array.isArray(data) ? data : 'responses' in data ? data.responses : data[role];
  if (!entries || entries.length === 0) throw new Error(`script ${path}: no entries for the ${role}`);
  return entries;
}

function abortable(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new Error('aborted'));
    const timer = Number.isFinite(ms) ? setTimeout(resolve, ms) : undefined;
    signal?.addEventListener(
      'abort',
      () => {
        if (timer) clearTimeout(timer);
        reject(new Error('aborted'));
      },
      { once: true },
    );
  });
}

/** FakeListChatModel whose entries may throw, hang, wait, or carry usage metadata. Cycles like its parent. */
export class ScriptedChatModel extends FakeListChatModel {
  static override lc_name(): string {
    return 'ScriptedChatModel';
  }
  readonly entries: Entry[];

  constructor(entries: ScriptEntry[]) {
    const parsed = entries.map((e) => scriptEntrySchema.parse(e));
    if (parsed.length === 0) throw new Error('ScriptedChatModel: no entries');
    super({ responses: parsed.map((e) => (typeof e === 'string' ? e : e.text)) });
    this.entries = parsed;
    this.disableStreaming = true;
  }

  override _llmType(): string {
    return 'scripted';
  }

  override async _generate(
    messages: BaseMessage[],
    options?: this['ParsedCallOptions'],
    runManager?: CallbackManagerForLLMRun,
  ): Promise<ChatResult> {
    const entry = this.entries[this.i]!;
    if (typeof entry === 'string') return super._generate(messages, options, runManager);
    this._incrementResponse();
    if (entry.error !== undefined) throw new Error(entry.error);
    if (entry.hang) await abortable(Infinity, options?.signal);
    if (entry.delayMs) await abortable(entry.delayMs, options?.signal);
    const usage = entry.usage && {
      input_tokens: entry.usage.input,
      output_tokens: entry.usage.output,
      total_tokens: entry.usage.input + entry.usage.output,
    };
    const message = new AIMessage({ content: entry.text, ...(usage ? { usage_metadata: usage } : {}) });
    return { generations: [{ message, text: entry.text }], llmOutput: {} };
  }
}

// ---------------------------------------------------------------------------------------------
// Building a LangChain chat model from the configuration.

/**
 * The chat model for a configuration at a temperature. Keys come from the environment only
 * (COGEN_LLM_API_KEY, else OPENAI_API_KEY). LangChain's own retries are off and the timeout is the
 * client's, per attempt: the client retries, and counts and logs each attempt.
 */
export function buildChatModel(
  cfg: ModelConfig,
  opts: { temperature?: number; role?: ScriptRole; env?: Env } = {},
): BaseChatModel {
  const temperature = opts.temperature ?? cfg.temperature;
  const env = opts.env ?? process.env;
  switch (cfg.provider) {
    case 'scripted': {
      if (!cfg.scriptPath)
        throw new Error("provider 'scripted' needs a script file (--script <file.json> or scriptPath)");
      return new ScriptedChatModel(loadScript(cfg.scriptPath, opts.role ?? 'proposer'));
    }
    case 'openai': {
      const key = apiKeyFromEnv(env);
      if (!key && !cfg.baseUrl) {
        throw new Error(
          `provider 'openai' needs an API key in the environment (${API_KEY_ENV.join(' or ')}), or --base-url for a local OpenAI-compatible server`,
        );
      }
      return new ChatOpenAI({
        model: cfg.model,
        temperature,
        // Local OpenAI-compatible servers ignore the key; the client library insists on one.
        apiKey: key ?? 'no-key',
        maxRetries: 0,
        ...(cfg.maxTokens ? { maxTokens: cfg.maxTokens } : {}),
        ...(cfg.baseUrl ? { configuration: { baseURL: cfg.baseUrl } } : {}),
      });
    }
    case 'ollama': {
      const key = apiKeyFromEnv(env);
      return new ChatOllama({
        model: cfg.model,
        temperature,
        maxRetries: 0,
        ...(cfg.maxTokens ? { numPredict: cfg.maxTokens } : {}),
        ...(cfg.baseUrl ? { baseUrl: cfg.baseUrl } : {}),
        // Only for an Ollama behind an authenticating proxy; a plain local Ollama needs no key.
        ...(key && cfg.baseUrl ? { headers: { Authorization: `Bearer ${key}` } } : {}),
      });
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The client: a timeout per attempt (AbortSignal.timeout), retries with jittered exponential backoff
// (p-retry), a concurrency limit (p-limit), token counts.

export interface TokenCount {
  input: number;
  output: number;
  /** True when the provider gave no usage and the counts are chars/4 estimates. */
  estimated: boolean;
}

export interface CallResult {
  /** The model's text, API keys redacted. */
  text: string;
  tokens: TokenCount;
  /** Wall time from the first attempt to the answer, backoff included. */
  ms: number;
  attempts: number;
}

export type CallFailure = 'timeout' | 'unreachable';

export class LlmCallError extends Error {
  constructor(
    readonly kind: CallFailure,
    message: string,
    readonly attempts: number,
    readonly ms: number,
    /** Input tokens sent across the attempts (estimated). */
    readonly inputTokens: number,
  ) {
    super(message);
    this.name = 'LlmCallError';
  }
}

/** chars/4, rounded up: the usual rough count when a provider reports no usage. */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4);

function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) =>
        typeof part === 'string'
          ? part
          : part && typeof part === 'object' && 'text' in part && typeof part.text === 'string'
            ? part.text
            : '',
      )
      .join('');
  }
  return '';
}

export interface ChatUsage {
  calls: number;
  failures: number;
  inputTokens: number;
  outputTokens: number;
  /** Calls whose counts were estimated. */
  estimatedCalls: number;
}

export interface ChatClient {
  /** `llm:<model>`, as recorded in tasks (proposer) and policies (backend). */
  readonly label: string;
  /** One model call with timeout, retries and the concurrency limit. Throws LlmCallError. */
  call(messages: BaseMessage[], opts?: { greedy?: boolean }): Promise<CallResult>;
  /** Totals since creation. */
  usage(): ChatUsage;
}

export interface ClientDeps {
  log?: (line: string) => void;
  /** A ready model (tests); the same one answers greedy calls unless `greedyModel` is given. */
  model?: BaseChatModel;
  greedyModel?: BaseChatModel;
  role?: ScriptRole;
  env?: Env;
}

/** The longest wait between two attempts. */
const MAX_BACKOFF_MS = 30_000;

/** One failed attempt, classified. An Error and never a TypeError, so that p-retry retries every kind. */
class AttemptError extends Error {
  constructor(
    readonly kind: CallFailure,
    message: string,
  ) {
    super(message);
  }
}

/** Rejects when the signal aborts: a model that ignores the signal (a fake, a stuck stream) still gives up. */
function rejectOnAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
}

export function createChatClient(cfg: ModelConfig, deps: ClientDeps = {}): ChatClient {
  const env = deps.env ?? process.env;
  const log = (line: string) => deps.log?.(redactSecrets(line, env));
  const model = deps.model ?? buildChatModel(cfg, { role: deps.role, env });
  // A scripted model has one list of answers whatever the temperature: share it.
  const greedyModel =
    deps.greedyModel ??
    (deps.model || cfg.provider === 'scripted' ? model : buildChatModel(cfg, { temperature: 0, role: deps.role, env }));
  const slots = pLimit(cfg.concurrency);
  const label = `llm:${cfg.model}`;
  const totals: ChatUsage = { calls: 0, failures: 0, inputTokens: 0, outputTokens: 0, estimatedCalls: 0 };

  /** One attempt. It runs inside a concurrency slot, so its deadline starts once the slot is free. */
  async function attempt(m: BaseChatModel, messages: BaseMessage[]): Promise<AIMessage> {
    const deadline = AbortSignal.timeout(cfg.timeoutMs);
    try {
      return await Promise.race([m.invoke(messages, { signal: deadline }), rejectOnAbort(deadline)]);
    } catch (e) {
      if (deadline.aborted) throw new AttemptError('timeout', `no answer within ${cfg.timeoutMs} ms`);
      throw new AttemptError(
        'unreachable',
        redactSecrets(
          String((e as Error)?.message ?? e)
            .split('\n')[0]!
            .slice(0, 300),
          env,
        ),
      );
    }
  }

  async function call(messages: BaseMessage[], opts: { greedy?: boolean } = {}): Promise<CallResult> {
    const m = opts.greedy ? greedyModel : model;
    const inputText = messages.map((msg) => messageText(msg.content)).join('\n');
    const started = Date.now();
    let attempts = 0;
    let message: AIMessage;
    try {
      message = await pRetry(
        (n) => {
          attempts = n;
          return slots(() => attempt(m, messages));
        },
        {
          retries: cfg.retries,
          factor: 2,
          // p-retry's jitter multiplies the delay by [1, 2); starting from half of backoffMs puts the
          // i-th wait in [½, 1) × backoffMs · 2^i, so concurrent callers do not retry in lockstep.
          minTimeout: cfg.backoffMs / 2,
          randomize: true,
          maxTimeout: MAX_BACKOFF_MS,
          onFailedAttempt: ({ error, attemptNumber, retriesLeft }) => {
            if (retriesLeft > 0)
              log(`${label}: attempt ${attemptNumber} failed (${describe(error)}); retrying after a backoff`);
          },
        },
      );
    } catch (e) {
      const err = e instanceof AttemptError ? e : new AttemptError('unreachable', redactSecrets(String(e), env));
      totals.calls++;
      totals.failures++;
      log(`${label}: gave up after ${attempts} attempt${attempts > 1 ? 's' : ''} (${describe(err)})`);
      throw new LlmCallError(
        err.kind,
        err.message,
        attempts,
        Date.now() - started,
        estimateTokens(inputText) * attempts,
      );
    }
    const text = redactSecrets(messageText(message.content), env);
    const usage = message.usage_metadata;
    const tokens: TokenCount =
      usage && (usage.input_tokens > 0 || usage.output_tokens > 0)
        ? { input: usage.input_tokens, output: usage.output_tokens, estimated: false }
        : { input: estimateTokens(inputText), output: estimateTokens(text), estimated: true };
    totals.calls++;
    totals.inputTokens += tokens.input;
    totals.outputTokens += tokens.output;
    if (tokens.estimated) totals.estimatedCalls++;
    return { text, tokens, ms: Date.now() - started, attempts };
  }

  return { label, call, usage: () => ({ ...totals }) };
}

const describe = (e: Error): string => (e instanceof AttemptError ? `${e.kind}: ${e.message}` : e.message);

/** Messages for one prompt: a system part (rules) and a user part (the request). */
export function chatMessages(system: string, user: string): BaseMessage[] {
  return system ? [new SystemMessage(system), new HumanMessage(user)] : [new HumanMessage(user)];
}
