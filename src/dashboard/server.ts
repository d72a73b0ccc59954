// `cogen dashboard`: one local page over the run store (docs/DESIGN.md, "Looking at a run").
// Read-only: the run's database is opened with SQLite's read-only flag on each request, so a run
// live in another process is shown as it goes (the page polls the run's summary and reloads what
// changed). No CDN: uPlot and Cytoscape.js are served from node_modules, the page's own script from
// src/dashboard/public. Every path is relative, so the same app can be mounted under a prefix
// (cogen serve's /dashboard).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve as listen, type ServerType } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import { UserError } from '../../core/errors.js';
import {
  curvesOf,
  heatOf,
  isRunId,
  listRunIds as listAllRunIds,
  metricsOf,
  openReadOnly,
  proposalsOf,
  runExists as runDirExists,
  runInfo,
  searchTasks,
  skillsOf,
  taskDetail,
  withRun,
} from './data.js';

const require = createRequire(import.meta.url);
const HERE = dirname(fileURLToPath(import.meta.url));

/** The page's own ES modules in public/: dashboard.js, the entry, imports the others. */
const PUBLIC_SCRIPTS = ['dashboard.js', 'shared.js', 'charts.js', 'skills.js', 'tasks.js'];

/** The files the page loads, each from an npm package's dist or from public/. */
const ASSETS: Record<string, { path: () => string; type: string }> = {
  'uPlot.iife.min.js': {
    path: () => join(dirname(require.resolve('uplot')), 'uPlot.iife.min.js'),
    type: 'text/javascript',
  },
  'uPlot.min.css': { path: () => join(dirname(require.resolve('uplot')), 'uPlot.min.css'), type: 'text/css' },
  'cytoscape.min.js': {
    path: () => join(dirname(require.resolve('cytoscape')), 'cytoscape.min.js'),
    type: 'text/javascript',
  },
  ...Object.fromEntries(
    PUBLIC_SCRIPTS.map((name) => [name, { path: () => join(HERE, 'public', name), type: 'text/javascript' }]),
  ),
  'dashboard.css': { path: () => join(HERE, 'public', 'dashboard.css'), type: 'text/css' },
};

export interface DashboardOptions {
  runsDir: string;
  /** The run `/` opens (default: the newest). */
  runId?: string;
  /** Show only these runs (cogen serve's /dashboard shows its own run and no other). */
  only?: string[];
}

