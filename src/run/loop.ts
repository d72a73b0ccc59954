// One autonomous curriculum run: the only place where the rooms meet (docs/DESIGN.md, "One step of
// the loop"). Read `runStep` top to bottom to follow one step.
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  createController,
  createGate,
  createMasteryTracker,
  isTaskArm,
  masteredSkills,
  type Arm,
  type ArmResult,
  type Controller,
  type MasteredSkill,
  type Pick,
} from '../../curricula/index.js';
import { solvedCount } from '../../core/rules.js';
import { renderCompact, renderNatural } from '../../generators/index.js';
import type { GraphEvent } from '../../graphs/index.js';
import type { RunConfig } from './config.js';
import { createRng, type Rng } from '../../core/rng.js';
import {
  createLlmPolicy,
  createProposerAgent,
  learnabilityReward,
  type LlmPolicy,
  type ProposalRecord,
} from '../agents/index.js';
import { skillProbeMetrics, masterySummary, probeSets, type MasterySummary } from './probes.js';
import { drawRunProbes } from './draw-probes.js';
import {
  flushGraphs,
  frontierMetrics,
  learnedMetrics,
  learnedProposerOf,
  openCeilings,
  openGraphs,
  propose,
  sandboxOf,
  taskSpace,
  typesOf,
  type ProposeContext,
} from './parts.js';
import { createPolicy } from '../solver/index.js';
import type { Policy, TrainablePolicy } from '../solver/index.js';
import { selfPlayConfigOf, selfPlayMetrics, selfPlayOf } from './self-play-parts.js';
import { RunStore } from './records/store.js';
import { RunOpening } from './records/opening.js';
import { armResult, masteryRecords, newRunId, newTaskRecords, refuseExisting, runEvent } from './records/rows.js';
import { buildEnvProbes, envArmSkill, envProbeSets, envSpace, playEnvPicks, type EnvArchive } from './env-arms.js';
import {
  agentMetrics,
  checkpoint,
  envMetrics,
  runProbes,
  solverFit,
  verifyGroups,
  type Checkpoint,
} from './loop-parts.js';
import { LevelEvals } from './level-evals.js';
import { ConfigError } from './config.js';
import { answerKind, answerShape, type Task } from '../../core/task.js';
import { trainingReward } from './training-reward.js';
import { mean } from '../../core/stats.js';

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

export interface RunSummary extends MasterySummary {
  runId: string;
  dir: string;
  steps: number;
  /** finished, or interrupted (resumable). */
  status: string;
  tasks: number;
  skillsMastered: string[];
  finalSolveRate: number;
  probeAccuracy: number;
  backend: string;
  wallMs: number;
  graphBacklog: number;
}

