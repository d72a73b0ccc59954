// `cogen serve`: a served run behind HTTP (docs/DESIGN.md, "Serving trainers"). Loopback by
// default; any other address needs a bearer token from the environment (COGEN_TOKEN), which is
// never logged, stored or returned.
import { isLoopback } from './loopback.js';
import { serve as listen, type ServerType } from '@hono/node-server';
import type { RunConfig } from '../run/index.js';
import { UserError } from '../../core/errors.js';
import { createApp } from './app.js';
import { queueVerifier } from '../workers/remote.js';
import { createMetrics } from './metrics.js';
import { openEnvSessions } from './openenv.js';
import type { ServedRun } from './served-run.js';
import { openServedRun, type ServedRunOptions } from './served-open.js';

export { ServedRun, ServeError } from './served-run.js';
export { openServedRun, type ServedRunOptions } from './served-open.js';
export { localVerifier, VerificationUnavailable, type Verifier, type QueueStats } from './verifier.js';
export { mainThreadBusySeconds } from './metrics.js';
export { servedTask } from './types.js';
export type { ProbeReport, ScoreItem, ScoreResponse, ScoreResult, ServedTask } from './types.js';
export { serveConfigSchema, type ServeConfig } from '../run/index.js';

export interface ServeOptions extends ServedRunOptions {
  host: string;
  port: number;
  /** nats://…: verification by the workers behind this queue instead of this process's sandbox pool. */
  verify?: string;
  /** Bearer token required on every route but /health; required for a non-loopback host. */
  token?: string;
}

export interface RunningServer {
  url: string;
  run: ServedRun;
  close(): Promise<void>;
}

export { isLoopback };

export async function startServer(config: RunConfig, opts: ServeOptions): Promise<RunningServer> {
  const log = opts.log ?? (() => {});
  if (!isLoopback(opts.host) && !opts.token) {
    throw new UserError(
      `refusing to serve on ${opts.host} without a bearer token: set COGEN_TOKEN (or bind 127.0.0.1)`,
    );
  }
  // Workers verify with the run's sandbox settings: the store's, once the run is open (a joining replica takes the run's config).
  let sandbox = config.sandbox;
  const verifier = opts.verify ? await queueVerifier(opts.verify, { sandbox: () => sandbox, log }) : undefined;
  const run = await openServedRun(config, { ...opts, verifier }).catch(async (e) => {
    await verifier?.close();
    throw e;
  });
  sandbox = run.config.sandbox;
  const metrics = createMetrics();
  run.timings = { verified: metrics.verified, committed: metrics.committed };
  // The dashboard reads the run's SQLite file; a PostgreSQL run has none here.
  const app = createApp({
    run,
    metrics,
    token: opts.token,
    log,
    dashboardRunsDir: run.records.kind === 'sqlite' ? opts.runsDir : undefined,
  });
  const sessions = openEnvSessions(app, {
    run,
    metrics,
    maxSessions: config.serve.maxSessions,
    maxMessageBytes: config.serve.maxBodyBytes,
  });
  let server: ServerType;
  try {
    server = await new Promise<ServerType>((resolve, reject) => {
      const s = listen({ fetch: app.fetch, hostname: opts.host, port: opts.port }, () => resolve(s));
      s.once('error', reject);
    });
  } catch (e) {
    await run.close();
    throw new UserError(`cannot listen on ${opts.host}:${opts.port}: ${(e as Error).message}`);
  }
  sessions.inject(server);
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : opts.port;
  const url = `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}`;
  let closing: Promise<void> | null = null;
  return {
    url,
    run,
    close: () =>
      (closing ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          sessions.closeAll();
          (server as { closeAllConnections?: () => void }).closeAllConnections?.();
        });
        await run.close();
      })()),
  };
}
