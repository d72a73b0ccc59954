// Setting an autonomous run up (src/run/loop.ts runs its steps): its parts opened in order (a setup
// that fails leaves no half-made run, records/opening.ts), its held-out sets drawn, and a resumed run
// brought back to its last checkpoint.
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  createController,
  createGate,
  createMasteryTracker,
  isTaskArm,
  type Arm,
  type Controller,
  type Gate,
  type MasteryTracker,
} from '../../curricula/index.js';
import { renderCompact, renderNatural } from '../../generators/index.js';
import type { ProbeSets } from '../../graphs/index.js';
import type { Sandbox } from '../../sandbox/index.js';
import { UserError } from '../../core/errors.js';
import { createRng, type Rng } from '../../core/rng.js';
import type { Skill, Task } from '../../core/task.js';
import type { LearnedProposer } from '../../proposers/index.js';
import { createLlmPolicy, createProposerAgent, type LlmPolicy, type ProposerAgent } from '../agents/index.js';
import { createPolicy, type Policy, type PolicyPrompt, type TrainablePolicy } from '../solver/index.js';
import { taskPrompt } from './prompts.js';
import { ConfigError, type RunConfig } from './config.js';
import { probeSets, type Probe } from './probes.js';
import { drawRunProbes } from './draw-probes.js';
import {
  learnedProposerOf,
  openGraphs,
  sandboxOf,
  taskSpace,
  typesOf,
  type GraphSink,
  type TaskSpace,
} from './parts.js';
import { selfPlayConfigOf, selfPlayOf, type SelfPlay } from './self-play-parts.js';
import { RunStore } from './records/store.js';
import { RunOpening } from './records/opening.js';
import { newRunId, refuseExisting, runEvent } from './records/rows.js';
import { buildEnvProbes, envArmSkill, envProbeSets, envSpace, type EnvArchive } from './env-arms.js';
import { solverFit, type Checkpoint } from './loop-parts.js';
import { LevelEvals } from './level-evals.js';

export interface StepProgress {
  step: number;
  steps: number;
  meanReward: number;
  solveRate: number;
  frontierLevel: number;
  tasksPerSecond: number;
  elapsedMs: number;
  skillsMastered: number;
  graphBacklog: number;
}

export interface RunOptions {
  runsDir: string;
  /** Preset name recorded with the run. */
  preset: string;
  runId?: string;
  /** Resume an existing run from its last checkpoint. */
  resume?: boolean;
  onProgress?: (p: StepProgress) => void;
  log?: (line: string) => void;
  /** Ready chat models for the LLM agents (library users and tests), instead of building them from config. */
  chatModels?: { proposer?: BaseChatModel; solver?: BaseChatModel };
  /** Aborting stops the run after the current step, with a checkpoint (Ctrl-C in the CLI). */
  signal?: AbortSignal;
  /** Stop after this step without a checkpoint, as a killed run would (for tests of resume). */
  stopAfter?: number;
}

/** What a run is made of, opened. */
export interface RunParts {
  runId: string;
  dir: string;
  store: RunStore;
  /** When the run (this process's part of it) started, in ms. */
  started: number;
  opening: RunOpening;
  graphs: GraphSink[];
  sandbox: Sandbox;
  llmSolver: LlmPolicy | null;
  /** The built-in solver, which the run trains (the policy itself); null when a chat model solves. */
  transformer: TrainablePolicy | null;
  policy: Policy;
  render: (task: Task) => string;
  /** The prompt the policy is asked a task in (src/run/prompts.ts): the rendering, and the working's template when the solver writes one. */
  ask: (task: Task) => PolicyPrompt;
  proposer: ProposerAgent | null;
  gate: Gate;
  mastery: MasteryTracker;
  learned: LearnedProposer | null;
  selfPlay: SelfPlay | null;
  space: TaskSpace;
  envs: ReturnType<typeof envSpace>;
  skills: Skill[];
  armSkills: (arm: Arm) => string[];
  log: (line: string) => void;
}

