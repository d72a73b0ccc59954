// `cogen worker`: a verification worker for replicas started with --verify (docs/scale-out.md).
import { Option, type Command } from 'commander';
import { UserError } from '../../core/errors.js';
import { isLoopback } from '../server/loopback.js';
import { DEFAULT_ACK_WAIT_S } from '../workers/nats.js';
import { startWorker } from '../workers/worker.js';
import { serveWorkerHttp } from '../workers/worker-http.js';
import { parseFloatArg, parseIntArg } from './shared.js';

export function workerCommand(program: Command): void {
  program
    .command('worker')
    .description(
      'verify answers for cogen serve replicas started with --verify: take batches from a NATS JetStream work queue, verify them in a sandbox pool, reply with verdicts (stateless; run as many as you like, on any machine)',
    )
    .requiredOption(
      '--nats <url>',
      'nats://host[:port] of the NATS server with JetStream (credentials from NATS_TOKEN, or NATS_USER and NATS_PASSWORD)',
    )
    .option(
      '--ack-wait <seconds>',
      'AckWait of the queue: a batch whose worker gave no sign of life this long is delivered to another',
      parseFloatArg,
      DEFAULT_ACK_WAIT_S,
    )
    .option('--concurrency <n>', 'batches verified at once', parseIntArg, 4)
    .option('--sandbox-workers <n>', 'threads of the sandbox pool (default: one per core)', parseIntArg)
    .option('--host <host>', 'address of /health and /metrics (any other than loopback needs COGEN_TOKEN)', '127.0.0.1')
    .option('--port <n>', 'port of /health and /metrics (0: any free one)', parseIntArg, 8788)
    .addOption(
      new Option(
        '--crash-on <text>',
        'fault injection for tests and benches: the worker kills itself on a batch with an answer containing this text',
      )
        .env('COGEN_WORKER_CRASH_ON')
        .hideHelp(),
    )
    .addOption(
      new Option(
        '--stall-on <text>',
        'fault injection for tests: the worker holds a batch with an answer containing this text for a minute before verifying it',
      )
        .env('COGEN_WORKER_STALL_ON')
        .hideHelp(),
    )
    .addOption(
      new Option('--trace', 'log a line when a batch is taken and when it is answered')
        .env('COGEN_WORKER_TRACE')
        .hideHelp(),
    )
    .action(async (o) => {
      if (!(o.ackWait > 0)) throw new UserError('--ack-wait must be a positive number of seconds');
      if (o.concurrency < 1) throw new UserError('--concurrency must be at least 1');
      const token = process.env.COGEN_TOKEN || undefined;
      if (!isLoopback(o.host) && !token)
        throw new UserError(
          `refusing to serve /metrics on ${o.host} without a bearer token: set COGEN_TOKEN (or bind 127.0.0.1)`,
        );
      const log = (line: string) => process.stderr.write(`${line}\n`);
      const worker = await startWorker({
        nats: o.nats,
        ackWaitS: o.ackWait,
        concurrency: o.concurrency,
        sandboxWorkers: o.sandboxWorkers,
        log,
        crashOn: o.crashOn,
        stallOn: o.stallOn,
        trace: Boolean(o.trace),
      });
      const http = await serveWorkerHttp(worker, { host: o.host, port: o.port, token }).catch(async (e) => {
        await worker.close();
        throw e;
      });
      log(
        `worker on ${worker.display} (lanes: ${worker.lanes.join(', ')}; AckWait ${o.ackWait} s); health and metrics at ${http.url} (Ctrl-C stops)`,
      );
      await new Promise<void>((done) => {
        const stop = () => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          log('stopping…');
          void Promise.all([http.close(), worker.close()]).then(() => done());
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
    });
}