/** Sets up every part, runs the steps, and leaves the run in `runs/<id>/`. */
export async function startRun(config: RunConfig, opts: RunOptions): Promise<RunSummary> {
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
  let rng = createRng(config.seed);
  /** Cumulative (solved, attempts) per task over the run: the solver's measured solve rate. */
  const tally = new Map<string, { solved: number; attempts: number }>();
  const seen = new Set<string>();
  const archive = new Map<string, Task>();

  try {
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
      tabled: space.tabled,
      types: (f) => typesOf(space, f),
      render,
    });
    for (const a of space.arms) await evals.ensure(a.family, a.level, seen);
    const arms: Arm[] = [...space.arms, ...envProbes.arms];
    const controller = createController(config.curriculum, arms);
    const plan = probeSets(probes, space.skills, mastery.opts);
    Object.assign(plan.skills, envProbeSets(envProbes.probes, envs.skills, mastery.opts));
    let firstStep = 1;
    if (opts.resume) {
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
        seen.add(seenKey(row.task));
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
    log(
      `run ${runId}: ${config.steps} steps × ${config.batch} tasks × ${config.group} answers, families ${config.families.join(', ')}${envProbes.arms.length ? `, environments ${config.environments.join(', ')} (${envProbes.arms.length} arms)` : ''}, curriculum ${controller.name}${config.curriculum.gating ? ' + gating' : ''}`,
    );

    // A resumed run carries on from its last step's probe accuracy, as the run that never stopped does.
    const lastRow = opts.resume ? store.metrics().at(-1) : undefined;
    let last = { solveRate: Number(lastRow?.solveRate ?? 0), probeAccuracy: Number(lastRow?.probeAccuracy ?? 0) };
    for (let step = firstStep; step <= config.steps; step++) {
      const t0 = Date.now();
      const open = gate.open(arms, mastery.mastered());
      const mastered = masteredSkills(mastery.mastered(), skills, open);
      const ceilings = openCeilings(space, open);
      const ctx: StepContext = {
        config,
        step,
        rng,
        sandbox,
        policy,
        transformer,
        controller,
        store,
        archive,
        seen,
        arms: open,
        mastered,
        ceilings,
        evals,
        armSkills,
        probeIds,
        render,
        proposer,
        llmSolver,
        skills,
        learned,
        selfPlay,
        envArchive,
      };
      const res = await runStep(ctx);
      for (const s of res.scored) {
        const t = tally.get(s.taskId) ?? { solved: 0, attempts: 0 };
        tally.set(s.taskId, { solved: t.solved + s.solved, attempts: t.attempts + s.attempts });
      }
      for (const t of res.newTasks) {
        learned?.note(t);
        selfPlay?.proposer.note(t);
        if (!llmSolver) fits(t);
      }
      let probeAccuracy = last.probeAccuracy;
      let probeArms: Record<string, number> = {};
      let masteryEvents: GraphEvent[] = [];
      if (step % config.probes.every === 0 || step === config.steps) {
        const probe = await runProbes(policy, transformer, sandbox, probes, envProbes.probes, skills);
        probeAccuracy = probe.overall;
        // each skill's accuracy at this round, mastered or not (`cogen skills` shows the latest), and the levels' held-out sets
        probeArms = { ...probe.perArm, ...skillProbeMetrics(probe.perSkill), ...(await evals.score(policy)) };
        masteryEvents = masteryRecords(
          runId,
          step,
          new Date().toISOString(),
          mastery.observe(step, probe.perSkill),
          log,
        );
      }
      const fresh = newTaskRecords(runId, step, res.newTasks);
      store.commitStep({
        step,
        newTasks: fresh.newTasks,
        scored: res.scored,
        episodes: res.episodes,
        envEpisodes: res.envEpisodes,
        metrics: {
          ...res.metrics,
          probeAccuracy,
          ...probeArms,
          skillsMastered: mastery.mastered().size,
          ms: Date.now() - t0,
        },
        proposals: res.proposals,
        outbox: [
          ...fresh.outbox,
          ...res.scored.map((s): GraphEvent => ({
            kind: 'solve-rate',
            taskId: s.taskId,
            solveRate: tally.get(s.taskId)!.solved / tally.get(s.taskId)!.attempts,
          })),
          ...masteryEvents,
        ],
      });
      const interrupted = opts.signal?.aborted === true;
      if (step % config.checkpointEvery === 0 || step === config.steps || interrupted) {
        await checkpoint(store, policy, runId, step, {
          step,
          rng: rng.state(),
          controller: controller.state(),
          mastery: mastery.state(),
          ...(learned ? { proposer: learned.state() } : {}),
          ...(selfPlay ? { selfPlay: selfPlay.proposer.state() } : {}),
        });
      }
      const backlog = await flushGraphs(graphs, store, config.graph.batchSize, log);
      last = { solveRate: Number(res.metrics.solveRate), probeAccuracy };
      opts.onProgress?.({
        step,
        steps: config.steps,
        meanReward: Number(res.metrics.meanReward),
        solveRate: Number(res.metrics.solveRate),
        frontierLevel: Number(res.metrics.meanLevel),
        tasksPerSecond: config.batch / Math.max(1e-3, (Date.now() - t0) / 1000),
        elapsedMs: Date.now() - started,
        skillsMastered: mastery.mastered().size,
        graphBacklog: backlog,
      });
      if (step === opts.stopAfter) break;
      if (interrupted) {
        store.setMeta({ status: 'interrupted' });
        log(`interrupted after step ${step}: checkpoint taken; resume with --resume ${runId}`);
        break;
      }
    }
    const finished = (Number(store.getMeta('lastStep')) || 0) >= config.steps;
    if (finished) {
      store.setMeta({ status: 'finished', endedAt: new Date().toISOString() });
      store.appendOutbox(config.steps, [runEvent(store, 'finished')]);
    }
    const backlog = await flushGraphs(graphs, store, config.graph.batchSize, log);
    return {
      runId,
      dir,
      steps: Number(store.getMeta('lastStep')) || 0,
      status: store.getMeta('status') ?? 'running',
      tasks: store.count('tasks'),
      skillsMastered: [...mastery.mastered()].sort(),
      ...masterySummary(mastery.mastered(), mastery.state(), plan),
      finalSolveRate: last.solveRate,
      probeAccuracy: last.probeAccuracy,
      backend: policy.backend,
      wallMs: Date.now() - started,
      graphBacklog: backlog,
    };
  } finally {
    await opening.closeAll();
  }
}

