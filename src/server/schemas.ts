// Request and response schemas of `cogen serve`, in zod; the OpenAPI document is generated from
// them. Field names are snake_case, as the Python trainers that call them write theirs.
import { z } from '@hono/zod-openapi';
import type { ServeConfig } from '../run/index.js';
import { TASK_VIEWS } from './served-view.js';

export const ErrorSchema = z
  .object({ error: z.string().openapi({ example: 'items.0.task_id: expected string, received undefined' }) })
  .openapi('Error');

const Message = z.object({ role: z.enum(['system', 'user']), content: z.string() }).openapi('ChatMessage');
const TaskType = z.enum(['deduction', 'abduction', 'induction', 'problem']);

const taskFields = {
  id: z.string(),
  type: TaskType,
  family: z.string(),
  level: z.number().int(),
  skills: z.array(z.string()),
};
const answerFields = {
  answer_kind: z.enum(['literal', 'program']),
  answer_shape: z.string().openapi({ description: 'The type of the expected answer, e.g. int, [int,str] or program.' }),
};
export const ServedTaskSchema = z
  .object({
    ...taskFields,
    prompt: z
      .array(Message)
      .openapi({ description: 'The task as chat messages: instructions, then the natural-language task.' }),
    ...answerFields,
  })
  .openapi('ServedTask');

const expiresAt = {
  expires_at: z
    .string()
    .openapi({ description: 'Scores after this instant still count, but no longer feed the curriculum.' }),
};
export const SampledTaskSchema = ServedTaskSchema.extend(expiresAt).openapi('SampledTask');

// The solver's view (src/server/served-view.ts; the rule is src/solver/served-view.ts's).
const TaskViewSchema = z.enum(TASK_VIEWS).default('chat').openapi({
  description:
    "chat (the default): the prompt as chat messages, the completion free text. compact: the built-in solver's view, its tokens joined by one space (the space token written ␣), ending in <sep>; a completion in it is such tokens, read up to <eos> (docs/train-your-own-model.md).",
});
export const ViewRuleSchema = z
  .object({
    name: z.string(),
    separator: z.string(),
    space: z.string(),
    prompt_sep: z.string(),
    prompt_sep_at: z.string(),
    answer_end: z.string(),
  })
  .openapi('ViewRule', {
    description:
      "How the compact view is written: tokens joined by `separator`, the space character's token written `space`; a prompt has `prompt_sep` written `prompt_sep_at` (before its last token), an answer ends with `answer_end`.",
  });
// (its own object, not ServedTask extended: the document would require both prompts at once)
export const CompactTaskSchema = z
  .object({
    ...taskFields,
    prompt: z.string().openapi({
      description: "The task in the solver's view: its tokens joined by one space, <sep> before the last.",
    }),
    prompt_ids: z.array(z.number().int()).openapi({
      description: "The prompt's token ids as GET /v1/tokenizer reads them (<bos> first, <sep> before the last).",
    }),
    ...answerFields,
  })
  .openapi('CompactTask');
export const CompactSampledTaskSchema = CompactTaskSchema.extend(expiresAt).openapi('CompactSampledTask');
export const ViewQuerySchema = z.object({ view: TaskViewSchema });
export const TokenizerSchema = z.record(z.string(), z.any()).openapi('TokenizerJson', {
  description:
    "The solver's vocabulary as a Hugging Face tokenizers file (Tokenizer.from_str): WordLevel, WhitespaceSplit, <bos> prepended.",
});

/** Schemas whose limits come from the run's `serve` config. */
export function requestSchemas(cfg: ServeConfig) {
  const completion = z.string().max(cfg.maxCompletionChars).openapi({
    description:
      "The model's free-text completion; the final answer is extracted from it (a fenced block, an `ANSWER:` line, or the bare answer).",
  });
  const item = z.object({ task_id: z.string().min(1).max(200), completion }).openapi('Completion');
  return {
    sample: z
      .object({
        n: z.number().int().min(1).max(cfg.maxSample).default(1),
        view: TaskViewSchema,
        one_arm: z.boolean().default(false).openapi({
          description:
            "All n tasks from one arm, the one the live curriculum picks first: for a trainer whose update should not mix arms (a GRPO step over one family's groups).",
        }),
      })
      .openapi('SampleRequest'),
    score: z
      .object({
        items: z.array(item).min(1).max(cfg.maxItems),
        view: TaskViewSchema,
        idempotency_key: z.string().min(1).max(200).optional().openapi({
          description:
            'A retried request with the same key gets the first response and counts once (the Idempotency-Key header works too).',
        }),
      })
      .openapi('ScoreRequest'),
    probes: z
      .object({ round: z.number().int().min(0), answers: z.array(item).max(cfg.maxItems), view: TaskViewSchema })
      .openapi('ProbeReportRequest'),
    verify: z
      .object({
        task: z.union([z.string().max(cfg.maxBodyBytes), TaskSchema]).openapi({
          description:
            "A task as exported (a JSONL record, TRL's task column, or veRL's extra_info.task), as an object or JSON text.",
        }),
        completion,
        view: TaskViewSchema,
      })
      .openapi('VerifyRequest'),
    step: z
      .object({
        action: z.object({ task_id: z.string().min(1).max(200), completion }).openapi('CogenAction'),
        timeout_s: z.number().optional(),
        request_id: z.string().optional(),
      })
      .openapi('StepRequest'),
  };
}