/** Opens every part of a run, refusing what its config cannot do. */
export async function openRun(config: RunConfig, opts: RunOptions): Promise<RunParts> {
  const log = opts.log ?? (() => {});
  const runId = opts.runId ?? newRunId(config);
  const dir = join(opts.runsDir, runId);
  const space = taskSpace(config);
  const envs = envSpace(config, space.skills);
  const skills = [...space.skills, ...envs.skills];
  const armSkills = (arm: Arm): string[] => (isTaskArm(arm) ? space.armSkills(arm) : [envArmSkill(arm)]);
  if (config.agents.solver.enabled && envs.arms.length > 0) {
    throw new ConfigError(
      'environments: in `cogen run` the built-in solver plays them; a chat model plays them with `cogen envs --policy llm` or through `cogen serve`',
    );
  }
  if (config.agents.solver.enabled && config.solver.init) {
    throw new ConfigError(
      'solver.init: a chat-model solver (agents.solver) replaces the built-in one, whose weights solver.init sets; drop one of the two',
    );
  }
  if (!opts.resume) refuseExisting(opts.runsDir, runId, `--resume ${runId}`);

  const store = RunStore.open(dir, { create: !opts.resume });
  const started = Date.now();
  const opening = new RunOpening(dir);
  if (!opts.resume) opening.created();
  opening.add(() => store.close());
  const setup = <T>(make: () => Promise<T>): Promise<T> => opening.step(make);
  // A misconfigured Neo4j (URI, credentials, database) fails here, before the expensive setup.
  const graphs = await setup(() => openGraphs(config, store, log));
  opening.add(() => Promise.all(graphs.map((g) => g.graph.close())));
  const sandbox = await setup(() => sandboxOf(config));
  opening.add(() => sandbox.close());
  const llmSolver = config.agents.solver.enabled
    ? await setup(async () => createLlmPolicy(config.agents.solver, { log, model: opts.chatModels?.solver }))
    : null;
  // Self-play grows the positions to hold the proposer's choice tokens (its runs' weights only).
  const proposalLen = selfPlayConfigOf(config)?.maxChoices;
  const transformer: TrainablePolicy | null = llmSolver
    ? null
    : await setup(() =>
        createPolicy(config.solver, {
          seed: config.seed,
          totalSteps: config.steps,
          log,
          ...(proposalLen ? { proposalLen } : {}),
        }),
      );
  // solver.init: another run's weights as the start (a resumed run's own checkpoint replaces them below).
  const init = config.solver.init;
  if (transformer && init) {
    await setup(() =>
      transformer.loadWeights(init).catch((e: Error) => {
        throw new ConfigError(`solver.init: cannot start from ${init}: ${e.message.split('\n')[0]}`);
      }),
    );
    log(`solver: starts from the weights of ${init} (solver.init)`);
  }
  const policy: Policy = llmSolver ?? transformer!;
  if (llmSolver)
    log(`solver: ${policy.backend} under evaluation (answers the natural-language rendering; no training)`);
  // The built-in solver reads the compact rendering; a chat model reads the natural-language one.
  const render = llmSolver ? renderNatural : renderCompact;
  const ask = (t: Task): PolicyPrompt => taskPrompt(t, render(t), llmSolver ? 'off' : config.solver.working);
  opening.add(() => policy.dispose());
  const proposer = await setup(async () =>
    createProposerAgent(config.agents.proposer, { log, model: opts.chatModels?.proposer }),
  );
  if (proposer)
    log(`proposer: ${proposer.label} for ${Math.round(100 * proposer.share)}% of fresh tasks, generators for the rest`);
  const gate = createGate({ skills, armSkills, enabled: config.curriculum.gating });
  const mastery = createMasteryTracker(config.curriculum.mastery);
  const learned = learnedProposerOf(config);
  if (learned) log('proposer: the learned grammar proposer draws the fresh tasks (proposer.learned)');
  const selfPlay = await setup(async () => selfPlayOf(config, transformer));
  if (selfPlay)
    log(
      "proposer: self-play (experimental): the solver's network writes the fresh tasks under the grammar (proposer.selfPlay)",
    );
  return {
    runId,
    dir,
    store,
    started,
    opening,
    graphs,
    sandbox,
    llmSolver,
    transformer,
    policy,
    render,
    ask,
    proposer,
    gate,
    mastery,
    learned,
    selfPlay,
    space,
    envs,
    skills,
    armSkills,
    log,
  };
}

/** A run's held-out sets and the curriculum over its arms. */
export interface HeldOut {
  probes: Probe[];
  probeIds: Set<string>;
  envProbes: Awaited<ReturnType<typeof buildEnvProbes>>;
  envArchive: EnvArchive;
  /** Notes fresh tasks the built-in solver cannot answer (loop-parts.ts, solverFit). */
  fits: (task: Task) => void;
  evals: LevelEvals;
  arms: Arm[];
  controller: Controller;
  plan: ProbeSets;
}

