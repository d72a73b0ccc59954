// One autonomous curriculum run: the only place where the rooms meet (DESIGN.md, "One step of the
// loop"). Read `runStep` top to bottom to follow one step.
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createController, createGate, createMasteryTracker, meanAbsAdvantage, solveRate } from '../curricula/index.js';
import type { Arm, ArmResult, Controller, Pick } from '../curricula/types.js';
import { allSkills, generateTask, getFamily, materialise, mutate, renderCompact, renderNatural } from '../generators/index.js';
import { openSkillGraph, drainOutbox } from '../graphs/index.js';
import type { GraphEvent, GraphTask, SkillGraph } from '../graphs/types.js';
import { createSandbox } from '../sandbox/index.js';
import type { Sandbox } from '../sandbox/types.js';
import { verifyMany } from '../sandbox/verify.js';
import type { RunConfig } from './config.js';
import { createRng, type Rng } from './rng.js';
import { createLlmPolicy, createProposerAgent, learnabilityReward, passAtK, toProposalRecord, type LlmPolicy, type ProposalRecord, type ProposerAgent } from './agents/index.js';
import { createPolicy } from './solver/index.js';
import type { Policy } from './solver/types.js';
import { RunStore, StoreError } from './store.js';
import { answerKind, answerShape, type Task, type Skill } from './task.js';
import { trainingReward } from './reward.js';

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