const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function page(title: string, body: string, root: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title>
<link rel="stylesheet" href="${root}assets/uPlot.min.css"><link rel="stylesheet" href="${root}assets/dashboard.css">
</head><body>${body}</body></html>`;
}

function messagePage(c: Context, status: 200 | 404, title: string, lines: string[], runs: string[], root: string) {
  const list = runs.length
    ? `<p>Runs here:</p><ul class="runs">${runs.map((r) => `<li><a href="${root}run/${encodeURIComponent(r)}">${esc(r)}</a></li>`).join('')}</ul>`
    : '';
  return c.html(
    page(
      title,
      `<main class="message" id="message"><h1>${esc(title)}</h1>${lines.map((l) => `<p>${esc(l)}</p>`).join('')}${list}</main>`,
      root,
    ),
    status,
  );
}

export function dashboardApp(opts: DashboardOptions): Hono {
  const { runsDir } = opts;
  const allowed = (id: string) => !opts.only || opts.only.includes(id);
  const listRunIds = (dir: string) => listAllRunIds(dir).filter(allowed);
  const runExists = (dir: string, id: string) => allowed(id) && runDirExists(dir, id);
  const app = new Hono();
  // Read-only by construction: only GET (and HEAD) routes exist.

  app.get('/', (c) => {
    const runs = listRunIds(runsDir);
    const id = opts.runId ?? runs[0];
    const here = c.req.path.endsWith('/') ? c.req.path : `${c.req.path}/`;
    if (!id)
      return messagePage(
        c,
        200,
        'No runs yet',
        [`There are no runs in ${runsDir}.`, 'Start one with: cogen run --preset smoke'],
        [],
        here,
      );
    return c.redirect(`${here}run/${encodeURIComponent(id)}`);
  });

  app.get('/assets/:name', (c) => {
    const name = c.req.param('name');
    // Own names only: `constructor` and the like are properties of every object, not assets.
    const a = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
    if (!a) return c.text('not found', 404);
    return c.body(readFileSync(a.path()), 200, {
      'content-type': `${a.type}; charset=utf-8`,
      'cache-control': 'no-cache',
    });
  });

  app.get('/run/:id', (c) => {
    const id = c.req.param('id');
    if (!runExists(runsDir, id)) {
      return messagePage(
        c,
        404,
        `No run "${id}"`,
        [`There is no run "${id}" in ${runsDir}.`],
        listRunIds(runsDir),
        '../',
      );
    }
    return c.html(
      page(
        `cogen · ${id}`,
        `<div id="app" data-run="${esc(id)}"></div>
<script src="../assets/uPlot.iife.min.js"></script>
<script src="../assets/cytoscape.min.js"></script>
<script type="module" src="../assets/dashboard.js"></script>`,
        '../',
      ),
    );
  });

  const api = new Hono();
  api.get('/runs', (c) => c.json(listRunIds(runsDir).map((id) => withRun(runsDir, id, (db) => runInfo(db, id)))));
  // Every per-run route answers 404 for a run that is not there.
  api.use('/run/:id/*', async (c, next) => {
    const id = c.req.param('id')!;
    if (!isRunId(id) || !runExists(runsDir, id)) return c.json({ error: `no run "${id}" in ${runsDir}` }, 404);
    await next();
  });
  const run = <T>(c: Context, fn: (db: ReturnType<typeof openReadOnly>, id: string) => T) => {
    const id = c.req.param('id')!;
    return withRun(runsDir, id, (db) => fn(db, id));
  };
  api.get('/run/:id/summary', (c) => c.json(run(c, (db, id) => runInfo(db, id))));
  api.get('/run/:id/curves', (c) => c.json(run(c, (db) => curvesOf(metricsOf(db)))));
  api.get('/run/:id/heat', (c) => c.json(run(c, (db) => heatOf(db))));
  api.get('/run/:id/skills', async (c) => {
    const at = c.req.query('atStep');
    const atStep = at === undefined || at === '' ? undefined : Number(at);
    if (atStep !== undefined && !Number.isInteger(atStep)) return c.json({ error: 'atStep: expected an integer' }, 400);
    const db = openReadOnly(runsDir, c.req.param('id')!);
    try {
      return c.json(await skillsOf(db, graphRunId(db, c.req.param('id')!), atStep));
    } finally {
      db?.close();
    }
  });
  api.get('/run/:id/tasks', (c) => {
    const q = c.req.query();
    const level = q.level === undefined || q.level === '' ? undefined : Number(q.level);
    return c.json(
      run(c, (db) =>
        searchTasks(db, {
          q: q.q || undefined,
          skill: q.skill || undefined,
          family: q.family || undefined,
          type: q.type || undefined,
          level,
          limit: q.limit ? Number(q.limit) : undefined,
        }),
      ),
    );
  });
  api.get('/run/:id/task/:taskId', (c) => {
    const t = run(c, (db) => taskDetail(db, c.req.param('taskId')));
    return t ? c.json(t) : c.json({ error: `no task "${c.req.param('taskId')}" in this run` }, 404);
  });
  api.get('/run/:id/proposals', (c) => c.json(run(c, (db) => proposalsOf(db))));
  app.route('/api', api);

  app.onError((e, c) => {
    process.stderr.write(`dashboard: ${e.message}\n`);
    return c.json({ error: e.message }, 500);
  });
  app.notFound((c) => c.text('not found', 404));
  return app;
}

/** The graph's run id: the run store's meta runId (the directory name when it has none yet). */
function graphRunId(db: ReturnType<typeof openReadOnly>, id: string): string {
  if (!db) return id;
  try {
    return (
      (db.prepare("SELECT value FROM meta WHERE key = 'runId'").get() as { value: string } | undefined)?.value ?? id
    );
  } catch {
    return id;
  }
}

export interface RunningDashboard {
  url: string;
  close(): Promise<void>;
}

/** Starts the dashboard on host:port (127.0.0.1 by default; port 0: any free one). */
export async function startDashboard(
  opts: DashboardOptions & { host?: string; port?: number },
): Promise<RunningDashboard> {
  const host = opts.host ?? '127.0.0.1';
  const app = dashboardApp(opts);
  let server: ServerType;
  try {
    server = await new Promise<ServerType>((resolve, reject) => {
      const s = listen({ fetch: app.fetch, hostname: host, port: opts.port ?? 8790 }, () => resolve(s));
      s.once('error', reject);
    });
  } catch (e) {
    throw new UserError(`cannot listen on ${host}:${opts.port}: ${(e as Error).message}`);
  }
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : opts.port;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      }),
  };
}
