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
import { randomUUID } from 'node:crypto';
import { createNodeWebSocket } from '@hono/node-ws';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Metrics } from './metrics.js';
import { ServeError, type ServedRun } from './served-run.js';
import { ErrorSchema, ObservationSchema, ResetRequestSchema, StateSchema, StepResponseSchema } from './schemas.js';
import { ENV_KINDS, EnvSessionError, EnvSessions, trajectoryMessages, type EnvAction } from '../../envs/index.js';
import { families as codeFamilies } from '../../generators/index.js';

// ---- environment episodes -------------------------------------------------------------------

const EnvRequestSchema = z.object({
  kind: z.enum(ENV_KINDS),
  family: z.string().min(1).max(60).optional(),
  level: z.number().int().min(0).max(9).optional(),
});
const EnvResetRequestSchema = ResetRequestSchema.extend({ env: EnvRequestSchema.optional() }).openapi(
  'EnvResetRequest',
);
const ToolCallSchema = z.object({
  name: z.string().max(200),
  arguments: z.union([z.string().max(64 * 1024), z.record(z.string(), z.any())]),
});
const EnvStepRequestSchema = z
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
const EnvStepResponseSchema = z
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

async function envReset(
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

async function envStep(run: ServedRun, episodeId: string, action: EnvAction) {
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
const zodLine = (error: z.ZodError): string => {
  const issue = error.issues[0]!;
  const more = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more)` : '';
  return `${issue.path.join('.') || '(body)'}: ${issue.message}${more}`;
};

// ---- routes -----------------------------------------------------------------------------------

interface Deps {
  run: ServedRun;
  metrics: Metrics;
  step: z.ZodType<{ action: { task_id: string; completion: string }; request_id?: string }>;
}

const json = <T extends z.ZodType>(schema: T, description: string) => ({
  content: { 'application/json': { schema } },
  description,
});
const WsStepAction = z.object({ completion: z.string(), task_id: z.string().min(1).max(200).optional() });

/** The first observation of an episode: a task from the live curriculum. */
async function resetObservation(run: ServedRun) {
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
async function stepObservation(
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

export function openEnvRoutes(app: OpenAPIHono, deps: Deps) {
  const { run, metrics } = deps;
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

/** The WebSocket sessions; returns what the HTTP server calls once it listens, and how to end every session. */
export function openEnvSessions(
  app: OpenAPIHono,
  deps: { run: ServedRun; metrics: Metrics; maxSessions: number; maxMessageBytes: number },
) {
  const { run, metrics } = deps;
  const ws = createNodeWebSocket({ app });
  // ws reads the payload cap from its options at each upgrade.
  (ws.wss.options as { maxPayload?: number }).maxPayload = deps.maxMessageBytes;
  let open = 0;
  app.get(
    '/ws',
    ws.upgradeWebSocket(() => {
      const session = {
        episodeId: null as string | null,
        taskId: null as string | null,
        envEpisode: null as string | null,
        steps: 0,
        admitted: false,
      };
      const error = (message: string, code: string) => JSON.stringify({ type: 'error', data: { message, code } });
      return {
        onOpen(_e, socket) {
          if (open >= deps.maxSessions) {
            socket.send(error(`at most ${deps.maxSessions} sessions at once`, 'CAPACITY_REACHED'));
            socket.close(1013, 'capacity reached');
            return;
          }
          open++;
          session.admitted = true;
        },
        onClose() {
          if (session.admitted) open--;
          session.admitted = false;
        },
        async onMessage(e, socket) {
          if (!session.admitted) return;
          let msg: { type?: unknown; data?: unknown };
          try {
            msg = JSON.parse(
              typeof e.data === 'string' ? e.data : Buffer.from(e.data as ArrayBuffer).toString('utf8'),
            ) as typeof msg;
          } catch (err) {
            socket.send(error(`Invalid JSON: ${(err as Error).message}`, 'INVALID_JSON'));
            return;
          }
          try {
            if (msg?.type === 'reset' && msg.data && typeof msg.data === 'object' && 'env' in msg.data) {
              const req = EnvResetRequestSchema.safeParse(msg.data);
              if (!req.success || !req.data.env) {
                socket.send(error(req.success ? 'env: expected an object' : zodLine(req.error), 'VALIDATION_ERROR'));
                return;
              }
              const obs = await envReset(run, req.data.env, req.data.seed, req.data.episode_id);
              session.episodeId = obs.observation.episode_id;
              session.envEpisode = obs.observation.episode_id;
              session.taskId = null;
              session.steps = 0;
              socket.send(JSON.stringify({ type: 'observation', data: obs }));
            } else if (msg?.type === 'step' && session.envEpisode) {
              const action = ToolCallSchema.safeParse(msg.data);
              if (!action.success) {
                socket.send(error(`action.${zodLine(action.error)}`, 'VALIDATION_ERROR'));
                return;
              }
              const obs = await envStep(run, session.envEpisode, action.data);
              session.steps++;
              socket.send(JSON.stringify({ type: 'observation', data: obs }));
            } else if (msg?.type === 'reset') {
              const data = (msg.data && typeof msg.data === 'object' ? msg.data : {}) as { episode_id?: unknown };
              session.envEpisode = null;
              const obs = await resetObservation(run);
              session.episodeId = typeof data.episode_id === 'string' ? data.episode_id : randomUUID();
              session.taskId = obs.observation.task_id;
              session.steps = 0;
              socket.send(JSON.stringify({ type: 'observation', data: obs }));
            } else if (msg?.type === 'step') {
              const action = WsStepAction.safeParse(msg.data);
              if (!action.success) {
                socket.send(
                  error(
                    `action.${action.error.issues[0]!.path.join('.') || '(root)'}: ${action.error.issues[0]!.message}`,
                    'VALIDATION_ERROR',
                  ),
                );
                return;
              }
              const taskId = action.data.task_id ?? session.taskId;
              if (!taskId) {
                socket.send(error('step before reset: no task in this session', 'VALIDATION_ERROR'));
                return;
              }
              const obs = await stepObservation(run, metrics, taskId, action.data.completion);
              session.steps++;
              socket.send(JSON.stringify({ type: 'observation', data: obs }));
            } else if (msg?.type === 'state') {
              const env = session.envEpisode ? { env_episode: session.envEpisode } : {};
              socket.send(
                JSON.stringify({
                  type: 'state',
                  data: { episode_id: session.episodeId, step_count: session.steps, task_id: session.taskId, ...env },
                }),
              );
            } else if (msg?.type === 'close') {
              socket.close(1000, 'closed by client');
            } else {
              socket.send(
                error(
                  `unknown message type ${JSON.stringify(msg?.type ?? null)} (reset, step, state or close)`,
                  'UNKNOWN_TYPE',
                ),
              );
            }
          } catch (err) {
            const code = err instanceof ServeError ? 'VALIDATION_ERROR' : 'EXECUTION_ERROR';
            socket.send(error((err as Error).message.split('\n')[0]!, code));
          }
        },
      };
    }),
  );
  return {
    inject: ws.injectWebSocket,
    /** Ends every open session (a stopping server does not wait for clients to hang up). */
    closeAll: () => {
      for (const client of ws.wss.clients) client.terminate();
    },
  };
}
