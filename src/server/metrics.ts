// Prometheus metrics of a served run (prom-client), one registry per server. Counters count what
// this process saw; the run's durable totals are gauges read from its state at each scrape. A
// replica's own costs are here too (docs/scale-out.md): verification latency (its own pool, or the
// workers behind the queue), commit latency, the queue's depth and redeliveries, and the main
// thread's busy time (what bounds a coordinator).
import { performance } from 'node:perf_hooks';
import { Counter, Histogram, Registry, Gauge } from 'prom-client';
import type { ServedRun } from './served-run.js';
import type { ScoreResponse } from './types.js';
import type { QueueStats } from './verifier.js';

export type Metrics = ReturnType<typeof createMetrics>;
type Stats = Awaited<ReturnType<ServedRun['stats']>>;

/** Seconds the main thread has been busy since the process started (event-loop utilisation's active time). */
export const mainThreadBusySeconds = (): number => performance.eventLoopUtilization().active / 1000;

export function createMetrics() {
  const registry = new Registry();
  const request = httpMetrics(registry);
  const score = scoreMetrics(registry);
  const sampled = new Counter({
    name: 'cogen_tasks_sampled_total',
    help: 'Tasks handed out in this process',
    registers: [registry],
  });
  const probeReports = new Counter({
    name: 'cogen_probe_reports_total',
    help: 'Probe reports accepted in this process',
    registers: [registry],
  });
  const setGauges = scrapeGauges(registry);
  return {
    contentType: registry.contentType,
    sampled,
    probeReports,
    request,
    ...score,
    async render(stats: Stats, queueStats: QueueStats | null): Promise<string> {
      setGauges(stats, queueStats);
      return registry.metrics();
    },
  };
}

/** HTTP requests by route and status, and their latency; records one request. */
function httpMetrics(registry: Registry) {
  const requests = new Counter({
    name: 'cogen_http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['route', 'status'],
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'cogen_http_request_seconds',
    help: 'HTTP request latency',
    labelNames: ['route'],
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
    registers: [registry],
  });
  return (route: string, status: number, seconds: number) => {
    requests.inc({ route, status: String(status) });
    latency.observe({ route }, seconds);
  };
}

/** Score requests: the completions scored, the replays, and the latency of a request, its verification and its commit. */
function scoreMetrics(registry: Registry) {
  const completions = new Counter({
    name: 'cogen_completions_scored_total',
    help: 'Completions scored in this process (idempotent replays excluded)',
    registers: [registry],
  });
  const replays = new Counter({
    name: 'cogen_idempotent_replays_total',
    help: 'Score requests answered from the stored response of an earlier one',
    registers: [registry],
  });
  const scoreSeconds = new Histogram({
    name: 'cogen_score_seconds',
    help: 'Time to verify and commit one score request',
    buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
    registers: [registry],
  });
  const verifySeconds = new Histogram({
    name: 'cogen_verify_seconds',
    help: "Verification latency of one score request (this process's sandbox, or the workers behind the queue)",
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
    registers: [registry],
  });
  const commitSeconds = new Histogram({
    name: 'cogen_commit_seconds',
    help: "Latency of one commit of the run's writer (lock, sync, writes)",
    buckets: [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    registers: [registry],
  });
  const lockSeconds = new Histogram({
    name: 'cogen_lock_held_seconds',
    help: "Time one commit held the run's writer lock (from taking it to COMMIT)",
    buckets: [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    registers: [registry],
  });
  return {
    scored(res: ScoreResponse, seconds: number) {
      if (res.replayed) replays.inc();
      else {
        completions.inc(res.results.length);
        scoreSeconds.observe(seconds);
      }
    },
    verified: (seconds: number) => verifySeconds.observe(seconds),
    committed: (seconds: number, lockHeld: number) => {
      commitSeconds.observe(seconds);
      lockSeconds.observe(lockHeld);
    },
  };
}

/** The gauges set at each scrape: the main thread's busy time, the queue's, and the run's durable totals. */
function scrapeGauges(registry: Registry) {
  const busy = new Gauge({
    name: 'cogen_main_thread_busy_seconds_total',
    help: 'Seconds the main thread was busy since the process started',
    registers: [registry],
  });
  const queue = {
    depth: new Gauge({
      name: 'cogen_queue_depth',
      help: 'Verification batches waiting in the queue or delivered and not yet acknowledged (with --verify nats://)',
      registers: [registry],
    }),
    redelivered: queueRedeliveries(registry, '(with --verify nats://)'),
  };
  const gauges = {
    step: new Gauge({ name: 'cogen_run_step', help: 'Score requests applied over the run', registers: [registry] }),
    groups: new Gauge({
      name: 'cogen_run_groups',
      help: 'Scored groups fed to the curriculum over the run',
      registers: [registry],
    }),
    abandoned: new Gauge({
      name: 'cogen_run_abandoned_tasks',
      help: 'Sampled tasks that expired unscored over the run',
      registers: [registry],
    }),
    open: new Gauge({ name: 'cogen_run_open_tasks', help: 'Sampled tasks waiting for a score', registers: [registry] }),
    mastered: new Gauge({ name: 'cogen_run_skills_mastered', help: 'Skills mastered now', registers: [registry] }),
    probeAccuracy: new Gauge({
      name: 'cogen_run_probe_accuracy',
      help: 'Accuracy of the last probe report',
      registers: [registry],
    }),
  };
  return (stats: Stats, queueStats: QueueStats | null) => {
    gauges.step.set(stats.step);
    gauges.groups.set(stats.groups);
    gauges.abandoned.set(stats.abandoned);
    gauges.open.set(stats.open);
    gauges.mastered.set(stats.skills_mastered.length);
    gauges.probeAccuracy.set(stats.probe_accuracy ?? 0);
    busy.set(mainThreadBusySeconds());
    if (queueStats) {
      queue.depth.set(queueStats.pending + queueStats.ackPending);
      queue.redelivered(queueStats.redelivered);
    }
  };
}

/**
 * cogen_queue_redeliveries_total, on replicas and workers: the queue's redeliveries since it was made
 * (workers/nats.ts queueStats), as a counter that never falls (a lower reading is one taken mid-publish).
 */
export function queueRedeliveries(registry: Registry, note = ''): (total: number) => void {
  const counter = new Counter({
    name: 'cogen_queue_redeliveries_total',
    help: `Batches the queue delivered again (a worker died, stalled or stopped with them), over all workers ${note}`.trim(),
    registers: [registry],
  });
  let seen = 0;
  return (total) => {
    if (total > seen) counter.inc(total - seen);
    seen = Math.max(seen, total);
  };
}
