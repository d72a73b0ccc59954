// One autonomous curriculum run: the only place where the rooms meet (docs/DESIGN.md, "One step of
// the loop"). Read `runStep` top to bottom to follow one step.
import {
  isTaskArm,
  masteredSkills,
  unmasteredSkills,
  type Arm,
  type ArmResult,
  type Controller,
  type MasteredSkill,
  type Pick,
  type SkillArms,
} from '../../curricula/index.js';
import { solvedCount } from '../../core/rules.js';
import type { GraphEvent } from '../../graphs/index.js';
import type { RunConfig } from './config.js';
import { type Rng } from '../../core/rng.js';
import { learnabilityReward, type LlmPolicy, type ProposalRecord } from '../agents/index.js';
import { skillProbeMetrics, masterableSkills, masterySummary, type MasterySummary } from './probes.js';
import {
  flushGraphs,
  frontierMetrics,
  learnedMetrics,
  openCeilings,
  propose,
  type ProposeContext,
  type TaskSpace,
} from './parts.js';
import type { Policy, PolicyPrompt, TrainablePolicy } from '../solver/index.js';
import { selfPlayMetrics } from './self-play-parts.js';
import { RunStore } from './records/store.js';
import { armResult, masteryRecords, newTaskRecords, runEvent } from './records/rows.js';
import { playEnvPicks, type EnvArchive } from './env-arms.js';
import { agentMetrics, checkpoint, envMetrics, runProbes, verifyGroups } from './loop-parts.js';
import { LevelEvals } from './level-evals.js';
import { climbOf, levelSetMetrics, type FamilyClimb } from './level-sets.js';
import { TaskArchive } from './task-archive.js';
import {
  drawHeldOut,
  openRun,
  resumeOrBegin,
  type HeldOut,
  type RunOptions,
  type RunParts,
  type StepProgress,
} from './loop-open.js';
import { type Task } from '../../core/task.js';
import { referenceWorking, trainingReward } from './training-reward.js';
import { mean } from '../../core/stats.js';

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
  /** Each family's highest level passed at the last probe round, the step it was first reached, and h (docs/levels.md). */
  levels: FamilyClimb[];
  backend: string;
  wallMs: number;
  graphBacklog: number;
}

export type { RunOptions, StepProgress };

