// The `cogen` command line: run, serve, worker, skills, export, setup, presets, runs, dashboard, plot. Errors are one line on stderr and a
// non-zero exit (1: the command failed, 2: bad usage); --verbose adds the stack trace.
import { Argument, Command, CommanderError, Option } from 'commander';
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError, listPresets, loadPreset, parseConfig } from './config.js';
import { exportCommand } from './export-cli.js';
import { controllerNames } from '../curricula/index.js';
import { BACKENDS } from './solver/config.js';
import { createProgress, formatDuration } from './progress.js';
import { RunStore, StoreError } from './store.js';
import { skillsCommand } from './skills-cli.js';
import { formatProposerReport, proposerReport } from './proposer-cli.js';
import { ENV_POLICIES, parseKinds, playEnvs, type EnvPolicy } from './envs-cli.js';
import { workerCommand } from './worker-cli.js';
import { UserError } from '../core/errors.js';

const USER_ERRORS = [UserError, ConfigError, StoreError];

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
    const verbose = argv.includes('--verbose');
    const err = e as Error;
    const known = USER_ERRORS.some((C) => err instanceof C) || err.name === 'GraphConnectionError';
    process.stderr.write(`cogen: ${known ? err.message : `${err.name}: ${err.message}`}\n`);
    if (verbose && err.stack) process.stderr.write(`${err.stack}\n`);
    else if (!known) process.stderr.write('(run again with --verbose for the stack trace)\n');
    return 1;
  }
}

const runsDirOption = () => new Option('--runs-dir <dir>', 'where runs live').default('runs').env('COGEN_RUNS_DIR');

