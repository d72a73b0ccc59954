// The HTTP face of a served run: Hono routes declared with their zod schemas, so that validation
// and the OpenAPI 3.1 document (/openapi.json) come from one place. Every error is a 4xx with one
// line, `{"error": "…"}`, except a fault of the server itself (500, logged).
import { createHash, timingSafeEqual } from 'node:crypto';
import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { Task } from '../../core/task.js';
import type { Metrics } from './metrics.js';
import { StoreError } from '../run/index.js';
import { ServeError, type ServedRun } from './served-run.js';
import { VerificationUnavailable } from './verifier.js';
import {
  ErrorSchema,
  HealthSchema,
  UnavailableSchema,
  ProbeReportSchema,
  ProbeSetSchema,
  SampledTaskSchema,
  CompactSampledTaskSchema,
  ScoreResponseSchema,
  TokenizerSchema,
  ViewQuerySchema,
  ViewRuleSchema,
  StatsSchema,
  TaskSchema,
  VerifyResponseSchema,
  requestSchemas,
} from './schemas.js';
import { openEnvRoutes } from './openenv.js';
import { readBody } from './body.js';
import { answerIn, itemsIn, viewField } from './served-view.js';
import { hfTokenizer } from '../solver/index.js';
import { dashboardApp } from '../dashboard/server.js';

export interface AppOptions {
  run: ServedRun;
  metrics: Metrics;
  /** Bearer token every route but /health requires, when set. */
  token?: string;
  log: (line: string) => void;
  /** The runs directory: when given, the dashboard of this run is mounted at /dashboard (read-only). */
  dashboardRunsDir?: string;
}

const json = <T extends z.ZodType>(schema: T, description: string) => ({
  content: { 'application/json': { schema } },
  description,
});
const errors = (...codes: (400 | 401 | 404 | 409 | 413 | 422 | 503)[]) =>
  Object.fromEntries(codes.map((c) => [c, json(ErrorSchema, ERROR_TEXT[c])]));
const ERROR_TEXT = {
  400: 'Malformed request (the line names the field)',
  401: 'Missing or wrong bearer token',
  404: 'Unknown task id',
  409: 'Idempotency key reused with another body',
  413: 'Body over the size limit',
  422: 'Request valid in form but not in content',
  503: 'The run store or the verification queue cannot be reached now: nothing of the request was acknowledged; retry after Retry-After seconds (here or on another replica)',
};
/** Seconds a client waits before retrying a request that got a 503 (the store or the queue was away). */
export const RETRY_AFTER_S = 1;
const body = <T extends z.ZodType>(schema: T) => ({
  body: { content: { 'application/json': { schema } }, required: true },
});

/** One line naming the first bad field. */
function zodLine(error: z.ZodError): string {
  const issue = error.issues[0]!;
  const path = issue.path.join('.') || '(body)';
  const more = error.issues.length > 1 ? ` (and ${error.issues.length - 1} more)` : '';
  return `${path}: ${issue.message}${more}`;
}

export const fail = (c: Context, status: 400 | 401 | 404 | 409 | 413 | 422, error: string) => c.json({ error }, status);

export function createApp(opts: AppOptions) {
  const { run, metrics } = opts;
  const req = requestSchemas(run.config.serve);
  const app = new OpenAPIHono({
    defaultHook: (result, c) => {
      if (!result.success) return fail(c, 400, zodLine(result.error));
    },
  });
  answerErrors(app, opts.log);
  middleware(app, opts);
  healthRoute(app, run);
  trainerRoutes(app, run, metrics, req);
  verifyRoute(app, run, req);
  readingRoutes(app, run, metrics);
  openEnvRoutes(app, { run, metrics, step: req.step });

  // The dashboard of this run (src/dashboard): its own read-only connection to the run store, not in the OpenAPI document.
  if (opts.dashboardRunsDir)
    app.route('/dashboard', dashboardApp({ runsDir: opts.dashboardRunsDir, runId: run.runId, only: [run.runId] }));

  app.doc31('/openapi.json', {
    openapi: '3.1.0',
    info: {
      title: 'cogen serve',
      version: '1',
      description:
        'A live cogen run for a trainer: sample tasks from the curriculum, score completions in the sandbox, report probes, read the skill graph. OpenEnv simulation endpoints (/reset, /step, /state, /schema) and a WebSocket at /ws.',
    },
  });
  return app;
}

type App = OpenAPIHono;
type Requests = ReturnType<typeof requestSchemas>;