/** The held-out probes and environments, drawn first from their own streams, and the level evaluation sets. */
export async function drawHeldOut(config: RunConfig, p: RunParts, seen: Set<string>): Promise<HeldOut> {
  const { sandbox, render, envs, mastery, log, space } = p;
  // Held-out probe tasks: drawn first from their own stream, and added to `seen` so that no
  // training task ever duplicates one; balanced so that no trivial policy passes them (src/run/probes.ts).
  // (mastery probes at the tabled levels: no skill enters above them; those have evaluation sets)
  const probes = await drawRunProbes(config, sandbox, seen, render);
  const probeIds = new Set(probes.map((p) => p.task.id));
  // Environment arms (src/run/env-arms.ts): held-out environments from their own stream, whose source
  // tasks join `seen`; an arm that makes none is left out. No environment is made from a held-out task.
  const envProbes = await buildEnvProbes(
    sandbox,
    envs.arms,
    { perArm: config.probes.perArm, mastery: mastery.opts, log },
    createRng(`${config.seed}/env-probes`),
    seen,
  );
  const envArchive: EnvArchive = { specs: new Map(), held: new Set(seen) };
  // Held-out sets above the tables (src/run/level-evals.ts): the listed arms' now, the rest as the run reaches them.
  const fits = solverFit(config.solver.model.maxAnswerLen, space.tabled, log);
  const evals = new LevelEvals(sandbox, {
    seed: config.seed,
    perArm: config.probes.perArm,
    mastery: mastery.opts,
    tabled: space.tabled,
    types: (f) => typesOf(space, f),
    ask: p.ask,
    log,
  });
  for (const a of space.arms) await evals.ensure(a.family, a.level, seen);
  const arms: Arm[] = [...space.arms, ...envProbes.arms];
  const controller = createController(config.curriculum, arms);
  const plan = probeSets(probes, space.skills, mastery.opts);
  Object.assign(plan.skills, envProbeSets(envProbes.probes, envs.skills, mastery.opts));
  return { probes, probeIds, envProbes, envArchive, fits, evals, arms, controller, plan };
}

/**
 * A run's probes are drawn again from its config when it resumes (src/run/draw-probes.ts). If the
 * version resuming it draws other probes (its probe builder changed), their sets differ from the
 * stored plan, and going on would train on tasks the run held out: refused, with the reason.
 */
function refuseOtherProbes(storedPlan: string | undefined, plan: ProbeSets, runId: string): void {
  if (storedPlan === undefined || storedPlan === JSON.stringify(plan)) return;
  // A run started before every level had a held-out set stored none: its probes may differ where a level's set grew.
  const why =
    (JSON.parse(storedPlan) as ProbeSets).levels === undefined
      ? 'it was started before every level had a held-out set'
      : 'its probe sets differ';
  throw new UserError(
    `run "${runId}" was started by a cogen that drew other held-out probes from its config (${why}), so resuming it here would mix held-out and training tasks; resume it with that version, or start a new run`,
  );
}

/** Brings a resumed run back to its last checkpoint (or step 0), or records a new run's start; returns the first step to run. */
export async function resumeOrBegin(
  config: RunConfig,
  opts: RunOptions,
  p: RunParts,
  h: HeldOut,
  run: { seen: Set<string>; archive: Map<string, Task>; tally: Map<string, { solved: number; attempts: number }> },
): Promise<{ firstStep: number; rng: Rng }> {
  const { store, policy, mastery, learned, selfPlay, runId, log, skills, started } = p;
  const { controller, evals, envArchive, plan } = h;
  const { seen, archive, tally } = run;
  let firstStep = 1;
  let rng = createRng(config.seed);
  if (opts.resume) {
    refuseOtherProbes(store.getMeta('probePlan'), plan, runId);
    const ck = store.latestCheckpoint();
    if (ck) {
      const state = JSON.parse(readFileSync(join(ck.path, 'loop.json'), 'utf8')) as Checkpoint;
      await policy.load(ck.path);
      controller.restore(state.controller);
      mastery.restore(state.mastery);
      if (learned && state.proposer !== undefined) learned.restore(state.proposer);
      if (selfPlay && state.selfPlay !== undefined) selfPlay.proposer.restore(state.selfPlay);
      rng = createRng(state.rng);
      store.truncateAfter(ck.step);
      firstStep = ck.step + 1;
    } else {
      store.truncateAfter(0);
    }
    for (const row of store.envEpisodes()) envArchive.specs.set(row.spec.id, row.spec);
    for (const row of store.tasks()) {
      await evals.ensure(row.task.family, row.task.level, seen);
      archive.set(row.task.id, row.task);
      seen.add(row.task.id);
      tally.set(row.task.id, { solved: row.solved, attempts: row.attempts });
      learned?.note(row.task);
      selfPlay?.proposer.note(row.task);
    }
    store.setMeta({ status: 'running', probePlan: JSON.stringify(plan) });
    log(`resuming run ${runId} at step ${firstStep}`);
  } else {
    store.setMeta({
      runId,
      preset: opts.preset,
      config: JSON.stringify(config),
      status: 'running',
      startedAt: new Date(started).toISOString(),
      probePlan: JSON.stringify(plan),
    });
    store.appendOutbox(0, [{ kind: 'skills', skills }, runEvent(store, 'running')]);
  }
  return { firstStep, rng };
}