/** Sets up every part, runs the steps, and leaves the run in `runs/<id>/`. */
export async function startRun(config: RunConfig, opts: RunOptions): Promise<RunSummary> {
  const p = await openRun(config, opts);
  const { runId, store, started, opening, graphs, llmSolver, policy } = p;
  const { gate, mastery, learned, selfPlay, space, skills, log } = p;
  /** Cumulative (solved, attempts) per task over the run: the solver's measured solve rate. */
  const tally = new Map<string, { solved: number; attempts: number }>();
  const seen = new Set<string>();
  const archive = new TaskArchive();

  try {
    const h = await drawHeldOut(config, p, seen);
    const { envProbes, fits, arms, controller, plan } = h;
    const masterable = masterableSkills(plan);
    const { firstStep, rng } = await resumeOrBegin(config, opts, p, h, { seen, archive, tally });
    log(
      `run ${runId}: ${config.steps} steps × ${config.batch} tasks × ${config.group} answers, families ${config.families.join(', ')}${envProbes.arms.length ? `, environments ${config.environments.join(', ')} (${envProbes.arms.length} arms)` : ''}, curriculum ${config.curriculum.controller}${config.curriculum.evolve?.share ? ` + the frontier proposer (share ${config.curriculum.evolve.share})` : ''}${config.curriculum.gating ? ' + gating' : ''}`,
    );

    // A resumed run carries on from its last step's probe accuracy, as the run that never stopped does.
    const lastRow = opts.resume ? store.metrics().at(-1) : undefined;
    let last = { solveRate: Number(lastRow?.solveRate ?? 0), probeAccuracy: Number(lastRow?.probeAccuracy ?? 0) };
    for (let step = firstStep; step <= config.steps; step++) {
      const t0 = Date.now();
      const open = gate.open(arms, mastery.mastered());
      const mastered = masteredSkills(mastery.mastered(), skills, open);
      const unmastered = unmasteredSkills(mastery.mastered(), masterable, skills, open);
      const ceilings = openCeilings(space, open);
      const ctx: StepContext = {
        ...p,
        ...h,
        config,
        step,
        rng,
        archive,
        seen,
        arms: open,
        mastered,
        unmastered,
        ceilings,
        heldOut: (family, level) => heldOutAt(space, h.evals, seen, family, level),
        rateOf: (id) => {
          const t = tally.get(id);
          return t && t.attempts > 0 ? t.solved / t.attempts : undefined;
        },
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
      const due = step % config.probes.every === 0 || step === config.steps;
      const { probeAccuracy, probeArms, masteryEvents } = due
        ? await probeRound(step, p, h)
        : { probeAccuracy: last.probeAccuracy, probeArms: {}, masteryEvents: [] };
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
    return await finish(config, p, plan, last);
  } finally {
    await opening.closeAll();
  }
}

/** Records the end of a finished run and what it reached. */
async function finish(
  config: RunConfig,
  p: RunParts,
  plan: HeldOut['plan'],
  last: { solveRate: number; probeAccuracy: number },
): Promise<RunSummary> {
  const { store, mastery } = p;
  const finished = (Number(store.getMeta('lastStep')) || 0) >= config.steps;
  if (finished) {
    store.setMeta({ status: 'finished', endedAt: new Date().toISOString() });
    store.appendOutbox(config.steps, [runEvent(store, 'finished')]);
  }
  const backlog = await flushGraphs(p.graphs, store, config.graph.batchSize, p.log);
  return {
    runId: p.runId,
    dir: p.dir,
    steps: Number(store.getMeta('lastStep')) || 0,
    status: store.getMeta('status') ?? 'running',
    tasks: store.count('tasks'),
    skillsMastered: [...mastery.mastered()].sort(),
    ...masterySummary(mastery.mastered(), mastery.state(), plan),
    finalSolveRate: last.solveRate,
    probeAccuracy: last.probeAccuracy,
    levels: climbOf(store.metrics()),
    backend: p.policy.backend,
    wallMs: Date.now() - p.started,
    graphBacklog: backlog,
  };
}

/** A probe round: greedy answers on the held-out probes, environments and level sets, and the mastery events they cross. */
async function probeRound(step: number, p: RunParts, h: HeldOut) {
  const probe = await runProbes(p.policy, p.transformer, p.sandbox, h.probes, h.envProbes.probes, p.skills, p.ask);
  // each skill's accuracy at this round, mastered or not (`cogen skills` shows the latest), each level's held-out
  // set (the probes' at the tabled levels, the evaluation sets above) and each family's highest level passed
  const levels = [...probe.perLevel, ...(await h.evals.score(p.policy))];
  const probeArms = {
    ...probe.perArm,
    ...skillProbeMetrics(probe.perSkill),
    ...levelSetMetrics(levels, probe.perSkill, p.space.skills, p.mastery.opts),
  };
  const events = p.mastery.observe(step, probe.perSkill);
  const masteryEvents = masteryRecords(p.runId, step, new Date().toISOString(), events, p.log);
  return { probeAccuracy: probe.overall, probeArms, masteryEvents };
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
  /** Masterable skills not mastered now and the open arms at their level. */
  unmastered: SkillArms[];
  armSkills: (arm: Arm) => string[];
  render: (task: Task) => string;
  ask: (task: Task) => PolicyPrompt;
  llmSolver: LlmPolicy | null;
  envArchive: EnvArchive;
  /** Families whose levels go past the listed arms, while open (PickContext.ceilings). */
  ceilings: ReadonlyMap<string, number>;
  evals: LevelEvals;
}

/**
 * Whether a (family, level) has a held-out set a frontier child may be admitted beside: a level the
 * run lists (its probes), or one above them up to the family's ceiling, whose evaluation set is
 * made here if it is not yet (src/run/level-evals.ts).
 */
async function heldOutAt(space: TaskSpace, evals: LevelEvals, seen: Set<string>, family: string, level: number) {
  const listed = space.arms.some((a) => a.family === family && a.level === level);
  const ceiling = space.ceilings.get(family);
  if (!listed && !(ceiling !== undefined && level <= ceiling)) return false;
  await evals.ensure(family, level, seen);
  return true;
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
    unmastered: ctx.unmastered,
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
  const prompts = tasks.map(ctx.ask);
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
  const mastered = new Set(ctx.mastered.map((s) => s.skillId));
  const results: ArmResult[] = tasks.map((t, g) => armResult(t, rewards[g]!, step, mastered));
  controller.update([...results, ...played.results]);
  // The learned proposer's REINFORCE round on the learnability of the tasks it drew (proposers/).
  const learnedStats = ctx.learned ? ctx.learned.learn(results) : undefined;
  // Self-play: the proposer role's choice tokens with their task-relative advantages (proposers/).
  const selfPlayRound = ctx.selfPlay ? ctx.selfPlay.proposer.learn(results) : undefined;
  // 6. One GRPO-family update (groups with equal rewards carry no gradient; the policy drops them),
  // on the rewards shaped for training (src/run/training-reward.ts; the exact ones when shaping is off), and on
  // the environment episodes (one advantage per episode, the loss on the agent's tokens); in
  // self-play, on the proposer role's rows as well, in the same step.
  const style = config.solver.working === 'off' ? null : config.solver.working;
  const shaped = verdicts.map((group, g) => {
    const reference = style && referenceWorking(tasks[g]!, prompts[g]!.work, style);
    return group.map((v, i) => {
      const written = sampled.rollout.written?.[g]?.[i];
      const working = reference && written !== undefined ? { written, reference } : undefined;
      return trainingReward(tasks[g]!, answers[g]![i]!, v, config.reward, working);
    });
  });
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
