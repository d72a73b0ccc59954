// OpenEnv's protocol (openenv-core 0.3), so that OpenEnv's own clients work unchanged:
//   HTTP, simulation mode: POST /reset {seed?, episode_id?} and POST /step {action}, each answering
//     {observation, reward, done}; GET /state, /schema, /metadata (/health is the app's). Each HTTP
//     call stands alone, so a step names its task: action = {task_id, completion}.
//   WebSocket /ws, one session per connection: {"type": "reset" | "step" | "state" | "close",
//     "data": …} answered {"type": "observation" | "state" | "error", "data": …}. A session
//     remembers the task of its last reset, so a step's action may be just {completion}.
// Today's single-turn tasks take one step: reset hands out a task from the live curriculum, step
// scores the completion as a group of one, which feeds the curriculum like any score.
// Environment episodes (envs/, multi-turn): a reset that names an environment, {env: {kind, family?,
// level?}, seed?}, starts one and answers the first prompt and the tools; each step is one tool call,
// action = {episode_id, name, arguments}, answered with the tool's result, and the final verified
// reward when the episode ends (a submit, a malformed call, or the budget). On /ws the session
// remembers its episode, so a step's action may be just {name, arguments}. Finished episodes are
// recorded in the run store (`cogen export --what trajectories`); they do not feed the curriculum.
// This file holds the HTTP routes; the episodes are openenv-episodes.ts's, the /ws sessions openenv-ws.ts's.
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Metrics } from './metrics.js';
import type { ServedRun } from './served-run.js';
import { ErrorSchema, ObservationSchema, StateSchema, StepResponseSchema } from './schemas.js';
import {
  EnvResetRequestSchema,
  EnvStepRequestSchema,
  EnvStepResponseSchema,
  envReset,
  envStep,
  resetObservation,
  stepObservation,
  zodLine,
} from './openenv-episodes.js';

export { openEnvSessions } from './openenv-ws.js';

interface Deps {
  run: ServedRun;
  metrics: Metrics;
  step: z.ZodType<{ action: { task_id: string; completion: string }; request_id?: string }>;
}

const json = <T extends z.ZodType>(schema: T, description: string) => ({
  content: { 'application/json': { schema } },
  description,
});

export function openEnvRoutes(app: OpenAPIHono, deps: Deps) {
  resetRoute(app, deps.run);
  stepRoute(app, deps);
  describingRoutes(app, deps.run);
}

/** POST /reset: a task from the live curriculum, or an environment episode's first observation. */
function resetRoute(app: OpenAPIHono, run: ServedRun) {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/reset',
      tags: ['OpenEnv'],
      summary:
        'Start an episode: a task from the live curriculum, or an environment episode when the body names one (env)',
      request: { body: { content: { 'application/json': { schema: EnvResetRequestSchema } }, required: false } },
      responses: {
        200: json(z.union([StepResponseSchema, EnvStepResponseSchema]), 'The first observation'),
        400: json(ErrorSchema, 'Malformed request'),
        422: json(ErrorSchema, 'No such environment can be made'),
      },
    }),
    async (c) => {
      const b = c.req.valid('json') as z.infer<typeof EnvResetRequestSchema> | undefined;
      if (b?.env) return c.json(await envReset(run, b.env, b.seed, b.episode_id), 200);
      return c.json(await resetObservation(run), 200);
    },
  );
}

/** POST /step: a task's completion scored, or one tool call of an environment episode. */
function stepRoute(app: OpenAPIHono, deps: Deps) {
  const { run, metrics } = deps;
  app.openapi(
    createRoute({
      method: 'post',
      path: '/step',
      tags: ['OpenEnv'],
      summary:
        'Answer the task (the completion is scored and the episode ends), or make one tool call of an environment episode',
      request: {
        body: {
          content: { 'application/json': { schema: z.union([deps.step, EnvStepRequestSchema]) } },
          required: true,
        },
      },
      responses: {
        200: json(z.union([StepResponseSchema, EnvStepResponseSchema]), 'The reward, or the tool result'),
        400: json(ErrorSchema, 'Malformed request'),
        404: json(ErrorSchema, 'Unknown task id or episode id'),
        409: json(ErrorSchema, 'request_id reused with another action'),
        422: json(ErrorSchema, 'Not a task this run hands out'),
      },
    }),
    async (c) => {
      const b = c.req.valid('json');
      if ('episode_id' in b.action) return c.json(await envStep(run, b.action.episode_id, b.action), 200);
      const a = b.action as { task_id: string; completion: string };
      return c.json(await stepObservation(run, metrics, a.task_id, a.completion, b.request_id), 200);
    },
    // A malformed body is reported against the shape it was meant to have: an environment step when
    // its action names an episode, else a single-turn step (the line it has always had).
    (async (
      result: { success: boolean; error?: z.ZodError },
      c: { req: { json(): Promise<unknown> }; json(body: object, status: 400): Response },
    ) => {
      if (result.success) return undefined;
      const raw = (await c.req.json().catch(() => null)) as { action?: { episode_id?: unknown } } | null;
      const schema =
        raw?.action && typeof raw.action === 'object' && 'episode_id' in raw.action ? EnvStepRequestSchema : deps.step;
      const again = schema.safeParse(raw);
      return c.json({ error: again.success ? zodLine(result.error!) : zodLine(again.error) }, 400);
    }) as never,
  );
}

/** GET /state, /schema and /metadata: what an HTTP episode holds and what this environment is. */
function describingRoutes(app: OpenAPIHono, run: ServedRun) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/state',
      tags: ['OpenEnv'],
      summary: 'State of a stateless HTTP episode (sessions live on /ws)',
      responses: { 200: json(StateSchema, 'The state') },
    }),
    (c) => c.json({ episode_id: null, step_count: 0, task_id: null }, 200),
  );
  app.openapi(
    createRoute({
      method: 'get',
      path: '/schema',
      tags: ['OpenEnv'],
      summary: 'JSON schemas of the action, observation and state',
      responses: {
        200: json(
          z.object({
            action: z.record(z.string(), z.any()),
            observation: z.record(z.string(), z.any()),
            state: z.record(z.string(), z.any()),
          }),
          'The schemas',
        ),
      },
    }),
    (c) =>
      c.json(
        {
          action: z.toJSONSchema(z.object({ task_id: z.string(), completion: z.string() })) as Record<string, unknown>,
          observation: z.toJSONSchema(ObservationSchema) as Record<string, unknown>,
          state: z.toJSONSchema(StateSchema) as Record<string, unknown>,
        },
        200,
      ),
  );
  app.openapi(
    createRoute({
      method: 'get',
      path: '/metadata',
      tags: ['OpenEnv'],
      summary: 'What this environment is',
      responses: {
        200: json(z.object({ name: z.string(), description: z.string(), version: z.string() }), 'The metadata'),
      },
    }),
    (c) =>
      c.json(
        {
          name: 'cogen',
          description: `cogen served run ${run.runId}: programming tasks from a live curriculum, verified in a sandbox`,
          version: '0.1.0',
        },
        200,
      ),
  );
}
