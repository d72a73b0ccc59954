// A worker's /health and /metrics (Hono). /health needs no token and answers 503 with Retry-After
// while the queue cannot be reached; /metrics needs the bearer token (COGEN_TOKEN) when one is set,
// and one must be set to bind beyond loopback, as for `cogen serve`.
import { createHash, timingSafeEqual } from 'node:crypto';
import { serve as listen, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import { UserError } from '../../core/errors.js';
import { isLoopback } from '../server/loopback.js';
import type { RunningWorker } from './worker.js';

export async function serveWorkerHttp(
  worker: RunningWorker,
  opts: { host: string; port: number; token?: string },
): Promise<{ url: string; close(): Promise<void> }> {
  if (!isLoopback(opts.host) && !opts.token)
    throw new UserError(
      `refusing to serve /metrics on ${opts.host} without a bearer token: set COGEN_TOKEN (or bind 127.0.0.1)`,
    );
  const app = new Hono();
  app.get('/health', (c) => {
    const why = worker.unavailable();
    if (why) return c.json({ status: 'unavailable', reason: why }, 503, { 'Retry-After': '1' });
    return c.json({ status: 'healthy', lanes: worker.lanes, queue: worker.display }, 200);
  });
  const want = opts.token ? createHash('sha256').update(opts.token).digest() : null;
  app.get('/metrics', async (c) => {
    if (want) {
      const got = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization') ?? '')?.[1] ?? '';
      if (!timingSafeEqual(createHash('sha256').update(got).digest(), want))
        return c.json({ error: 'missing or wrong bearer token (Authorization: Bearer <COGEN_TOKEN>)' }, 401);
    }
    return c.text(await worker.metrics.render(), 200, { 'content-type': worker.metrics.contentType });
  });
  app.notFound((c) =>
    c.json({ error: `no route ${c.req.method} ${c.req.path} (a worker has /health and /metrics)` }, 404),
  );
  let server: ServerType;
  try {
    server = await new Promise<ServerType>((resolve, reject) => {
      const s = listen({ fetch: app.fetch, hostname: opts.host, port: opts.port }, () => resolve(s));
      s.once('error', reject);
    });
  } catch (e) {
    throw new UserError(`cannot listen on ${opts.host}:${opts.port}: ${(e as Error).message}`);
  }
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : opts.port;
  return {
    url: `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
