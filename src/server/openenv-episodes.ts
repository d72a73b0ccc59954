// What OpenEnv's reset and step do (openenv.ts serves them over HTTP, openenv-ws.ts over /ws): a
// single-turn task from the live curriculum, scored as a group of one, or an environment episode
// (envs/), one tool call a step; with the request and observation schemas of the episodes.
import { z } from '@hono/zod-openapi';
import type { Metrics } from './metrics.js';
import { ServeError, type ServedRun } from './served-run.js';
import { ResetRequestSchema } from './schemas.js';
import { ENV_KINDS, EnvSessionError, EnvSessions, trajectoryMessages, type EnvAction } from '../../envs/index.js';
import { families as codeFamilies } from '../../generators/index.js';

// ---- environment episodes -------------------------------------------------------------------

const EnvRequestSchema = z.object({
  kind: z.enum(ENV_KINDS),
  family: z.string().min(1).max(60).optional(),
  level: z.number().int().min(0).max(9).optional(),
});
export const EnvResetRequestSchema = ResetRequestSchema.extend({ env: EnvRequestSchema.optional() }).openapi(
  'EnvResetRequest',
);
export const ToolCallSchema = z.object({
  name: z.string().max(200),
  arguments: z.union([z.string().max(64 * 1024), z.record(z.string(), z.any())]),
});
export const EnvStepRequestSchema = z
  .object({
    action: ToolCallSchema.extend({ episode_id: z.string().min(1).max(200) }),
    request_id: z.string().max(200).optional(),
  })
  .openapi('EnvStepRequest');
const EnvObservationSchema = z.object({
  episode_id: z.string(),
  env_id: z.string().optional(),
  kind: z.enum(ENV_KINDS).optional(),
  family: z.string().optional(),
  level: z.number().int().optional(),
  skills: z.array(z.string()).optional(),
  budgets: z.object({ turns: z.number().int(), calls: z.number().int() }).optional(),
  seed: z.number().int().optional(),
  prompt: z.array(z.object({ role: z.string(), content: z.string().nullable() })).optional(),
  tools: z
    .array(
      z.object({
        type: z.literal('function'),
        function: z.object({ name: z.string(), description: z.string(), parameters: z.record(z.string(), z.any()) }),
      }),
    )
    .optional(),
  result: z.string().optional(),
  turn: z.number().int().optional(),
  calls_left: z.number().int().optional(),
  reason: z.string().optional(),
});
export const EnvStepResponseSchema = z
  .object({ observation: EnvObservationSchema, reward: z.number().nullable(), done: z.boolean() })
  .openapi('EnvStepResponse');

/** One EnvSessions per served run, shared by HTTP and /ws; finished episodes go to the run store. */
const envSessions = new WeakMap<ServedRun, EnvSessions>();
function envsOf(run: ServedRun): EnvSessions {
  let s = envSessions.get(run);
  if (!s) {
    const known = new Set(codeFamilies.map((f) => f.id));
    const fams = run.config.families.filter((f) => known.has(f));
    s = new EnvSessions(run.sandboxHandle, {
      families: fams.length ? fams : ['arith'],
      maxEpisodes: Math.max(16, run.config.serve.maxSessions * 4),
      record: (spec, trajectory) => run.recordEnvEpisode(spec, trajectory),
    });
    envSessions.set(run, s);
  }
  return s;
}

/** An environment error as the HTTP layer reports it (404 unknown episode, 422 otherwise). */
function envError(e: unknown): never {
  if (e instanceof EnvSessionError) throw new ServeError(e.code === 'unknown-episode' ? 404 : 422, e.message);
  throw e;
}

export async function envReset(
  run: ServedRun,
  req: z.infer<typeof EnvRequestSchema>,
  seed?: number | null,
  episodeId?: string | null,
) {
  const started = await envsOf(run)
    .start({ ...req, ...(seed == null ? {} : { seed }), ...(episodeId == null ? {} : { episodeId }) })
    .catch(envError);
  const { spec, observation } = started;
  const [system, user] = trajectoryMessages({ prompt: observation.text, steps: [] });
  return {
    observation: {
      episode_id: started.episodeId,
      env_id: spec.id,
      kind: spec.kind,
      family: spec.family,
      level: spec.level,
      skills: spec.skills,
      budgets: spec.budgets,
      seed: started.seed,
      prompt: [system!, user!] as { role: string; content: string }[],
      tools: observation.tools,
    },
    reward: null,
    done: false,
  };
}

export async function envStep(run: ServedRun, episodeId: string, action: EnvAction) {
  const r = await envsOf(run).step(episodeId, action).catch(envError);
  return {
    observation: {
      episode_id: episodeId,
      result: r.observation,
      turn: r.info.turn,
      calls_left: r.info.callsLeft,
      ...(r.info.reason === undefined ? {} : { reason: r.info.reason }),
    },
    reward: r.done ? r.reward : null,
    done: r.done,
  };
}

/** One line naming the first bad field (as the app's default hook writes it). */
export const zodLine = (error: z.ZodError): string => {
  const issue = error.issues[0]!;
  const more = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more)` : '';
  return `${issue.path.join('.') || '(body)'}: ${issue.message}${more}`;
};

// ---- single-turn tasks ----------------------------------------------------------------------

/** The first observation of an episode: a task from the live curriculum. */
export async function resetObservation(run: ServedRun) {
  const [t] = (await run.sample(1)).tasks;
  return {
    observation: {
      task_id: t!.id,
      prompt: t!.prompt,
      type: t!.type,
      family: t!.family,
      level: t!.level,
      answer_kind: t!.answer_kind,
    },
    reward: null,
    done: false,
  };
}

/** Scores one completion of a sampled task: the episode's only step. */
export async function stepObservation(
  run: ServedRun,
  metrics: Metrics,
  taskId: string,
  completion: string,
  requestId?: string,
) {
  const key = requestId ? { key: `openenv:${requestId}`, digest: JSON.stringify([taskId, completion]) } : undefined;
  const res = await run.score([{ task_id: taskId, completion }], key);
  metrics.scored(res, 0);
  const r = res.results[0]!;
  return { observation: { task_id: taskId, answer: r.answer, reason: r.reason }, reward: r.reward, done: true };
}
