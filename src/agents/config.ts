// Configuration of the LLM agents (docs/DESIGN.md, "Solver and the GRPO family", last paragraph): a
// chat model as proposer for a share of the fresh tasks, and a chat model as a solver under
// evaluation. Every field has a default and both agents are off by default. API keys are never
// configuration: they come from the environment only (see `apiKeyFromEnv` in model.ts).
import { z } from 'zod';

export const PROVIDERS = ['openai', 'ollama', 'scripted'] as const;
export type Provider = (typeof PROVIDERS)[number];

/** Names of the environment variables that may hold an API key, in order of precedence. */
export const API_KEY_ENV = ['COGEN_LLM_API_KEY', 'OPENAI_API_KEY'] as const;

const SECRET_KEY = /^(api[-_]?key|apikey|key|token|secret|password|authorization|auth)$/i;

/** Rejects any key that looks like a secret, with a message that says where keys belong. */
function noSecrets(value: unknown, ctx: z.RefinementCtx): void {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return;
  for (const key of Object.keys(value)) {
    if (SECRET_KEY.test(key)) {
      ctx.addIssue({
        code: 'custom',
        path: [key],
        message: `API keys are never read from configuration; set ${API_KEY_ENV.join(' or ')} in the environment`,
      });
    }
  }
}

/** Fields shared by both agents: which chat model, and how to call it. */
const modelFields = {
  provider: z.enum(PROVIDERS).default('openai'),
  /** Model name as the provider knows it (e.g. 'gpt-4o-mini', 'qwen2.5-coder:7b'). */
  model: z.string().min(1).default('gpt-4o-mini'),
  /** Base URL of an OpenAI-compatible server (llama.cpp, vLLM, …) or of Ollama. */
  baseUrl: z.url().optional(),
  temperature: z.number().min(0).max(2).default(0.7),
  /** Per attempt: how long one model call may take (the wait for a concurrency slot is not counted). */
  timeoutMs: z.number().int().positive().default(60_000),
  /** Extra attempts after a failed or timed-out call, with exponential backoff. */
  retries: z.number().int().min(0).max(10).default(2),
  /** The first wait between attempts, jittered down to half of it; it doubles at every retry, capped at 30 s. */
  backoffMs: z.number().int().min(0).default(500),
  /** Calls in flight at once. */
  concurrency: z.number().int().positive().default(4),
  /** Cap on generated tokens per call (provider-side), if set. */
  maxTokens: z.number().int().positive().optional(),
  /** provider 'scripted': a JSON file of scripted outputs (docs/agents.md, "Without a network: a scripted model"). */
  scriptPath: z.string().optional(),
};

const proposerObject = z
  .object({
    /** Fraction of fresh tasks proposed by the LLM (0 = off); the rest come from the generators. */
    share: z.number().min(0).max(1).default(0),
    ...modelFields,
    /** K reference tasks from the run's archive shown in each prompt. */
    k: z.number().int().min(0).max(32).default(6),
  })
  .strict();

const solverObject = z
  .object({
    /** Evaluate an LLM as the solver (it does not train). */
    enabled: z.boolean().default(false),
    ...modelFields,
  })
  .strict();

export const proposerConfigSchema = z.preprocess((v, ctx) => (noSecrets(v, ctx), v), proposerObject);
export const llmSolverConfigSchema = z.preprocess((v, ctx) => (noSecrets(v, ctx), v), solverObject);

export const agentsConfigSchema = z
  .object({
    proposer: proposerConfigSchema.prefault({}),
    solver: llmSolverConfigSchema.prefault({}),
  })
  .strict()
  .superRefine((cfg, ctx) => {
    for (const role of ['proposer', 'solver'] as const) {
      const c = cfg[role];
      const active = role === 'proposer' ? cfg.proposer.share > 0 : cfg.solver.enabled;
      if (active && c.provider === 'scripted' && !c.scriptPath) {
        ctx.addIssue({
          code: 'custom',
          path: [role, 'scriptPath'],
          message: "provider 'scripted' needs scriptPath (a JSON file of scripted outputs)",
        });
      }
    }
  });

export type AgentsConfig = z.infer<typeof agentsConfigSchema>;
export type ProposerConfig = AgentsConfig['proposer'];
export type LlmSolverConfig = AgentsConfig['solver'];
/** What model.ts needs: the fields both agents share. */
export type ModelConfig = Pick<ProposerConfig, keyof typeof modelFields>;
