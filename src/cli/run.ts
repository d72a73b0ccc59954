// `cogen run`: start (or resume) an autonomous curriculum run (src/run/loop.ts), with a progress bar on
// stderr and a summary on stdout; the first Ctrl-C checkpoints and exits 130 (docs/runs.md).
import { Option, type Command } from 'commander';
import { resolve } from 'node:path';
import { loadPreset, type FamilyClimb, type RunSummary, createProgress, formatDuration } from '../run/index.js';
import { BACKENDS } from '../solver/config.js';
import { controllerNames } from '../../curricula/index.js';
import { parseFloatArg, parseIntArg, runsDirOption, storedConfig } from './shared.js';

export function runCommand(program: Command): void {
  program
    .command('run')
    .description('start (or resume) an autonomous curriculum run')
    .option('-p, --preset <name|file>', 'preset name in curricula/ or a YAML file', 'default')
    .option('--seed <n>', 'random seed', parseIntArg)
    .option('--steps <n>', 'number of solver steps', parseIntArg)
    .addOption(
      new Option('--curriculum <name>', 'difficulty controller (overrides the preset)').choices(controllerNames),
    )
    .option('--gating', 'open arms only when the skill graph says their prerequisites are mastered')
    .addOption(new Option('--backend <name>', 'tfjs backend (auto picks the best found)').choices(BACKENDS))
    .addOption(
      new Option('--graph <kind>', 'skill graph store (the embedded one is always written too)').choices([
        'embedded',
        'neo4j',
      ]),
    )
    .option('--neo4j-uri <uri>', 'Bolt URI (or NEO4J_URI)')
    .option('--neo4j-user <user>', 'Neo4j user (or NEO4J_USER); the password comes from NEO4J_PASSWORD')
    .option('--neo4j-database <name>', 'Neo4j database (or NEO4J_DATABASE)')
    .addOption(
      new Option(
        '--proposer <kind>',
        "who proposes fresh tasks: generator, llm for a share of them, learned (the grammar proposer that learns, proposer.learned), self-play (experimental: the solver's own network writes them under the grammar, proposer.selfPlay), or frontier (a share of each batch made of harder or easier children of the tasks the solver half-solves at h; needs --curriculum level-frontier, curriculum.evolve)",
      ).choices(['generator', 'llm', 'learned', 'self-play', 'frontier']),
    )
    .option(
      '--share <x>',
      'with --proposer llm: fraction of fresh tasks the LLM writes (default 0.5); with --proposer frontier: fraction of each batch of children (default 0.25)',
      parseFloatArg,
    )
    .addOption(
      new Option('--solver <kind>', 'builtin (the tfjs policy, trained) or llm (a chat model, evaluated)').choices([
        'builtin',
        'llm',
      ]),
    )
    .addOption(
      new Option('--provider <name>', 'LLM provider for --proposer/--solver llm').choices([
        'openai',
        'ollama',
        'scripted',
      ]),
    )
    .option('--model <name>', 'LLM model name')
    .option(
      '--base-url <url>',
      'OpenAI-compatible server or Ollama URL (the API key comes from COGEN_LLM_API_KEY or OPENAI_API_KEY)',
    )
    .option('--script <file>', 'with --provider scripted: a JSON file of scripted model outputs')
    .option('--run-id <id>', 'name of the run directory (default: timestamp-preset-seed)')
    .option(
      '--resume <id>',
      'resume a run from its last checkpoint (with its stored config; graph flags given replace its graph settings)',
    )
    .addOption(runsDirOption())
    .option('--json', 'print the summary as JSON on stdout')
    .option('--no-progress', 'no progress bar')
    .action(async (o) => {
      const runsDir = resolve(o.runsDir);
      let config;
      let preset = o.preset as string;
      if (o.resume) {
        ({ config, preset } = storedConfig(runsDir, o.resume, 'autonomous', o));
      } else {
        config = loadPreset(o.preset, {
          seed: o.seed,
          steps: o.steps,
          curriculum: {
            controller: o.curriculum,
            gating: o.gating,
            ...(o.proposer === 'frontier' ? { evolve: { share: o.share ?? 0.25 } } : {}),
          },
          solver: o.backend ? { backend: o.backend } : undefined,
          graph: { kind: o.graph, uri: o.neo4jUri, user: o.neo4jUser, database: o.neo4jDatabase },
          agents: agentOverrides(o),
          proposer:
            o.proposer === 'learned'
              ? { learned: { enabled: true } }
              : o.proposer === 'self-play'
                ? { selfPlay: { enabled: true } }
                : undefined,
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
      const { startRun } = await import('../run/index.js');
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
      process.stdout.write(summaryText(summary));
    });
}

/** The closing lines of a run: what it did, what it mastered, where it lives and what to do next. */
function summaryText(summary: RunSummary): string {
  const rel = summary.dir.startsWith(process.cwd()) ? summary.dir.slice(process.cwd().length + 1) : summary.dir;
  return [
    ``,
    `run ${summary.runId} ${summary.status}: ${summary.steps} steps, ${summary.tasks} tasks, ${formatDuration(summary.wallMs)} on ${summary.backend}`,
    `solve rate (last step) ${(100 * summary.finalSolveRate).toFixed(1)}%, held-out probe accuracy ${(100 * summary.probeAccuracy).toFixed(1)}%`,
    `skills mastered (${summary.mastery.length} of ${summary.skillsMasterable} masterable): ${summary.mastery.map((m) => `${m.skillId} ${(100 * m.accuracy).toFixed(0)}% (trivial ${(100 * m.baseline).toFixed(0)}%)`).join(', ') || 'none yet'}`,
    `progress (last probe / needed, trivial): ${summary.progress.map((p) => `${p.skillId} ${p.accuracy === null ? '-' : `${(100 * p.accuracy).toFixed(0)}%`} / ${(100 * p.bar).toFixed(0)}% (${(100 * p.baseline).toFixed(0)}%)${p.mastered ? ' mastered' : ''}`).join(', ')}`,
    summary.levels.length > 0
      ? `levels passed (each family's highest now; docs/levels.md): ${climbText(summary.levels)}`
      : '',
    summary.skillsEverLearned.length > 0
      ? `forgotten at the end: ${summary.forgotten.skills.length} of ${summary.skillsEverLearned.length} skills ever learned (${(100 * summary.forgotten.share).toFixed(0)}%)${summary.forgotten.skills.length > 0 ? `: ${summary.forgotten.skills.join(', ')}` : ''}`
      : '',
    summary.graphBacklog > 0
      ? `skill graph backlog: ${summary.graphBacklog} events wait in the outbox (cogen skills sync --run ${summary.runId})`
      : '',
    `the run lives in ${rel}/`,
    `inspect:  cogen skills --run ${summary.runId}`,
    `export:   cogen export --run ${summary.runId} --out tasks.jsonl`,
    ``,
  ]
    .filter((l, i, a) => l !== '' || i === 0 || i === a.length - 1)
    .join('\n');
}

/** Each family's highest level passed, since when, and the level frontier's h beside it where that controller runs. */
function climbText(levels: FamilyClimb[]): string {
  return levels
    .map((l) => {
      const h = Object.entries(l.h).map(([type, h]) => `${type} ${h}`);
      const passed = l.passed < 0 ? 'none' : `${l.passed} since step ${l.since}`;
      return `${l.family} ${passed}${h.length > 0 ? `, h ${h.join(' ')}` : ''}`;
    })
    .join('; ');
}

/** The --proposer/--solver/--provider/... flags as a partial `agents` config. */
function agentOverrides(o: Record<string, string | number | undefined>): Record<string, unknown> {
  const model = {
    provider: o.provider,
    model: o.model,
    baseUrl: o.baseUrl,
    scriptPath: o.script ? resolve(String(o.script)) : undefined,
  };
  const out: Record<string, unknown> = {};
  if (o.proposer === 'llm') out.proposer = { ...model, share: o.share ?? 0.5 };
  else if (o.proposer === 'generator') out.proposer = { share: 0 };
  if (o.solver === 'llm') out.solver = { ...model, enabled: true };
  else if (o.solver === 'builtin') out.solver = { enabled: false };
  return out;
}
