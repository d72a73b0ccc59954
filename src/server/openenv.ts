// OpenEnv's protocol (openenv-core 0.3), so that OpenEnv's own clients work unchanged:
//   HTTP, simulation mode: POST /reset {seed?, episode_id?} and POST /step {action}, each answering
//     {observation, reward, done}; GET /state, /schema, /metadata (/health is the app's). Each HTTP
//     call stands alone, so a step names its task: action = {task_id, completion}.
//   WebSocket /ws, one session per connection: {"type": "reset" | "step" | "state" | "close",
//     "data": …} answered {"type": "observation" | "state" | "error", "data": …}. A session
//     remembers the task of its last reset, so a step's action may be just {completion}.
// Today's single-turn tasks take one step: reset hands out a task from the live curriculum, step
// scores the completion as a group of one, which feeds the curriculum like any score.
import { randomUUID } from 'node:crypto';
import { createNodeWebSocket } from '@hono/node-ws';
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Metrics } from './metrics.js';
import { ServeError, type ServedRun } from './served-run.js';
import { ErrorSchema, ObservationSchema, ResetRequestSchema, StateSchema, StepResponseSchema } from './schemas.js';

interface Deps {
  run: ServedRun;
  metrics: Metrics;
  step: z.ZodType<{ action: { task_id: string; completion: string }; request_id?: string }>;
}

const json = <T extends z.ZodType>(schema: T, description: string) => ({ content: { 'application/json': { schema } }, description });
const WsStepAction = z.object({ completion: z.string(), task_id: z.string().min(1).max(200).optional() });

/** The first observation of an episode: a task from the live curriculum. */
async function resetObservation(run: ServedRun) {
  const [t] = (await run.sample(1)).tasks;
  return { observation: { task_id: t!.id, prompt: t!.prompt, type: t!.type, family: t!.family, level: t!.level, answer_kind: t!.answer_kind }, reward: null, done: false };
}

/** Scores one completion of a sampled task: the episode's only step. */
async function stepObservation(run: ServedRun, metrics: Metrics, taskId: string, completion: string, requestId?: string) {
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
      summary: 'Start an episode: a task from the live curriculum',
      request: { body: { content: { 'application/json': { schema: ResetRequestSchema } }, required: false } },
      responses: { 200: json(StepResponseSchema, 'The first observation'), 400: json(ErrorSchema, 'Malformed request') },
    }),
    async (c) => c.json(await resetObservation(run), 200),
  );
  app.openapi(
    createRoute({
      method: 'post',
      path: '/step',
      tags: ['OpenEnv'],
      summary: 'Answer the task: the completion is scored and the episode ends',
      request: { body: { content: { 'application/json': { schema: deps.step } }, required: true } },
      responses: {
        200: json(StepResponseSchema, 'The reward'),
        400: json(ErrorSchema, 'Malformed request'),
        404: json(ErrorSchema, 'Unknown task id'),
        409: json(ErrorSchema, 'request_id reused with another action'),
        422: json(ErrorSchema, 'Not a task this run hands out'),
      },
    }),
    async (c) => {
      const b = c.req.valid('json');
      return c.json(await stepObservation(run, metrics, b.action.task_id, b.action.completion, b.request_id), 200);
    },
  );
  app.openapi(
    createRoute({ method: 'get', path: '/state', tags: ['OpenEnv'], summary: 'State of a stateless HTTP episode (sessions live on /ws)', responses: { 200: json(StateSchema, 'The state') } }),
    (c) => c.json({ episode_id: null, step_count: 0, task_id: null }, 200),
  );
  app.openapi(
    createRoute({
      method: 'get',
      path: '/schema',
      tags: ['OpenEnv'],
      summary: 'JSON schemas of the action, observation and state',
      responses: { 200: json(z.object({ action: z.record(z.string(), z.any()), observation: z.record(z.string(), z.any()), state: z.record(z.string(), z.any()) }), 'The schemas') },
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
      responses: { 200: json(z.object({ name: z.string(), description: z.string(), version: z.string() }), 'The metadata') },
    }),
    (c) => c.json({ name: 'cogen', description: `cogen served run ${run.runId}: programming tasks from a live curriculum, verified in a sandbox`, version: '0.1.0' }, 200),
  );
}

/** The WebSocket sessions; returns what the HTTP server calls once it listens, and how to end every session. */
export function openEnvSessions(app: OpenAPIHono, deps: { run: ServedRun; metrics: Metrics; maxSessions: number; maxMessageBytes: number }) {
  const { run, metrics } = deps;
  const ws = createNodeWebSocket({ app });
  // ws reads the payload cap from its options at each upgrade.
  (ws.wss.options as { maxPayload?: number }).maxPayload = deps.maxMessageBytes;
  let open = 0;
  app.get(
    '/ws',
    ws.upgradeWebSocket(() => {
      const session = { episodeId: null as string | null, taskId: null as string | null, steps: 0, admitted: false };
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
            msg = JSON.parse(typeof e.data === 'string' ? e.data : Buffer.from(e.data as ArrayBuffer).toString('utf8')) as typeof msg;
          } catch (err) {
            socket.send(error(`Invalid JSON: ${(err as Error).message}`, 'INVALID_JSON'));
            return;
          }
          try {
            if (msg?.type === 'reset') {
              const data = (msg.data && typeof msg.data === 'object' ? msg.data : {}) as { episode_id?: unknown };
              const obs = await resetObservation(run);
              session.episodeId = typeof data.episode_id === 'string' ? data.episode_id : randomUUID();
              session.taskId = obs.observation.task_id;
              session.steps = 0;
              socket.send(JSON.stringify({ type: 'observation', data: obs }));
            } else if (msg?.type === 'step') {
              const action = WsStepAction.safeParse(msg.data);
              if (!action.success) {
                socket.send(error(`action.${action.error.issues[0]!.path.join('.') || '(root)'}: ${action.error.issues[0]!.message}`, 'VALIDATION_ERROR'));
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
              socket.send(JSON.stringify({ type: 'state', data: { episode_id: session.episodeId, step_count: session.steps, task_id: session.taskId } }));
            } else if (msg?.type === 'close') {
              socket.close(1000, 'closed by client');
            } else {
              socket.send(error(`unknown message type ${JSON.stringify(msg?.type ?? null)} (reset, step, state or close)`, 'UNKNOWN_TYPE'));
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