export interface RunSummary {
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

interface Checkpoint {
  step: number;
  rng: [number, number, number, number];
  controller: unknown;
  mastery: unknown;
}

/** Sets up every part, runs the steps, and leaves the run in `runs/<id>/`. */
export async function startRun(config: RunConfig, opts: RunOptions): Promise<RunSummary> {
  const log = opts.log ?? (() => {});
  const runId = opts.runId ?? newRunId(config);
  const dir = join(opts.runsDir, runId);
  const fams = config.families.map((id) => getFamily(id));
  const arms: Arm[] = fams.flatMap((f) =>
    Array.from({ length: Math.min(config.maxLevel, f.levels - 1) + 1 }, (_, level) =>
      config.types.map((type) => ({ family: f.id, level, type })),
    ).flat(),
  );
  const skills = allSkills().filter((s) => config.families.includes(s.family));
  const armSkills = (arm: Arm): string[] => skills.filter((s) => s.family === arm.family && s.level <= arm.level).map((s) => s.id);
  if (!opts.resume && existsSync(join(dir, 'run.db'))) {
    throw new StoreError(`run "${runId}" already exists in ${opts.runsDir}: resume it with --resume ${runId}, or pick another --run-id`);
  }

  const store = RunStore.open(dir, { create: !opts.resume });
  const started = Date.now();
  // Setup that fails releases what it opened and, for a new run, leaves no half-made run behind.
  const opened: (() => unknown)[] = [() => store.close()];
  const setup = async <T>(make: () => Promise<T>): Promise<T> => {
    try {
      return await make();
    } catch (e) {
      for (const close of opened.reverse()) await Promise.resolve(close()).catch(() => {});
      if (!opts.resume) rmSync(dir, { recursive: true, force: true });
      throw e;
    }
  };
  // A misconfigured Neo4j (URI, credentials, database) fails here, before the expensive setup.
  const graphs = await setup(() => openGraphs(config, store, log));
  opened.push(() => Promise.all(graphs.map((g) => g.graph.close())));
  const sandbox = await setup(() => createSandbox({ workers: config.sandbox.workers, limits: { timeoutMs: config.sandbox.timeoutMs, memoryBytes: config.sandbox.memoryBytes } }));
  opened.push(() => sandbox.close());
  // The learning-rate schedule spans the run.
  const solverConfig = { ...config.solver, optim: { ...config.solver.optim, totalSteps: config.steps } };
  const llmSolver = config.agents.solver.enabled ? await setup(async () => createLlmPolicy(config.agents.solver, { log, model: opts.chatModels?.solver })) : null;
  const policy: Policy = llmSolver ?? (await setup(() => createPolicy(solverConfig, { seed: config.seed, log })));
  if (llmSolver) log(`solver: ${policy.backend} under evaluation (answers the natural-language rendering; no training)`);
  // The built-in solver reads the compact rendering; a chat model reads the natural-language one.
  const render = llmSolver ? renderNatural : renderCompact;
  opened.push(() => policy.dispose());
  const proposer = await setup(async () => createProposerAgent(config.agents.proposer, { log, model: opts.chatModels?.proposer }));
  if (proposer) log(`proposer: ${proposer.label} for ${Math.round(100 * proposer.share)}% of fresh tasks, generators for the rest`);
  const controller = createController(config.curriculum, arms);
  const gate = createGate({ skills, armSkills, enabled: config.curriculum.gating });
  const mastery = createMasteryTracker(config.curriculum.mastery);
  let rng = createRng(config.seed);
  /** Cumulative (solved, attempts) per task over the run: the solver's measured solve rate. */
  const tally = new Map<string, { solved: number; attempts: number }>();
  const seen = new Set<string>();
  const archive = new Map<string, Task>();

  try {
    // Held-out probe tasks: drawn first from their own stream, and added to `seen` so that no
    // training task ever duplicates one.
    const probes = await buildProbes(sandbox, arms, config.probes.perArm, createRng(`${config.seed}/probes`), seen, render);
    const probeIds = new Set(probes.map((p) => p.task.id));
    let firstStep = 1;
    if (opts.resume) {
      const ck = store.latestCheckpoint();
      if (ck) {
        const state = JSON.parse(readFileSync(join(ck.path, 'loop.json'), 'utf8')) as Checkpoint;
        await policy.load(ck.path);
        controller.restore(state.controller);
        mastery.restore(state.mastery);
        rng = createRng(state.rng);
        store.truncateAfter(ck.step);
        firstStep = ck.step + 1;
      } else {
        store.truncateAfter(0);
      }
      for (const row of store.tasks()) {
        archive.set(row.task.id, row.task);
        seen.add(seenKey(row.task));
        tally.set(row.task.id, { solved: row.solved, attempts: row.attempts });
      }
      store.setMeta({ status: 'running' });
      log(`resuming run ${runId} at step ${firstStep}`);
    } else {
      store.setMeta({ runId, preset: opts.preset, config: JSON.stringify(config), status: 'running', startedAt: new Date(started).toISOString() });
      store.appendOutbox(0, [
        { kind: 'skills', skills },
        runEvent(store, 'running'),
      ]);
    }
    log(`run ${runId}: ${config.steps} steps × ${config.batch} tasks × ${config.group} answers, families ${config.families.join(', ')}, curriculum ${controller.name}${config.curriculum.gating ? ' + gating' : ''}`);

    let last = { solveRate: 0, probeAccuracy: 0 };
    for (let step = firstStep; step <= config.steps; step++) {
      const t0 = Date.now();
      const ctx: StepContext = { config, step, rng, sandbox, policy, controller, store, archive, seen, arms: gate.open(arms, mastery.mastered()), armSkills, probeIds, render, proposer, llmSolver, skills };
      const res = await runStep(ctx);
      for (const s of res.scored) {
        const t = tally.get(s.taskId) ?? { solved: 0, attempts: 0 };
        tally.set(s.taskId, { solved: t.solved + s.solved, attempts: t.attempts + s.attempts });
      }
      let probeAccuracy = last.probeAccuracy;
      let probeArms: Record<string, number> = {};
      const events: StepEvents = { skillEvents: [], outbox: [] };
      if (step % config.probes.every === 0 || step === config.steps) {
        const probe = await runProbes(policy, sandbox, probes, skills);
        probeAccuracy = probe.overall;
        probeArms = probe.perArm;
        for (const ev of mastery.observe(step, probe.perSkill)) {
          const at = new Date().toISOString();
          events.skillEvents.push({ skillId: ev.skillId, event: ev.event, accuracy: ev.accuracy, at });
          events.outbox.push({ kind: 'mastery', runId, skillId: ev.skillId, event: ev.event, step, at, accuracy: ev.accuracy });
          log(`step ${step}: ${ev.event} ${ev.skillId} (accuracy ${ev.accuracy.toFixed(2)})`);
        }
      }
      store.commitStep({
        step,
        newTasks: res.newTasks.map((task) => ({ task, compact: renderCompact(task), natural: renderNatural(task) })),
        scored: res.scored,
        episodes: res.episodes,
        metrics: { ...res.metrics, probeAccuracy, ...probeArms, skillsMastered: mastery.mastered().size, ms: Date.now() - t0 },
        proposals: res.proposals,
        skillEvents: events.skillEvents,
        outbox: [
          ...res.newTasks.map((task): GraphEvent => ({ kind: 'task', runId, step, task: graphTask(task) })),
          ...res.scored.map((s): GraphEvent => ({ kind: 'solve-rate', taskId: s.taskId, solveRate: tally.get(s.taskId)!.solved / tally.get(s.taskId)!.attempts })),
          ...events.outbox,
        ],
      });
      const interrupted = opts.signal?.aborted === true;
      if (step % config.checkpointEvery === 0 || step === config.steps || interrupted) {
        await checkpoint(store, policy, runId, step, { step, rng: rng.state(), controller: controller.state(), mastery: mastery.state() });
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
      finalSolveRate: last.solveRate,
      probeAccuracy: last.probeAccuracy,
      backend: policy.backend,
      wallMs: Date.now() - started,
      graphBacklog: backlog,
    };
  } finally {
    for (const close of opened.reverse()) await Promise.resolve(close()).catch(() => {});
  }
}

interface StepContext {
  config: RunConfig;
  step: number;
  rng: Rng;
  sandbox: Sandbox;
  policy: Policy;
  controller: Controller;
  store: RunStore;
  archive: Map<string, Task>;
  seen: Set<string>;
  arms: Arm[];
  armSkills: (arm: Arm) => string[];
  probeIds: ReadonlySet<string>;
  render: (task: Task) => string;
  proposer: ProposerAgent | null;
  llmSolver: LlmPolicy | null;
  skills: Skill[];
}

interface StepEvents {
  skillEvents: { skillId: string; event: 'learned' | 'forgotten'; accuracy: number; at: string }[];
  outbox: GraphEvent[];
}

/** Steps 1–6 of DESIGN.md: pick arms, propose tasks, sample, verify, score, update. */
async function runStep(ctx: StepContext) {
  const { config, step, rng, sandbox, policy, controller } = ctx;
  // 1. The curriculum picks B arms (some as replays or mutations of archived tasks).
  const picks = controller.pick(config.batch, rng, { step, arms: ctx.arms });
  // 2. The proposer materialises each pick as a validated task.
  const tasks: Task[] = [];
  const newTasks: Task[] = [];
  const proposals: ProposalRecord[] = [];
  for (const [i, pick] of picks.entries()) {
    const task = await propose(ctx, pick, rng.fork(`${step}/${i}`), proposals);
    if (!ctx.archive.has(task.id)) {
      ctx.archive.set(task.id, task);
      newTasks.push(task);
    }
    tasks.push(task);
  }
  // 3. The solver samples G answers per task, decoding constrained to each task's answer kind or type.
  const samples = await policy.sample(tasks.map((t) => ({ text: ctx.render(t), kind: answerKind(t.type), shape: answerShape(t) })), config.group);
  // 4. The sandbox verifies every answer.
  const verdicts = await verifyMany(sandbox, samples.flatMap((group, g) => group.map((s) => ({ task: tasks[g]!, answer: s.text }))));
  const rewards = tasks.map((_, g) => verdicts.slice(g * config.group, (g + 1) * config.group).map((v) => v.reward));
  // 5. Per-task solve rates feed the curriculum (learnability etc. are computed from them there).
  const results: ArmResult[] = tasks.map((t, g) => {
    const r = rewards[g]!;
    return { arm: { family: t.family, level: t.level, type: t.type }, taskId: t.id, step, rewards: r, solveRate: solveRate(r), meanAbsAdvantage: meanAbsAdvantage(r, true) };
  });
  controller.update(results);
  // 6. One GRPO-family update (groups with equal rewards carry no gradient; the policy drops them),
  // on the rewards shaped for training (src/reward.ts; the exact ones when shaping is off).
  const stats = await policy.update(tasks.map((t, g) => samples[g]!.map((s, i) => trainingReward(t, s.text, verdicts[g * config.group + i]!, config.reward))));

  // The proposer's reward: the learnability of each task it wrote, recorded with its prompt.
  for (const p of proposals) {
    const g = tasks.findIndex((t) => t.id === p.taskId);
    if (g >= 0) p.learnability = learnabilityReward(rewards[g]!);
  }
  const flat = rewards.flat();
  return {
    newTasks,
    proposals,
    scored: results.map((r) => ({ taskId: r.taskId, attempts: r.rewards.length, solved: r.rewards.filter((x) => x >= 1).length })),
    episodes: samples.flatMap((group, g) =>
      group.map((s, i) => ({ taskId: tasks[g]!.id, answer: s.text, reward: verdicts[g * config.group + i]!.reward, reason: verdicts[g * config.group + i]!.reason ?? null })),
    ),
    metrics: {
      meanReward: mean(flat),
      solveRate: mean(results.map((r) => r.solveRate)),
      learnability: mean(rewards.map(learnabilityReward)),
      meanLevel: mean(tasks.map((t) => t.level)),
      openArms: ctx.arms.length,
      newTasks: newTasks.length,
      ...stats,
      ...agentMetrics(ctx, proposals, rewards),
    },
  };
}

/** Materialises one pick: a fresh task of its arm (from the LLM proposer for its share, else the generators), an archived task, or a mutation of one. */
async function propose(ctx: StepContext, pick: Pick, rng: Rng, proposals: ProposalRecord[]): Promise<Task> {
  const { sandbox, seen, archive, proposer } = ctx;
  if (pick.kind === 'new' && proposer && rng.next() < proposer.share) {
    const req = {
      ...pick.arm,
      skills: ctx.skills.filter((s) => s.family === pick.arm.family && s.level <= pick.arm.level),
      references: [...archive.values()],
      seed: rng.int(0, 2 ** 31 - 1),
    };
    const out = await proposer.propose(req);
    const m = out.draft ? await materialise(sandbox, out.draft, seen) : undefined;
    proposals.push(toProposalRecord(ctx.step, req, proposer.label, out, m));
    if (m?.ok) return m.task;
    // Rejected or unreachable: the generators step in (the agent has logged why).
  }
  if (pick.kind === 'replay') {
    const task = archive.get(pick.taskId);
    if (task) return task;
  }
  if (pick.kind === 'mutate') {
    const parent = archive.get(pick.taskId);
    if (parent) {
      const res = await materialise(sandbox, mutate(rng, parent), seen);
      if (res.ok) return res.task;
    }
  }
  try {
    return await generateTask(sandbox, { ...pick.arm, rng, seen, attempts: 20 });
  } catch (e) {
    // The arm's space is exhausted (small levels hold few distinct tasks): replay one of its
    // archived tasks; with none archived yet, draw again allowing anything but a held-out probe.
    const own = [...archive.values()].filter((t) => t.family === pick.arm.family && t.level === pick.arm.level && t.type === pick.arm.type);
    if (own.length > 0) return rng.pick(own);
    try {
      return await generateTask(sandbox, { ...pick.arm, rng, seen: new Set(ctx.probeIds) });
    } catch {
      throw e;
    }
  }
}

interface Probe {
  task: Task;
  prompt: string;
}

async function buildProbes(sandbox: Sandbox, arms: Arm[], perArm: number, rng: Rng, seen: Set<string>, render: (t: Task) => string): Promise<Probe[]> {
  const probes: Probe[] = [];
  for (const arm of arms) {
    // Small arms may hold fewer distinct tasks than asked for: take what there is (a draw that finds
    // nothing new ends the arm).
    for (let i = 0; i < perArm; i++) {
      let task: Task;
      try {
        task = await generateTask(sandbox, { ...arm, rng: rng.fork(`${arm.family}/${arm.level}/${arm.type}/${i}`), seen, attempts: 20 });
      } catch {
        break;
      }
      probes.push({ task, prompt: render(task) });
    }
  }
  return probes;
}

/** Greedy decoding on the held-out probes: accuracy overall and per skill. */
async function runProbes(policy: Policy, sandbox: Sandbox, probes: Probe[], skills: Skill[]) {
  const answers = await policy.greedy(probes.map((p) => ({ text: p.prompt, kind: answerKind(p.task.type), shape: answerShape(p.task) })));
  const verdicts = await verifyMany(sandbox, probes.map((p, i) => ({ task: p.task, answer: answers[i]! })));
  const perSkill = new Map<string, number>();
  // A skill is probed at its own level (the held-out tasks of that level that exercise it), so that
  // mastering `logic.and` means solving level-0 conjunctions, not every later task that uses one.
  for (const skill of skills) {
    const scores = (level: (l: number) => boolean) =>
      probes.flatMap((p, i) => (p.task.skills.includes(skill.id) && level(p.task.level) ? [verdicts[i]!.reward >= 1 ? 1 : 0] : []));
    const own = scores((l) => l === skill.level);
    const any = own.length > 0 ? own : scores(() => true);
    if (any.length > 0) perSkill.set(skill.id, mean(any));
  }
  const perArm: Record<string, number[]> = {};
  probes.forEach((p, i) => (perArm[`probe.${p.task.family}/${p.task.level}/${p.task.type}`] ??= []).push(verdicts[i]!.reward >= 1 ? 1 : 0));
  return {
    overall: mean(verdicts.map((v) => (v.reward >= 1 ? 1 : 0))),
    perSkill,
    perArm: Object.fromEntries(Object.entries(perArm).map(([k, xs]) => [k, mean(xs)])),
  };
}

async function checkpoint(store: RunStore, policy: Policy, runId: string, step: number, state: Checkpoint): Promise<void> {
  const id = `step-${String(step).padStart(6, '0')}`;
  const final = join(store.dir, 'checkpoints', id);
  const tmp = `${final}.tmp`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  await policy.save(tmp);
  writeFileSync(join(tmp, 'loop.json'), JSON.stringify(state));
  rmSync(final, { recursive: true, force: true });
  renameSync(tmp, final);
  const at = new Date().toISOString();
  store.addCheckpoint(id, step, final, at);
  store.appendOutbox(step, [{ kind: 'checkpoint', runId, id, step, path: final }]);
}

interface GraphSink {
  name: string;
  graph: SkillGraph;
}

/** The embedded graph always; Neo4j too when configured. Each drains the outbox with its own cursor. */
async function openGraphs(config: RunConfig, store: RunStore, log: (l: string) => void): Promise<GraphSink[]> {
  const sinks: GraphSink[] = [{ name: 'embedded', graph: await openSkillGraph({ kind: 'embedded', db: store.db }) }];
  if (config.graph.kind === 'neo4j') {
    const uri = config.graph.uri ?? process.env.NEO4J_URI;
    if (!uri) throw new Error('graph.kind is neo4j but no URI was given (--neo4j-uri or NEO4J_URI)');
    const graph = await openSkillGraph({
      kind: 'neo4j',
      uri,
      user: config.graph.user ?? process.env.NEO4J_USER ?? 'neo4j',
      password: config.graph.password ?? process.env.NEO4J_PASSWORD ?? '',
      database: config.graph.database ?? process.env.NEO4J_DATABASE,
    });
    sinks.push({ name: 'neo4j', graph });
    log(`skill graph: Neo4j at ${uri}`);
  }
  for (const s of sinks) await s.graph.init();
  return sinks;
}

/** Drains the outbox into every graph; a graph that is down keeps its backlog for later. */
async function flushGraphs(sinks: GraphSink[], store: RunStore, batchSize: number, log: (l: string) => void): Promise<number> {
  let backlog = 0;
  for (const sink of sinks) {
    const res = await drainOutbox(store.outbox(sink.name), sink.graph, { batchSize });
    if (res.error) log(`skill graph ${sink.name} unavailable (${res.error}); ${res.pending} events wait in the outbox`);
    backlog += res.pending;
  }
  return backlog;
}

function runEvent(store: RunStore, status: string): GraphEvent {
  return {
    kind: 'run',
    runId: store.getMeta('runId')!,
    preset: store.getMeta('preset') ?? '',
    config: store.getMeta('config') ?? '{}',
    startedAt: store.getMeta('startedAt') ?? '',
    endedAt: store.getMeta('endedAt') ?? null,
    status,
  };
}

function graphTask(task: Task): GraphTask {
  return { id: task.id, type: task.type, family: task.family, level: task.level, program: task.program, skills: task.skills, hash: task.hash, prompt: renderNatural(task), parent: task.parent, solveRate: null };
}

/** Per-step metrics of the LLM agents: proposals by outcome, tokens, pass@k of an evaluated solver. */
function agentMetrics(ctx: StepContext, proposals: ProposalRecord[], rewards: number[][]): Record<string, number> {
  const out: Record<string, number> = {};
  if (ctx.proposer) {
    out.proposals = proposals.length;
    for (const p of proposals) out[`proposals.${p.outcome}`] = (out[`proposals.${p.outcome}`] ?? 0) + 1;
    out['proposer.tokens'] = proposals.reduce((a, p) => a + p.inputTokens + p.outputTokens, 0);
  }
  if (ctx.llmSolver) {
    out.passAt1 = passAtK(rewards, 1);
    out[`passAt${ctx.config.group}`] = passAtK(rewards, ctx.config.group);
    const calls = ctx.llmSolver.takeCalls();
    out['solver.calls'] = calls.length;
    out['solver.tokens'] = calls.reduce((a, c) => a + c.tokens.input + c.tokens.output, 0);
    out['solver.failedCalls'] = calls.filter((c) => c.error).length;
  }
  return out;
}

const seenKey = (t: Task): string => t.id;
const mean = (xs: number[]): number => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

function newRunId(config: RunConfig): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
  return `${stamp}-${config.name}-s${config.seed}`;
}