/** Every error as one line: 4xx for the client's, 503 (with Retry-After) for the store's or queue's, 500 logged. */
function answerErrors(app: App, log: (line: string) => void) {
  app.onError((err, c) => {
    if (err instanceof ServeError) return fail(c, err.status, err.message);
    if (err instanceof HTTPException && err.status < 500)
      return fail(c, err.status === 413 ? 413 : 400, err.message || 'bad request');
    // The run store or the verification queue failed, or the run is closing: nothing of this request
    // was acknowledged, and the same request (with its idempotency key) may be sent again.
    if (err instanceof StoreError || err instanceof VerificationUnavailable)
      return c.json({ error: err.message }, 503, { 'Retry-After': String(RETRY_AFTER_S) });
    log(`server error on ${c.req.method} ${c.req.path}: ${err.stack ?? err.message}`);
    return c.json({ error: `internal error: ${err.message.split('\n')[0]}` }, 500);
  });
  app.notFound((c) => c.json({ error: `no route ${c.req.method} ${c.req.path}` }, 404));
}

/** Before every route: the request's metrics, the bearer token (when set), the body's size limit. */
function middleware(app: App, opts: AppOptions) {
  const cfg = opts.run.config.serve;
  app.use('*', async (c, next) => {
    const t0 = performance.now();
    await next();
    opts.metrics.request(c.req.routePath ?? c.req.path, c.res.status, (performance.now() - t0) / 1000);
  });
  if (opts.token) app.use('*', bearer(opts.token));
  app.use(
    '*',
    readBody(cfg.maxBodyBytes, (c) => fail(c, 413, `request body over ${cfg.maxBodyBytes} bytes`)),
  );
}

/** GET /health: readiness, with no token needed. */
function healthRoute(app: App, run: ServedRun) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/health',
      summary: 'Readiness (no token needed): 503 while the run store or the verification queue cannot be reached',
      responses: {
        200: json(HealthSchema, 'The server is up'),
        503: json(UnavailableSchema, 'The store or the queue is away'),
      },
    }),
    async (c) => {
      const why = await run.unavailable();
      if (why)
        return c.json({ status: 'unavailable' as const, run_id: run.runId, reason: why }, 503, {
          'Retry-After': String(RETRY_AFTER_S),
        });
      return c.json({ status: 'healthy' as const, run_id: run.runId }, 200);
    },
  );
}

/** What a trainer calls: sample tasks, score completions, read and report the probes. */
function trainerRoutes(app: App, run: ServedRun, metrics: Metrics, req: Requests) {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/sample',
      summary: 'Tasks picked by the live curriculum',
      request: body(req.sample),
      responses: {
        200: json(
          z.object({
            run_id: z.string(),
            view: ViewRuleSchema.optional(),
            tasks: z.array(z.union([SampledTaskSchema, CompactSampledTaskSchema])),
          }),
          'Sampled tasks (in the compact view, with the rule it is written by)',
        ),
        ...errors(400, 401, 413, 503),
      },
    }),
    async (c) => {
      const { n, view, one_arm } = c.req.valid('json');
      const { tasks } = await run.sample(n, view, one_arm);
      metrics.sampled.inc(tasks.length);
      return c.json({ run_id: run.runId, ...viewField(view), tasks }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/score',
      summary: 'Score completions of sampled tasks',
      description:
        'Items with the same task id form one group, which feeds the curriculum. Every acknowledged score is in the run store before the response.',
      request: { ...body(req.score), headers: z.object({ 'idempotency-key': z.string().min(1).max(200).optional() }) },
      responses: {
        200: json(ScoreResponseSchema, 'One result per item, in order'),
        ...errors(400, 401, 404, 409, 413, 422, 503),
      },
    }),
    async (c) => {
      const b = c.req.valid('json');
      const key = c.req.valid('header')['idempotency-key'] ?? b.idempotency_key;
      const items = await itemsIn(b.view, b.items, 'items', (id) => run.knownTask(id));
      // The digest of a request in the chat view is as it always was; one in the compact view also
      // says so, so that the same key reused across views is a reuse with another body.
      const sent = b.view === 'chat' ? b.items : { view: b.view, items: b.items };
      const digest = key === undefined ? undefined : createHash('sha256').update(JSON.stringify(sent)).digest('hex');
      const t0 = performance.now();
      const res = await run.score(items, key === undefined ? undefined : { key, digest: digest! });
      metrics.scored(res, (performance.now() - t0) / 1000);
      return c.json(res, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/probes',
      summary: 'The current evaluation set (held-out probes) and whether a report is due',
      request: { query: ViewQuerySchema },
      responses: { 200: json(ProbeSetSchema, 'The probes'), ...errors(400, 401, 503) },
    }),
    async (c) => {
      const { view } = c.req.valid('query');
      return c.json({ ...(await run.probeSet(view)), ...viewField(view) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/probes',
      summary: 'Report greedy answers to the probes of a round',
      description: 'The first report of the current round turns per-skill accuracy into learned / forgotten events.',
      request: body(req.probes),
      responses: {
        200: json(ProbeReportSchema, 'Accuracy and skill events (accepted: false for a stale or repeated round)'),
        ...errors(400, 401, 413, 422, 503),
      },
    }),
    async (c) => {
      const b = c.req.valid('json');
      const report = await run.reportProbes(
        b.round,
        await itemsIn(b.view, b.answers, 'answers', (id) => run.knownTask(id)),
      );
      if (report.accepted) metrics.probeReports.inc();
      return c.json(report, 200);
    },
  );
}

