// `cogen envs`: play environment episodes (envs/) with the scripted reference policy, the random
// valid-action policy, or a chat model through LangChain tool calling, and record them in a run of
// their own, so that `cogen export --what trajectories` gives multi-turn chats without a server
// (the reference policy's episodes are demonstrations for SFT; a chat model's are its evaluation).
import { Option, type Command } from 'commander';
import { join, resolve } from 'node:path';
import { createRng } from '../../core/rng.js';
import { UserError } from '../../core/errors.js';
import {
  ENV_KINDS,
  Env,
  generateEnv,
  playEpisode,
  playWithChatModel,
  randomPolicy,
  referencePolicy,
  type EnvKind,
  type EnvSpec,
  type Trajectory,
} from '../../envs/index.js';
import { createSandbox } from '../../sandbox/index.js';
import { agentsConfigSchema, buildChatModel } from '../agents/index.js';
import { refuseExisting, RunStore } from '../run/index.js';
import { parseIntArg, runsDirOption } from './shared.js';

export const ENV_POLICIES = ['reference', 'random', 'llm'] as const;
export type EnvPolicy = (typeof ENV_POLICIES)[number];

export interface PlayEnvsOptions {
  kinds: EnvKind[];
  families: string[];
  level: number;
  /** Episodes per kind, each on a freshly generated environment. */
  episodes: number;
  seed: number;
  policy: EnvPolicy;
  /** The chat model for policy 'llm': provider, model, base URL, script (as for --solver llm). */
  model?: Record<string, unknown>;
  runsDir: string;
  runId?: string;
  log?: (line: string) => void;
}

export interface PlayEnvsSummary {
  runId: string;
  dir: string;
  rows: { kind: EnvKind; episodes: number; solved: number; meanReward: number; endings: Record<string, number> }[];
}

/** Parses a comma-separated list of kinds; an unknown one is one clear line. */
export function parseKinds(text: string): EnvKind[] {
  const kinds = text
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);
  const bad = kinds.find((k) => !(ENV_KINDS as readonly string[]).includes(k));
  if (bad !== undefined || kinds.length === 0)
    throw new UserError(`unknown environment kind "${bad ?? text}"; kinds: ${ENV_KINDS.join(', ')}`);
  return kinds as EnvKind[];
}

/** The chat model for --policy llm; a bad configuration (no key, no script) is one clear line. */
function chatModel(fields: Record<string, unknown>) {
  const parsed = agentsConfigSchema.safeParse({ solver: { ...fields, enabled: true } });
  if (!parsed.success)
    throw new UserError(`--policy llm: ${parsed.error.issues[0]!.path.join('.')}: ${parsed.error.issues[0]!.message}`);
  try {
    return buildChatModel(parsed.data.solver, { role: 'solver' });
  } catch (e) {
    throw new UserError(`--policy llm: ${(e as Error).message}`);
  }
}

