// A worker's Prometheus metrics (its /metrics): what it verified and how fast, what the queue did
// to it (redeliveries, splits, dead letters, refused messages), the queue's depth, and its main
// thread's busy time.
import type { JetStreamManager } from '@nats-io/jetstream';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { mainThreadBusySeconds, queueRedeliveries } from '../server/metrics.js';
import { queueStats } from './nats.js';

export type WorkerMetrics = ReturnType<typeof createWorkerMetrics>;

export function createWorkerMetrics(jsm: JetStreamManager) {
  const registry = new Registry();
  const counter = (name: string, help: string) => new Counter({ name, help, registers: [registry] });
  const answers = counter('cogen_worker_answers_total', 'Answers this worker verified');
  const batches = counter('cogen_worker_batches_total', 'Batches this worker verified');
  const verifySeconds = new Histogram({
    name: 'cogen_worker_verify_seconds',
    help: 'Verification latency of one batch',
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
    registers: [registry],
  });
  const depth = new Gauge({
    name: 'cogen_queue_depth',
    help: 'Batches waiting in the queue or delivered and not yet acknowledged',
    registers: [registry],
  });
  const queueRedelivered = queueRedeliveries(registry);
  const busy = new Gauge({
    name: 'cogen_main_thread_busy_seconds_total',
    help: 'Seconds the main thread was busy since the process started',
    registers: [registry],
  });
  const inFlight = new Gauge({
    name: 'cogen_worker_batches_in_flight',
    help: 'Batches this worker holds now (delivered, not yet acknowledged)',
    registers: [registry],
  });
  return {
    contentType: registry.contentType,
    redeliveries: counter(
      'cogen_worker_redeliveries_total',
      'Batches this worker received again after another delivery was not acknowledged',
    ),
    splits: counter('cogen_worker_splits_total', 'Batches that crashed a worker, split here into single answers'),
    deadLetters: counter(
      'cogen_worker_dead_letters_total',
      'Answers sent to the dead-letter subject (they crashed a worker 3 times)',
    ),
    refused: counter('cogen_worker_refused_total', 'Messages refused as malformed (terminated, never delivered again)'),
    inFlight,
    answered(n: number, seconds: number) {
      answers.inc(n);
      batches.inc();
      verifySeconds.observe(seconds);
    },
    async render(): Promise<string> {
      busy.set(mainThreadBusySeconds());
      const q = await queueStats(jsm).catch(() => null);
      if (q) {
        depth.set(q.pending + q.ackPending);
        queueRedelivered(q.redelivered);
      }
      return registry.metrics();
    },
  };
}