/** POST /v1/verify: any task's answer scored, statelessly. */
function verifyRoute(app: App, run: ServedRun, req: Requests) {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/verify',
      summary: 'Score an answer to any task, statelessly',
      description: 'For exported tasks (a veRL compute_score, a TRL reward function): nothing is recorded.',
      request: body(req.verify),
      responses: { 200: json(VerifyResponseSchema, 'The verdict'), ...errors(400, 401, 413, 503) },
    }),
    async (c) => {
      const b = c.req.valid('json');
      const task = parseTask(b.task);
      if (typeof task === 'string') throw new HTTPException(400, { message: task });
      const completion = answerIn(b.view, b.completion, 'completion', task);
      const [{ answer, verdict }] = (await run.verifier.score([{ task, completion }])) as [
        { answer: string; verdict: { reward: number; reason?: string } },
      ];
      return c.json({ reward: verdict.reward, reason: verdict.reason ?? null, answer }, 200);
    },
  );
}

/** What the run shows: its skill graph, the solver's tokenizer, its counters and metrics. */
function readingRoutes(app: App, run: ServedRun, metrics: Metrics) {
  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/skills',
      summary: 'The skill graph of this run: mastery, frontier or timeline',
      request: { query: z.object({ view: z.enum(['mastery', 'frontier', 'timeline']).default('mastery') }) },
      responses: {
        200: json(
          z.object({ run_id: z.string(), view: z.string(), rows: z.array(z.record(z.string(), z.any())) }),
          "The view's rows",
        ),
        ...errors(400, 401),
      },
    }),
    async (c) => {
      const { view } = c.req.valid('query');
      const rows = (await run.skills(view)) as unknown as Record<string, unknown>[];
      return c.json({ run_id: run.runId, view, rows }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/tokenizer',
      summary: "The built-in solver's vocabulary as a Hugging Face tokenizer.json",
      description:
        "For a model trained on the compact view: tokenizers' Tokenizer.from_str reads a compact prompt as the solver's token ids (docs/train-your-own-model.md).",
      responses: { 200: json(TokenizerSchema, 'The tokenizer file'), ...errors(401) },
    }),
    async (c) => c.json(hfTokenizer() as Record<string, unknown>, 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/stats',
      summary: 'Counters of the run, from its durable state',
      responses: { 200: json(StatsSchema, 'Counters'), ...errors(401, 503) },
    }),
    async (c) => c.json(await run.stats(), 200),
  );

  app.get('/metrics', async (c) =>
    c.text(await metrics.render(await run.stats(), (await run.verifier.queueStats?.()) ?? null), 200, {
      'content-type': metrics.contentType,
    }),
  );
}

/** The task of a verify request (object or JSON text), or a one-line reason it is not one. */
function parseTask(input: unknown): Task | string {
  let value = input;
  if (typeof input === 'string') {
    try {
      value = JSON.parse(input);
    } catch {
      return 'task: not valid JSON text';
    }
  }
  const r = TaskSchema.safeParse(value);
  if (!r.success) return `task.${zodLine(r.error)}`;
  const t = r.data as Record<string, unknown>;
  // Verification reads only the fields the schema checked; the rest of Task is filled for its type.
  return {
    id: '',
    family: '',
    level: 0,
    skills: [],
    program: '',
    hash: '',
    parent: null,
    proposer: '',
    input: [],
    ...t,
  } as unknown as Task;
}

/** Requires `Authorization: Bearer <token>` on every route but /health; compared in constant time. */
function bearer(token: string) {
  const want = createHash('sha256').update(token).digest();
  return async (c: Context, next: () => Promise<void>) => {
    if (c.req.path === '/health') return next();
    const got = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization') ?? '')?.[1] ?? '';
    if (!timingSafeEqual(createHash('sha256').update(got).digest(), want))
      return fail(c, 401, 'missing or wrong bearer token (Authorization: Bearer <COGEN_TOKEN>)');
    return next();
  };
}