export async function playEnvs(opts: PlayEnvsOptions): Promise<PlayEnvsSummary> {
  const runId =
    opts.runId ?? `envs-${new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '')}-${opts.policy}`;
  const dir = join(opts.runsDir, runId);
  refuseExisting(opts.runsDir, runId);
  const model = opts.policy === 'llm' ? chatModel(opts.model ?? {}) : undefined;
  const sandbox = await createSandbox({ workers: 1 });
  const store = RunStore.open(dir, { create: true });
  store.setMeta({
    kind: 'envs',
    preset: `envs:${opts.policy}`,
    status: 'running',
    startedAt: new Date().toISOString(),
    config: JSON.stringify({ ...opts, log: undefined }),
  });
  const rows: PlayEnvsSummary['rows'] = [];
  try {
    for (const kind of opts.kinds) {
      const seen = new Set<string>();
      const played: { spec: EnvSpec; trajectory: Trajectory }[] = [];
      const endings: Record<string, number> = {};
      for (let i = 0; i < opts.episodes; i++) {
        const family = opts.families[i % opts.families.length]!;
        let spec: EnvSpec;
        try {
          spec = await generateEnv(sandbox, {
            kind,
            family,
            level: opts.level,
            rng: createRng(`${opts.seed}/${kind}/${i}`),
            seen,
          });
        } catch (e) {
          throw new UserError((e as Error).message.split('\n')[0]!);
        }
        const env = new Env(spec, sandbox);
        const t =
          opts.policy === 'llm'
            ? await playWithChatModel(env, model!, i)
            : await playEpisode(
                env,
                opts.policy === 'reference'
                  ? referencePolicy(spec)
                  : randomPolicy(spec, createRng(`${opts.seed}/random/${kind}/${i}`)),
                i,
              );
        played.push({ spec, trajectory: t });
        const end = t.reward === 1 ? 'solved' : (t.reason ?? 'wrong').split(':')[0]!;
        endings[end] = (endings[end] ?? 0) + 1;
      }
      store.addEnvEpisodes(0, played);
      const rewards = played.map((p) => p.trajectory.reward);
      const row = {
        kind,
        episodes: played.length,
        solved: rewards.filter((r) => r === 1).length,
        meanReward: rewards.reduce((a, b) => a + b, 0) / Math.max(1, rewards.length),
        endings,
      };
      rows.push(row);
      opts.log?.(
        `${kind}: ${row.solved}/${row.episodes} solved, mean reward ${row.meanReward.toFixed(2)} (${Object.entries(
          endings,
        )
          .map(([k, n]) => `${k} ${n}`)
          .join(', ')})`,
      );
    }
    store.setMeta({ status: 'finished', endedAt: new Date().toISOString() });
  } catch (e) {
    store.setMeta({ status: 'failed', endedAt: new Date().toISOString() });
    throw e;
  } finally {
    store.close();
    await sandbox.close();
  }
  return { runId, dir, rows };
}

export function envsCommand(program: Command): void {
  program
    .command('envs')
    .description(
      'play agentic environments (probe, repair, search) with the reference policy, a random valid-action policy or a chat model, and record the episodes in a run (export them with --what trajectories)',
    )
    .option('--kind <kinds>', 'comma-separated kinds', 'probe,repair,search')
    .option('--families <list>', 'comma-separated generator families the environments are made from', 'arith')
    .option('--level <n>', "level (the program's difficulty and the budgets)", parseIntArg, 0)
    .option('--episodes <n>', 'episodes per kind, each on a new environment', parseIntArg, 10)
    .option('--seed <n>', 'seed (the same seed makes the same environments)', parseIntArg, 0)
    .addOption(
      new Option(
        '--policy <name>',
        'reference (the scripted solution), random (valid actions), or llm (a chat model through tool calling)',
      )
        .choices(ENV_POLICIES)
        .default('reference'),
    )
    .addOption(
      new Option('--provider <name>', 'with --policy llm: the LLM provider').choices(['openai', 'ollama', 'scripted']),
    )
    .option('--model <name>', 'with --policy llm: model name')
    .option('--base-url <url>', 'with --policy llm: OpenAI-compatible endpoint')
    .option('--script <file>', 'with --provider scripted: a JSON script of replies')
    .option('--run-id <id>', 'name the run (default: envs-<time>-<policy>)')
    .addOption(runsDirOption())
    .option('--json', 'the summary as JSON on stdout')
    .action(async (o) => {
      const model = {
        provider: o.provider,
        model: o.model,
        baseUrl: o.baseUrl,
        scriptPath: o.script ? resolve(String(o.script)) : undefined,
      };
      const summary = await playEnvs({
        kinds: parseKinds(o.kind),
        families: String(o.families)
          .split(',')
          .map((f: string) => f.trim())
          .filter(Boolean),
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
      else
        process.stderr.write(
          `run ${summary.runId} in ${summary.dir}\nexport:   cogen export --run ${summary.runId} --what trajectories --out trajectories.jsonl\n`,
        );
    });
}