const Json = z.any().openapi({ description: 'a JSON value' });
const Example = z.object({ input: z.array(Json), output: Json });
const taskBase = {
  id: z.string().optional(),
  family: z.string().optional(),
  level: z.number().optional(),
  skills: z.array(z.string()).optional(),
};
/** A task with what verification needs; other fields (lineage, hashes, budgets) pass through. */
export const TaskSchema = z
  .discriminatedUnion('type', [
    z.looseObject({
      ...taskBase,
      type: z.literal('deduction'),
      program: z.string().optional(),
      input: z.array(Json).optional(),
      output: Json,
    }),
    z.looseObject({
      ...taskBase,
      type: z.literal('abduction'),
      program: z.string(),
      input: z.array(Json).optional(),
      output: Json,
    }),
    z.looseObject({
      ...taskBase,
      type: z.literal('induction'),
      program: z.string().optional(),
      visible: z.array(Example),
      hidden: z.array(Example),
      message: z.string().optional(),
    }),
    z.looseObject({
      ...taskBase,
      type: z.literal('problem'),
      program: z.string().openapi({
        description: "the verifier, `function f(answer, data)` returning a score in [0, 1] (verifier 'program')",
      }),
      data: Json,
      statement: z.string().optional(),
      verifier: z.string().default('program'),
    }),
  ])
  .openapi('Task');

export const ScoreResultSchema = z
  .object({
    task_id: z.string(),
    reward: z.number(),
    reason: z.string().nullable(),
    answer: z.string().openapi({ description: 'The answer extracted from the completion.' }),
  })
  .openapi('ScoreResult');

export const ScoreResponseSchema = z
  .object({
    step: z.number().int(),
    results: z.array(ScoreResultSchema),
    replayed: z.boolean().openapi({
      description: 'true when this is the stored response of an earlier request with the same idempotency key.',
    }),
  })
  .openapi('ScoreResponse');

export const ProbeSetSchema = z
  .object({
    round: z.number().int(),
    due: z.boolean(),
    every: z.number().int(),
    view: ViewRuleSchema.optional(),
    tasks: z.array(z.union([ServedTaskSchema, CompactTaskSchema])),
  })
  .openapi('ProbeSet');

export const ProbeReportSchema = z
  .object({
    round: z.number().int(),
    accepted: z.boolean(),
    detail: z.string().nullable(),
    accuracy: z.number().nullable(),
    per_skill: z.record(z.string(), z.number()),
    events: z.array(z.object({ skill_id: z.string(), event: z.enum(['learned', 'forgotten']), accuracy: z.number() })),
  })
  .openapi('ProbeReport');

export const VerifyResponseSchema = z
  .object({ reward: z.number(), reason: z.string().nullable(), answer: z.string() })
  .openapi('VerifyResponse');

export const StatsSchema = z
  .object({
    run_id: z.string(),
    step: z.number().int(),
    groups: z.number().int(),
    unfed_groups: z.number().int(),
    completions: z.number().int(),
    solved: z.number().int(),
    tasks: z.number().int(),
    issued: z.number().int(),
    open: z.number().int(),
    abandoned: z.number().int(),
    probe_round: z.number().int(),
    probes_reported: z.number().int(),
    probe_accuracy: z.number().nullable(),
    skills_mastered: z.array(z.string()),
    mastery: z
      .array(z.object({ skill_id: z.string(), accuracy: z.number(), baseline: z.number() }))
      .openapi({ description: "Each mastered skill's last probe accuracy beside its probe set's trivial baseline" }),
    skills_masterable: z.number().int().openapi({ description: 'Skills whose probe set can show mastery' }),
    progress: z
      .array(
        z.object({
          skill_id: z.string(),
          accuracy: z.number().nullable(),
          baseline: z.number(),
          bar: z.number(),
          mastered: z.boolean(),
        }),
      )
      .openapi({
        description:
          "Every masterable skill, mastered or not: its last probe accuracy (null before the first round), its probe set's trivial baseline and the accuracy mastery needs",
      }),
    skills_ever_learned: z.array(z.string()),
    forgotten: z
      .object({ skills: z.array(z.string()), share: z.number() })
      .openapi({ description: 'Skills ever learned but not mastered now, and their share of those ever learned' }),
    frontier: z
      .record(z.string(), z.number().int())
      .optional()
      .openapi({
        description:
          "The level-frontier controller's upper level h now, per `family/type` (only with that controller; docs/levels.md)",
        example: { 'arith/deduction': 7 },
      }),
  })
  .openapi('Stats');

export const HealthSchema = z.object({ status: z.literal('healthy'), run_id: z.string() }).openapi('Health');
export const UnavailableSchema = z
  .object({ status: z.literal('unavailable'), run_id: z.string(), reason: z.string() })
  .openapi('Unavailable');

// OpenEnv's simulation-mode shapes (openenv-core: ResetRequest, StepResponse, State).
export const ResetRequestSchema = z
  .object({ seed: z.number().int().nullable().optional(), episode_id: z.string().nullable().optional() })
  .openapi('ResetRequest');
export const ObservationSchema = z
  .object({
    task_id: z.string(),
    prompt: z.array(Message).optional(),
    type: TaskType.optional(),
    family: z.string().optional(),
    level: z.number().int().optional(),
    answer_kind: z.enum(['literal', 'program']).optional(),
    answer: z.string().optional(),
    reason: z.string().nullable().optional(),
  })
  .openapi('Observation');
export const StepResponseSchema = z
  .object({ observation: ObservationSchema, reward: z.number().nullable(), done: z.boolean() })
  .openapi('StepResponse');
export const StateSchema = z
  .object({
    episode_id: z.string().nullable(),
    step_count: z.number().int(),
    task_id: z.string().nullable().optional(),
  })
  .openapi('State');
