// OpenEnv's WebSocket at /ws (openenv.ts describes the protocol): one session per connection, a
// message {"type": "reset" | "step" | "state" | "close", "data": …} answered with an observation, the
// session's state or an error; a session remembers its task or environment episode between messages.
import { randomUUID } from 'node:crypto';
import { createNodeWebSocket } from '@hono/node-ws';
import { z, type OpenAPIHono } from '@hono/zod-openapi';
import type { WSContext } from 'hono/ws';
import type { Metrics } from './metrics.js';
import { ServeError, type ServedRun } from './served-run.js';
import {
  EnvResetRequestSchema,
  ToolCallSchema,
  envReset,
  envStep,
  resetObservation,
  stepObservation,
  zodLine,
} from './openenv-episodes.js';

const WsStepAction = z.object({ completion: z.string(), task_id: z.string().min(1).max(200).optional() });

interface Session {
  episodeId: string | null;
  taskId: string | null;
  envEpisode: string | null;
  steps: number;
  admitted: boolean;
}

/** What a message's handler works with: the run, the session, and the socket it answers on. */
interface Turn {
  run: ServedRun;
  metrics: Metrics;
  session: Session;
  socket: WSContext;
}

const error = (message: string, code: string) => JSON.stringify({ type: 'error', data: { message, code } });
const observation = (data: unknown) => JSON.stringify({ type: 'observation', data });

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
      const session: Session = { episodeId: null, taskId: null, envEpisode: null, steps: 0, admitted: false };
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
          await answer({ run, metrics, session, socket }, e.data);
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

/** Answers one message of an admitted session; every failure is an error message, never a thrown one. */
async function answer(t: Turn, raw: unknown): Promise<void> {
  const { session, socket } = t;
  let msg: { type?: unknown; data?: unknown };
  try {
    msg = JSON.parse(typeof raw === 'string' ? raw : Buffer.from(raw as ArrayBuffer).toString('utf8')) as typeof msg;
  } catch (err) {
    socket.send(error(`Invalid JSON: ${(err as Error).message}`, 'INVALID_JSON'));
    return;
  }
  try {
    if (msg?.type === 'reset' && msg.data && typeof msg.data === 'object' && 'env' in msg.data) {
      await envResetMessage(t, msg.data);
    } else if (msg?.type === 'step' && session.envEpisode) {
      await envStepMessage(t, session.envEpisode, msg.data);
    } else if (msg?.type === 'reset') {
      await resetMessage(t, msg.data);
    } else if (msg?.type === 'step') {
      await stepMessage(t, msg.data);
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
}

/** A reset that names an environment: the session's episode becomes the new one. */
async function envResetMessage({ run, session, socket }: Turn, data: object): Promise<void> {
  const req = EnvResetRequestSchema.safeParse(data);
  if (!req.success || !req.data.env) {
    socket.send(error(req.success ? 'env: expected an object' : zodLine(req.error), 'VALIDATION_ERROR'));
    return;
  }
  const obs = await envReset(run, req.data.env, req.data.seed, req.data.episode_id);
  session.episodeId = obs.observation.episode_id;
  session.envEpisode = obs.observation.episode_id;
  session.taskId = null;
  session.steps = 0;
  socket.send(observation(obs));
}

/** One tool call of the session's environment episode. */
async function envStepMessage({ run, session, socket }: Turn, episodeId: string, data: unknown): Promise<void> {
  const action = ToolCallSchema.safeParse(data);
  if (!action.success) {
    socket.send(error(`action.${zodLine(action.error)}`, 'VALIDATION_ERROR'));
    return;
  }
  const obs = await envStep(run, episodeId, action.data);
  session.steps++;
  socket.send(observation(obs));
}

/** A reset to a single-turn task: the session remembers the task, so a step may name none. */
async function resetMessage({ run, session, socket }: Turn, data: unknown): Promise<void> {
  const d = (data && typeof data === 'object' ? data : {}) as { episode_id?: unknown };
  session.envEpisode = null;
  const obs = await resetObservation(run);
  session.episodeId = typeof d.episode_id === 'string' ? d.episode_id : randomUUID();
  session.taskId = obs.observation.task_id;
  session.steps = 0;
  socket.send(observation(obs));
}

/** A completion of the named task, or of the session's: scored, the episode's only step. */
async function stepMessage({ run, metrics, session, socket }: Turn, data: unknown): Promise<void> {
  const action = WsStepAction.safeParse(data);
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
  socket.send(observation(obs));
}
