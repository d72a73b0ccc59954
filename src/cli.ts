// The `cogen` command line: run, serve, worker, skills, export, setup, presets, runs, dashboard, plot. Errors are one line on stderr and a
// non-zero exit (1: the command failed, 2: bad usage); --verbose adds the stack trace.
// Each command lives in a file of its own in src/cli/ (what they share: src/cli/shared.ts); this
// file stays the entry that bin/cogen.js runs and scripts/docs-cli.ts reads (docs/cli.md).
import { Command, CommanderError } from 'commander';
import { ConfigError, StoreError } from './run/index.js';
import { UserError } from '../core/errors.js';
import { dashboardCommand } from './cli/dashboard.js';
import { envsCommand } from './cli/envs.js';
import { exportCommand } from './cli/export.js';
import { plotCommand } from './cli/plot.js';
import { presetsCommand } from './cli/presets.js';
import { proposerCommand } from './cli/proposer.js';
import { runCommand } from './cli/run.js';
import { runsCommand } from './cli/runs.js';
import { serveCommand } from './cli/serve.js';
import { setupCommand } from './cli/setup.js';
import { skillsCommand } from './cli/skills.js';
import { workerCommand } from './cli/worker.js';

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

/** The whole command tree, without parsing anything: main() runs it, scripts/docs-cli.ts writes docs/cli.md from it. */
export function buildProgram(): Command {
  const program = new Command('cogen')
    .description(
      'Self-evolving environment co-generation: tasks, verifiers, a curriculum, a solver that learns, a skill graph.',
    )
    .version('0.1.0')
    .option('--verbose', 'print stack traces and debug lines')
    // Set before the subcommands are added, so that they inherit it: usage errors throw
    // CommanderError (exit 2 in main) instead of exiting the process.
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  // In this order: it is the order of `cogen --help` and of docs/cli.md.
  for (const add of [
    runCommand,
    serveCommand,
    skillsCommand,
    workerCommand,
    exportCommand,
    envsCommand,
    proposerCommand,
    setupCommand,
    presetsCommand,
    runsCommand,
    dashboardCommand,
    plotCommand,
  ])
    add(program);
  return program;
}