interface StepContext extends ProposeContext {
  config: RunConfig;
  rng: Rng;
  policy: Policy;
  /** The built-in solver, which the run trains (the policy itself); null when a chat model solves. */
  transformer: TrainablePolicy | null;
  controller: Controller;
  store: RunStore;
  arms: Arm[];
  /** Skills mastered now and the open arms at their level, for rehearsal. */
  mastered: MasteredSkill[];
  armSkills: (arm: Arm) => string[];
  render: (task: Task) => string;
  llmSolver: LlmPolicy | null;
  envArchive: EnvArchive;
  /** Families whose levels go past the listed arms, while open (PickContext.ceilings). */
  ceilings: ReadonlyMap<string, number>;
  evals: LevelEvals;
}

/** Steps 1–6 of docs/DESIGN.md: pick arms, propose tasks, sample, verify, score, update. */
async function runStep(ctx: StepContext) {
  const { config, step, rng, sandbox, policy, transformer, controller } = ctx;
  // 1. The curriculum picks B arms (some as replays or mutations of archived tasks, some rehearsing
  // mastered skills); environment arms among them are played in 4b.
  const picks = controller.pick(config.batch, rng, {
    step,
    arms: ctx.arms,
    mastered: ctx.mastered,
    ...(ctx.ceilings.size > 0 ? { ceilings: ctx.ceilings } : {}),
  });
  // A level above a family's table gets its evaluation set before its first training task (src/run/level-evals.ts).
  for (const pick of picks) if (isTaskArm(pick.arm)) await ctx.evals.ensure(pick.arm.family, pick.arm.level, ctx.seen);
  // 2. The proposer materialises each task pick as a validated task.
  const tasks: Task[] = [];
  const newTasks: Task[] = [];
  const proposals: ProposalRecord[] = [];
  const envPicks: { pick: Pick; rng: Rng }[] = [];
  for (const [i, pick] of picks.entries()) {
    const pickRng = rng.fork(`${step}/${i}`);
    if (!isTaskArm(pick.arm)) {
      envPicks.push({ pick, rng: pickRng });
      continue;
    }
    const task = await propose(ctx, pick, pickRng, proposals);
    if (!ctx.archive.has(task.id)) {
      ctx.archive.set(task.id, task);
      newTasks.push(task);
    }
    tasks.push(task);
  }
  // 3. The solver samples G answers per task, decoding constrained to each task's answer kind or type
  // (the built-in solver's rollout is the one its update in 6 takes back).
  const prompts = tasks.map((t) => ({ text: ctx.render(t), kind: answerKind(t.type), shape: answerShape(t) }));
  const sampled = transformer
    ? { transformer, rollout: await transformer.sample(prompts, config.group) }
    : { transformer: null, rollout: await policy.sample(prompts, config.group) };
  const answers = sampled.rollout.answers;
  // 4. The sandbox verifies every answer: verdicts[g][i] for answer i to task g.
  const verdicts = await verifyGroups(sandbox, tasks, answers);
  const rewards = verdicts.map((group) => group.map((v) => v.reward));
  // 4b. Each environment pick: G episodes, played by the built-in solver turn by turn and rewarded
  // at the end by the environment, which verifies in the sandbox (src/run/env-arms.ts).
  const played = await playEnvPicks(
    transformer,
    sandbox,
    envPicks.map((e) => e.pick),
    envPicks.map((e) => e.rng),
    ctx.envArchive,
    config.group,
    step,
  );
  // 5. Per-task solve rates feed the curriculum (learnability etc. are computed from them there).
  const results: ArmResult[] = tasks.map((t, g) => armResult(t, rewards[g]!, step));
  controller.update([...results, ...played.results]);
  // The learned proposer's REINFORCE round on the learnability of the tasks it drew (proposers/).
  const learnedStats = ctx.learned ? ctx.learned.learn(results) : undefined;
  // Self-play: the proposer role's choice tokens with their task-relative advantages (proposers/).
  const selfPlayRound = ctx.selfPlay ? ctx.selfPlay.proposer.learn(results) : undefined;
  // 6. One GRPO-family update (groups with equal rewards carry no gradient; the policy drops them),
  // on the rewards shaped for training (src/run/training-reward.ts; the exact ones when shaping is off), and on
  // the environment episodes (one advantage per episode, the loss on the agent's tokens); in
  // self-play, on the proposer role's rows as well, in the same step.
  const shaped = verdicts.map((group, g) =>
    group.map((v, i) => trainingReward(tasks[g]!, answers[g]![i]!, v, config.reward)),
  );
  const extras = {
    episodes: played.groups,
    ...(ctx.selfPlay
      ? { proposals: selfPlayRound?.rows ?? [], proposalWeight: ctx.selfPlay.proposer.config.weight }
      : {}),
  };
  const stats = sampled.transformer
    ? await sampled.transformer.update(sampled.rollout, shaped, extras)
    : await policy.update(sampled.rollout, shaped);

  // The proposer's reward: the learnability of each task it wrote, recorded with its prompt.
  for (const p of proposals) {
    const g = tasks.findIndex((t) => t.id === p.taskId);
    if (g >= 0) p.learnability = learnabilityReward(rewards[g]!);
  }
  const flat = rewards.flat();
  return {
    newTasks,
    proposals,
    envEpisodes: played.records,
    scored: results.map((r) => ({ taskId: r.taskId, attempts: r.rewards.length, solved: solvedCount(r.rewards) })),
    episodes: verdicts.flatMap((group, g) =>
      group.map((v, i) => ({
        taskId: tasks[g]!.id,
        answer: answers[g]![i]!,
        reward: v.reward,
        reason: v.reason ?? null,
      })),
    ),
    metrics: {
      meanReward: mean(flat),
      solveRate: mean(results.map((r) => r.solveRate)),
      learnability: mean(rewards.map(learnabilityReward)),
      meanLevel: mean(tasks.map((t) => t.level)),
      openArms: ctx.arms.length,
      ...frontierMetrics(controller),
      newTasks: newTasks.length,
      ...stats,
      ...agentMetrics(ctx, proposals, rewards),
      ...(played.groups.length > 0 ? envMetrics(played) : {}),
      ...(learnedStats === undefined ? {} : learnedMetrics(learnedStats)),
      ...(selfPlayRound === undefined ? {} : selfPlayMetrics(selfPlayRound?.stats ?? null)),
    },
  };
}

const seenKey = (t: Task): string => t.id;