/** The whole command tree, without parsing anything: main() runs it, scripts/docs-cli.ts writes docs/cli.md from it. */
export function buildProgram(): Command {
  const program = new Command('cogen')
    .description('Self-evolving environment co-generation: tasks, verifiers, a curriculum, a solver that learns, a skill graph.')
    .version('0.1.0')
    .option('--verbose', 'print stack traces and debug lines')
    // Set before the subcommands are added, so that they inherit it: usage errors throw
    // CommanderError (exit 2 in main) instead of exiting the process.
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });

  program
    .command('run')
    .description('start (or resume) an autonomous curriculum run')
    .option('-p, --preset <name|file>', 'preset name in curricula/ or a YAML file', 'default')
    .option('--seed <n>', 'random seed', parseIntArg)
    .option('--steps <n>', 'number of solver steps', parseIntArg)
    .addOption(new Option('--curriculum <name>', 'difficulty controller (overrides the preset)').choices(controllerNames))
    .option('--gating', 'open arms only when the skill graph says their prerequisites are mastered')
    .addOption(new Option('--backend <name>', 'tfjs backend (auto picks the best found)').choices(BACKENDS))
    .addOption(new Option('--graph <kind>', 'skill graph store (the embedded one is always written too)').choices(['embedded', 'neo4j']))
    .option('--neo4j-uri <uri>', 'Bolt URI (or NEO4J_URI)')
    .option('--neo4j-user <user>', 'Neo4j user (or NEO4J_USER); the password comes from NEO4J_PASSWORD')
    .option('--neo4j-database <name>', 'Neo4j database (or NEO4J_DATABASE)')
    .addOption(new Option('--proposer <kind>', 'who proposes fresh tasks: generator, llm for a share of them, learned (the grammar proposer that learns, proposer.learned), or self-play (experimental: the solver\'s own network writes them under the grammar, proposer.selfPlay)').choices(['generator', 'llm', 'learned', 'self-play']))
    .option('--share <x>', 'with --proposer llm: fraction of fresh tasks the LLM writes (default 0.5)', parseFloatArg)
    .addOption(new Option('--solver <kind>', 'builtin (the tfjs policy, trained) or llm (a chat model, evaluated)').choices(['builtin', 'llm']))
    .addOption(new Option('--provider <name>', 'LLM provider for --proposer/--solver llm').choices(['openai', 'ollama', 'scripted']))
    .option('--model <name>', 'LLM model name')
    .option('--base-url <url>', 'OpenAI-compatible server or Ollama URL (the API key comes from COGEN_LLM_API_KEY or OPENAI_API_KEY)')
    .option('--script <file>', 'with --provider scripted: a JSON file of scripted model outputs')
    .option('--run-id <id>', 'name of the run directory (default: timestamp-preset-seed)')
    .option('--resume <id>', 'resume a run from its last checkpoint')
    .addOption(runsDirOption())
    .option('--json', 'print the summary as JSON on stdout')
    .option('--no-progress', 'no progress bar')
    .action(async (o) => {
      const runsDir = resolve(o.runsDir);
      let config;
      let preset = o.preset as string;
      if (o.resume) {
        ({ config, preset } = storedConfig(runsDir, o.resume, 'autonomous'));
      } else {
        config = loadPreset(o.preset, {
          seed: o.seed,
          steps: o.steps,
          curriculum: { controller: o.curriculum, gating: o.gating },
          solver: o.backend ? { backend: o.backend } : undefined,
          graph: { kind: o.graph, uri: o.neo4jUri, user: o.neo4jUser, database: o.neo4jDatabase },
          agents: agentOverrides(o),
          proposer: o.proposer === 'learned' ? { learned: { enabled: true } } : o.proposer === 'self-play' ? { selfPlay: { enabled: true } } : undefined,
        });
      }
      const log = (line: string) => process.stderr.write(`${line}\n`);
      const progress = o.progress && !o.json ? createProgress() : undefined;
      // First Ctrl-C: finish the step, checkpoint, exit 130. A second one stops at once.
      const abort = new AbortController();
      const onSigint = () => {
        if (abort.signal.aborted) process.exit(130);
        process.stderr.write('\nstopping after this step (Ctrl-C again to stop now)…\n');
        abort.abort();
      };
      process.on('SIGINT', onSigint);
      // Imported here, not at the top: the solver (tfjs) is for `run` alone, and `serve` and `worker` start faster without it.
      const { startRun } = await import('./loop.js');
      const summary = await startRun(config, {
        signal: abort.signal,
        runsDir,
        preset,
        runId: o.resume ?? o.runId,
        resume: Boolean(o.resume),
        log: (line) => {
          if (progress) process.stderr.write('\r\x1b[2K');
          log(line);
        },
        onProgress: progress?.update,
      });
      progress?.done();
      process.off('SIGINT', onSigint);
      if (summary.status === 'interrupted') process.exitCode = 130;
      if (o.json) {
        process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
        return;
      }
      const rel = summary.dir.startsWith(process.cwd()) ? summary.dir.slice(process.cwd().length + 1) : summary.dir;
      process.stdout.write(
        [
          ``,
          `run ${summary.runId} ${summary.status}: ${summary.steps} steps, ${summary.tasks} tasks, ${formatDuration(summary.wallMs)} on ${summary.backend}`,
          `solve rate (last step) ${(100 * summary.finalSolveRate).toFixed(1)}%, held-out probe accuracy ${(100 * summary.probeAccuracy).toFixed(1)}%`,
          `skills mastered (${summary.mastery.length} of ${summary.skillsMasterable} masterable): ${summary.mastery.map((m) => `${m.skillId} ${(100 * m.accuracy).toFixed(0)}% (trivial ${(100 * m.baseline).toFixed(0)}%)`).join(', ') || 'none yet'}`,
          `progress (last probe / needed, trivial): ${summary.progress.map((p) => `${p.skillId} ${p.accuracy === null ? '-' : `${(100 * p.accuracy).toFixed(0)}%`} / ${(100 * p.bar).toFixed(0)}% (${(100 * p.baseline).toFixed(0)}%)${p.mastered ? ' mastered' : ''}`).join(', ')}`,
          summary.skillsEverLearned.length > 0
            ? `forgotten at the end: ${summary.forgotten.skills.length} of ${summary.skillsEverLearned.length} skills ever learned (${(100 * summary.forgotten.share).toFixed(0)}%)${summary.forgotten.skills.length > 0 ? `: ${summary.forgotten.skills.join(', ')}` : ''}`
            : '',
          summary.graphBacklog > 0 ? `skill graph backlog: ${summary.graphBacklog} events wait in the outbox (cogen skills sync --run ${summary.runId})` : '',
          `the run lives in ${rel}/`,
          `inspect:  cogen skills --run ${summary.runId}`,
          `export:   cogen export --run ${summary.runId} --out tasks.jsonl`,
          ``,
        ]
          .filter((l, i, a) => l !== '' || i === 0 || i === a.length - 1)
          .join('\n'),
      );
    });

  program
    .command('serve')
    .description('serve a run over HTTP: a trainer samples tasks from the live curriculum and sends its model\'s completions to be scored')
    .option('-p, --preset <name|file>', 'preset name in curricula/ or a YAML file', 'default')
    .option('--seed <n>', 'random seed', parseIntArg)
    .addOption(new Option('--curriculum <name>', 'difficulty controller (overrides the preset)').choices(controllerNames))
    .option('--gating', 'open arms only when the skill graph says their prerequisites are mastered')
    .option('--host <host>', 'address to bind (any other than loopback needs COGEN_TOKEN)', '127.0.0.1')
    .option('--port <n>', 'port (0: any free one)', parseIntArg, 8787)
    .option('--ttl <seconds>', 'time-to-live of sampled tasks (overrides serve.ttlSeconds)', parseFloatArg)
    .addOption(new Option('--proposer <kind>', 'who proposes fresh tasks: generator, or learned (the grammar proposer that learns from the trainer\'s solve rates)').choices(['generator', 'learned']))
    .addOption(new Option('--graph <kind>', 'skill graph store (the embedded one is always written too)').choices(['embedded', 'neo4j']))
    .option('--neo4j-uri <uri>', 'Bolt URI (or NEO4J_URI)')
    .option('--run-id <id>', 'name of the run directory (default: timestamp-preset-served-seed)')
    .option('--resume <id>', 'go on serving a served run where it stopped')
    .option('--store <url>', 'postgres://user@host[:port]/db: keep the run in PostgreSQL, where several replicas serve it (each names it with --run-id; the first creates it, the others join; the password comes from PGPASSWORD). Default: the run\'s SQLite file in --runs-dir (docs/scale-out.md)')
    .option('--verify <url>', 'nats://host[:port]: send answers to the verification workers (cogen worker) behind this NATS JetStream queue instead of this process\'s sandbox pool (docs/scale-out.md)')
    .addOption(runsDirOption())
    .action(async (o) => {
      const runsDir = resolve(o.runsDir);
      let config;
      let preset = o.preset as string;
      if (o.resume && !o.store) {
        ({ config, preset } = storedConfig(runsDir, o.resume, 'served'));
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
      const { startServer } = await import('./server/index.js');
      const server = await startServer(config, { runsDir, preset, runId: o.resume ?? o.runId, resume: Boolean(o.resume), host: o.host, port: o.port, token: process.env.COGEN_TOKEN || undefined, log, store: o.store, verify: o.verify });
      const goesOn = o.store ? `any replica with --store ${server.run.records.where} --run-id ${server.run.runId} goes on` : `--resume ${server.run.runId} goes on`;
      log(`serving run ${server.run.runId} at ${server.url} (OpenAPI: ${server.url}/openapi.json; Ctrl-C stops, ${goesOn})`);
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

  skillsCommand(program, { openRun, runsDirOption });
  workerCommand(program, { int: parseIntArg, float: parseFloatArg });

  exportCommand(program, { openRun, runsDirOption, int: parseIntArg });

  program
    .command('envs')
    .description('play agentic environments (probe, repair, search) with the reference policy, a random valid-action policy or a chat model, and record the episodes in a run (export them with --what trajectories)')
    .option('--kind <kinds>', 'comma-separated kinds', 'probe,repair,search')
    .option('--families <list>', 'comma-separated generator families the environments are made from', 'arith')
    .option('--level <n>', 'level (the program\'s difficulty and the budgets)', parseIntArg, 0)
    .option('--episodes <n>', 'episodes per kind, each on a new environment', parseIntArg, 10)
    .option('--seed <n>', 'seed (the same seed makes the same environments)', parseIntArg, 0)
    .addOption(new Option('--policy <name>', 'reference (the scripted solution), random (valid actions), or llm (a chat model through tool calling)').choices(ENV_POLICIES).default('reference'))
    .addOption(new Option('--provider <name>', 'with --policy llm: the LLM provider').choices(['openai', 'ollama', 'scripted']))
    .option('--model <name>', 'with --policy llm: model name')
    .option('--base-url <url>', 'with --policy llm: OpenAI-compatible endpoint')
    .option('--script <file>', 'with --provider scripted: a JSON script of replies')
    .option('--run-id <id>', 'name the run (default: envs-<time>-<policy>)')
    .addOption(runsDirOption())
    .option('--json', 'the summary as JSON on stdout')
    .action(async (o) => {
      const model = { provider: o.provider, model: o.model, baseUrl: o.baseUrl, scriptPath: o.script ? resolve(String(o.script)) : undefined };
      const summary = await playEnvs({
        kinds: parseKinds(o.kind),
        families: String(o.families).split(',').map((f: string) => f.trim()).filter(Boolean),
        level: o.level,
        episodes: o.episodes,
        seed: o.seed,
        policy: o.policy as EnvPolicy,
        model: Object.fromEntries(Object.entries(model).filter(([, v]) => v !== undefined)),
        runsDir: resolve(o.runsDir),
        runId: o.runId,
        log: o.json ? undefined : (line) => process.stderr.write(`${line}\n`),
      });
      if (o.json) process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
      else process.stderr.write(`run ${summary.runId} in ${summary.dir}\nexport:   cogen export --run ${summary.runId} --what trajectories --out trajectories.jsonl\n`);
    });

  program
    .command('proposer')
    .description('what the learned grammar proposer favours now, per arm: the options at each choice point with learned and fixed probability')
    .requiredOption('--run <id>', 'run id')
    .addOption(new Option('-f, --format <format>', 'table or json').choices(['table', 'json']).default('table'))
    .option('--top <n>', 'options shown per choice point', parseIntArg, 3)
    .addOption(runsDirOption())
    .action((o) => {
      const store = openRun(resolve(o.runsDir), o.run);
      try {
        process.stdout.write(`${formatProposerReport(proposerReport(store, o.top), o.format)}\n`);
      } finally {
        store.close();
      }
    });

  program
    .command('setup')
    .description('set up an optional part: tensorflow builds @tensorflow/tfjs-node(-gpu) against the TensorFlow C libraries from PyPI; reasoning-gym installs PyPI\'s reasoning-gym into a local virtual environment and bridges its datasets in as families rg.<dataset>')
    .addArgument(new Argument('<what>', 'what to set up').choices(['tensorflow', 'reasoning-gym']))
    .option('--gpu', 'tensorflow: the CUDA build (@tensorflow/tfjs-node-gpu, the tensorflow wheel and nvidia-*-cu12 wheels)')
    .option('--list', 'reasoning-gym: print the bridged families and the excluded datasets with the reason')
    .option('--rebuild', 'reasoning-gym: check every dataset\'s levels again and rewrite the catalogue')
    .action(async (what: string, o: { gpu?: boolean; list?: boolean; rebuild?: boolean }) => {
      const log = (l: string): void => void process.stderr.write(`${l}\n`);
      if (what === 'reasoning-gym') {
        const { listReasoningGym, setupReasoningGym } = await import('./setup.js');
        if (o.list) process.stdout.write(`${await listReasoningGym()}\n`);
        else await setupReasoningGym({ log, rebuild: !!o.rebuild });
        return;
      }
      const { setupTensorflow } = await import('./setup.js');
      setupTensorflow({ gpu: !!o.gpu, log });
    });

  program
    .command('presets')
    .description('list the presets in curricula/')
    .option('--json', 'as JSON')
    .action((o) => {
      const presets = listPresets();
      if (o.json) process.stdout.write(`${JSON.stringify(presets.map(({ name, description }) => ({ name, description })), null, 2)}\n`);
      else for (const p of presets) process.stdout.write(`${p.name.padEnd(16)} ${p.description}\n`);
    });

  program
    .command('runs')
    .description('list the runs in the runs directory')
    .addOption(runsDirOption())
    .option('--json', 'as JSON')
    .action((o) => {
      const runsDir = resolve(o.runsDir);
      const ids = existsSync(runsDir) ? readdirSync(runsDir).filter((d) => existsSync(join(runsDir, d, 'run.db'))).sort() : [];
      const rows = ids.map((id) => {
        const store = RunStore.open(join(runsDir, id), { create: false });
        try {
          return { id, kind: store.getMeta('kind') ?? 'autonomous', preset: store.getMeta('preset'), status: store.getMeta('status'), lastStep: Number(store.getMeta('lastStep') ?? 0), tasks: store.count('tasks') };
        } finally {
          store.close();
        }
      });
      if (o.json) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
      else for (const r of rows) process.stdout.write(`${r.id}  ${r.kind}  ${r.preset}  ${r.status}  step ${r.lastStep}  ${r.tasks} tasks\n`);
    });

  program
    .command('dashboard')
    .description('serve a local web page over the run store (read-only, live while a run goes): curves, the curriculum, the skill graph over time, tasks, proposals')
    .option('--run <id>', 'the run the page opens (default: the newest)')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--port <n>', 'port (0: any free one)', parseIntArg, 8790)
    .addOption(runsDirOption())
    .action(async (o) => {
      const { startDashboard } = await import('./dashboard/server.js');
      const runsDir = resolve(o.runsDir);
      if (o.run !== undefined && !existsSync(join(runsDir, o.run))) throw new UserError(`unknown run "${o.run}" (no ${join(runsDir, o.run)}; see cogen runs)`);
      const d = await startDashboard({ runsDir, runId: o.run, host: o.host, port: o.port });
      process.stderr.write(`dashboard at ${d.url}/${o.run ? `run/${o.run}` : ''} (runs in ${runsDir}; Ctrl-C stops)\n`);
      await new Promise<void>((done) => {
        const stop = () => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          void d.close().then(done);
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
    });

  program
    .command('plot')
    .description('write the curves of one run, or two side by side, as an SVG or PNG picture')
    .requiredOption('--run <id>', 'run id (twice for two runs side by side)', (v: string, prev: string[] | undefined) => [...(prev ?? []), v])
    .requiredOption('-o, --out <file>', 'output file: .svg or .png')
    .addOption(runsDirOption())
    .action(async (o) => {
      const { plotRuns } = await import('./dashboard/plot.js');
      const r = await plotRuns(resolve(o.runsDir), o.run as string[], resolve(o.out));
      process.stderr.write(`wrote ${o.out} (${r.format}, ${r.width}×${r.height})\n`);
    });

  return program;
}

/** The config and preset a run was started with, for resuming it (ServedRun refuses an autonomous run itself). */
function storedConfig(runsDir: string, id: string, kind: 'autonomous' | 'served') {
  const store = openRun(runsDir, id);
  try {
    const served = store.getMeta('kind') === 'served';
    if (served && kind === 'autonomous') throw new UserError(`run "${id}" is a served run: go on with cogen serve --resume ${id}`);
    const note = (line: string) => process.stderr.write(`${line}\n`);
    return { config: parseConfig(JSON.parse(store.getMeta('config') ?? '{}'), `of run ${id}`, { stored: true, note }), preset: store.getMeta('preset') ?? '' };
  } finally {
    store.close();
  }
}

function openRun(runsDir: string, id: string): RunStore {
  const dir = join(runsDir, id);
  if (!existsSync(join(dir, 'run.db'))) throw new UserError(`unknown run "${id}" (no ${join(dir, 'run.db')}; see cogen runs)`);
  return RunStore.open(dir, { create: false });
}

/** The --proposer/--solver/--provider/... flags as a partial `agents` config. */
function agentOverrides(o: Record<string, string | number | undefined>): Record<string, unknown> {
  const model = { provider: o.provider, model: o.model, baseUrl: o.baseUrl, scriptPath: o.script ? resolve(String(o.script)) : undefined };
  const out: Record<string, unknown> = {};
  if (o.proposer === 'llm') out.proposer = { ...model, share: o.share ?? 0.5 };
  else if (o.proposer === 'generator') out.proposer = { share: 0 };
  if (o.solver === 'llm') out.solver = { ...model, enabled: true };
  else if (o.solver === 'builtin') out.solver = { enabled: false };
  return out;
}

function parseFloatArg(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n)) throw new UserError(`expected a number, got "${v}"`);
  return n;
}

function parseIntArg(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new UserError(`expected a non-negative integer, got "${v}"`);
  return n;
}
