// `cogen serve`: serve a run over HTTP (src/server/; docs/serve.md), until SIGINT or SIGTERM.
import { Option, type Command } from 'commander';
import { resolve } from 'node:path';
import { loadPreset } from '../run/index.js';
import { controllerNames } from '../../curricula/index.js';
import { parseFloatArg, parseIntArg, runsDirOption, storedConfig } from './shared.js';

export function serveCommand(program: Command): void {
  program
    .command('serve')
    .description(
      "serve a run over HTTP: a trainer samples tasks from the live curriculum and sends its model's completions to be scored",
    )
    .option('-p, --preset <name|file>', 'preset name in curricula/ or a YAML file', 'default')
    .option('--seed <n>', 'random seed', parseIntArg)
    .addOption(
      new Option('--curriculum <name>', 'difficulty controller (overrides the preset)').choices(controllerNames),
    )
    .option('--gating', 'open arms only when the skill graph says their prerequisites are mastered')
    .option('--host <host>', 'address to bind (any other than loopback needs COGEN_TOKEN)', '127.0.0.1')
    .option('--port <n>', 'port (0: any free one)', parseIntArg, 8787)
    .option('--ttl <seconds>', 'time-to-live of sampled tasks (overrides serve.ttlSeconds)', parseFloatArg)
    .addOption(
      new Option(
        '--proposer <kind>',
        "who proposes fresh tasks: generator, or learned (the grammar proposer that learns from the trainer's solve rates)",
      ).choices(['generator', 'learned']),
    )
    .addOption(
      new Option('--graph <kind>', 'skill graph store (the embedded one is always written too)').choices([
        'embedded',
        'neo4j',
      ]),
    )
    .option('--neo4j-uri <uri>', 'Bolt URI (or NEO4J_URI)')
    .option('--run-id <id>', 'name of the run directory (default: timestamp-preset-served-seed)')
    .option(
      '--resume <id>',
      'go on serving a served run where it stopped (with its stored config; graph flags given replace its graph settings)',
    )
    .option(
      '--store <url>',
      "postgres://user@host[:port]/db: keep the run in PostgreSQL, where several replicas serve it (each names it with --run-id; the first creates it, the others join; the password comes from PGPASSWORD). Default: the run's SQLite file in --runs-dir (docs/scale-out.md)",
    )
    .option(
      '--verify <url>',
      "nats://host[:port]: send answers to the verification workers (cogen worker) behind this NATS JetStream queue instead of this process's sandbox pool (docs/scale-out.md)",
    )
    .addOption(runsDirOption())
    .addOption(
      new Option(
        '--fault-kill-after-commit <key>',
        'fault injection for tests and benches: SIGKILL this process once the request with this idempotency key is committed, before its reply',
      )
        .env('COGEN_FAULT_KILL_AFTER_COMMIT')
        .hideHelp(),
    )
    .addOption(
      new Option(
        '--fault-pause-in-lock <key>',
        'fault injection for tests and benches: SIGSTOP this process inside the writer lock while it applies the request with this idempotency key',
      )
        .env('COGEN_FAULT_PAUSE_IN_LOCK')
        .hideHelp(),
    )
    .addOption(
      new Option(
        '--fault-pause-in-creation <run-id>',
        "fault injection for tests and benches: SIGSTOP this process inside the creation lock of the run with this id, before it draws the run's probes",
      )
        .env('COGEN_FAULT_PAUSE_IN_CREATION')
        .hideHelp(),
    )
    .action(async (o) => {
      const runsDir = resolve(o.runsDir);
      let config;
      let preset = o.preset as string;
      if (o.resume && !o.store) {
        ({ config, preset } = storedConfig(runsDir, o.resume, 'served', o));
      } else {
        config = loadPreset(o.preset, {
          seed: o.seed,
          curriculum: { controller: o.curriculum, gating: o.gating },
          graph: { kind: o.graph, uri: o.neo4jUri },
          serve: o.ttl === undefined ? undefined : { ttlSeconds: o.ttl },
          proposer: o.proposer === 'learned' ? { learned: { enabled: true } } : undefined,
        });
      }
      const log = (line: string) => process.stderr.write(`${line}\n`);
      const { startServer } = await import('../server/index.js');
      const server = await startServer(config, {
        runsDir,
        preset,
        runId: o.resume ?? o.runId,
        resume: Boolean(o.resume),
        host: o.host,
        port: o.port,
        token: process.env.COGEN_TOKEN || undefined,
        log,
        store: o.store,
        verify: o.verify,
        faults: {
          killAfterCommit: o.faultKillAfterCommit,
          pauseInLock: o.faultPauseInLock,
          pauseInCreation: o.faultPauseInCreation,
        },
      });
      const goesOn = o.store
        ? `any replica with --store ${server.run.records.where} --run-id ${server.run.runId} goes on`
        : `--resume ${server.run.runId} goes on`;
      log(
        `serving run ${server.run.runId} at ${server.url} (OpenAPI: ${server.url}/openapi.json; Ctrl-C stops, ${goesOn})`,
      );
      await new Promise<void>((done) => {
        const stop = () => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          log('stopping…');
          void server.close().then(done);
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
    });
}
