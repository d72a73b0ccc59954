// The parts of a run that the built-in loop (src/run/loop.ts) and a served run (src/server/) share:
// the task space of a config, how a curriculum pick becomes a task, and the skill-graph sinks fed
// from the outbox. The held-out probes are in src/run/probes.ts.
import { armKey, isTaskArm, type Arm, type Controller, type TaskArm, type Pick } from '../../curricula/index.js';
import {
  crossover,
  CROSSOVER,
  directedApplies,
  directedMutate,
  directedOps,
  directionOf,
  labelProgram,
  materialise,
  mutate,
  type DirectedOp,
} from '../../generators/index.js';
import { madeOnlyOf } from '../../core/rules.js';
import { drainOutbox, openSkillGraph } from '../../graphs/index.js';
import type { SkillGraph } from '../../graphs/index.js';
import { createSandbox } from '../../sandbox/index.js';
import type { Sandbox } from '../../sandbox/index.js';
import type { RunConfig } from './config.js';
import type { Rng } from '../../core/rng.js';
import type { ProposalRecord, ProposalRequest, ProposerAgent } from '../agents/index.js';
import type { RunStore } from './records/store.js';
import type { CodeTask, Skill, Task, TaskDraft } from '../../core/task.js';
import { LEARNED_PROPOSER, LearnedProposer, SELF_PLAY_PROPOSER, type LearnStats } from '../../proposers/index.js';
import { referenceTask, type SelfPlay } from './self-play-parts.js';
import { childRecord, draftRecord } from './records/rows.js';
import type { TaskArchive } from './task-archive.js';
import { availableFamilies, drawTask, isBridgedArm, spaceFamily, spaceSkills } from './verification.js';

/** The task space of a config (docs/levels.md). */
export interface TaskSpace {
  /** The arms (family, level, type) the controllers pick among. */
  arms: TaskArm[];
  skills: Skill[];
  /** The skills an arm exercises: its family's, up to its level. */
  armSkills: (arm: Arm) => string[];
  /** Families whose levels go on past their listed arms, with the highest level each may reach (the level-frontier controller's). */
  ceilings: Map<string, number>;
  /** Each family's tabled levels (0 … n − 1): levels above have held-out evaluation sets instead of mastery probes. */
  tabled: Map<string, number>;
}

/**
 * The task space of a config. A family's arms are the config's types it makes (code families:
 * deduction, abduction, induction; problem families: problem) at levels 0 … maxLevel, as far as the
 * family goes; with maxLevel open (null), at its tabled levels, and the levels above them up to
 * its last are its ceiling.
 */
export function taskSpace(config: RunConfig): TaskSpace {
  // Bridged families (rg.<dataset>) whose bridge is not set up are left out with one line.
  const families = availableFamilies(config.families);
  const fams = families.map((id) => spaceFamily(id));
  const ceilings = new Map<string, number>();
  const arms: TaskArm[] = fams.flatMap((f) => {
    const last = f.lastLevel ?? Infinity;
    const top = Math.min(config.maxLevel ?? f.levels - 1, last);
    const ceiling = Math.min(config.maxLevel ?? Infinity, last);
    if (ceiling > top) ceilings.set(f.id, ceiling);
    return Array.from({ length: top + 1 }, (_, level) =>
      config.types.filter((type) => f.types.includes(type)).map((type) => ({ family: f.id, level, type })),
    ).flat();
  });
  const skills = spaceSkills(families);
  const armSkills = (arm: Arm): string[] =>
    skills.filter((s) => s.family === arm.family && s.level <= arm.level).map((s) => s.id);
  return { arms, skills, armSkills, ceilings, tabled: new Map(fams.map((f) => [f.id, f.levels])) };
}

/** The arms at their family's tabled levels (where the mastery probes are). */
export const tabledArms = (space: TaskSpace): TaskArm[] =>
  space.arms.filter((a) => a.level < (space.tabled.get(a.family) ?? Infinity));

/** The task types a family has arms of in the space. */
export const typesOf = (space: TaskSpace, family: string): TaskArm['type'][] => [
  ...new Set(space.arms.filter((a) => a.family === family).map((a) => a.type)),
];

/**
 * The space's ceilings of the families whose highest listed level is open now (gating: the levels
 * above exercise the same skills, so they open with it).
 */
export function openCeilings(space: TaskSpace, open: readonly Arm[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const [family, ceiling] of space.ceilings) {
    const top = Math.max(...space.arms.filter((a) => a.family === family).map((a) => a.level));
    if (open.some((a) => a.family === family && a.level === top)) out.set(family, ceiling);
  }
  return out;
}

/** The level-frontier controller's h per family × type, as step metrics (`frontier.<family>/<type>`); none for other controllers. */
export function frontierMetrics(controller: Controller): Record<string, number> {
  return Object.fromEntries(Object.entries(controller.frontier?.() ?? {}).map(([k, h]) => [`frontier.${k}`, h]));
}

/** The sandbox a run's config asks for: its workers, limits and answer budgets. */
export function sandboxOf(config: RunConfig): Promise<Sandbox> {
  return createSandbox({
    workers: config.sandbox.workers,
    limits: { timeoutMs: config.sandbox.timeoutMs, memoryBytes: config.sandbox.memoryBytes },
    budget: config.sandbox.budget,
  });
}

/** What materialising a pick needs. */
export interface ProposeContext {
  step: number;
  sandbox: Sandbox;
  /** Ids of every task drawn so far (probes included), so that no fresh task duplicates one. */
  seen: Set<string>;
  archive: TaskArchive;
  probeIds: ReadonlySet<string>;
  proposer: ProposerAgent | null;
  skills: Skill[];
  /** The learned grammar proposer, when the config turns it on: it draws the fresh tasks the generators would. */
  learned?: LearnedProposer | null;
  /** Self-play (experimental): the solver's own network writes the fresh tasks the generators would. */
  selfPlay?: SelfPlay | null;
  /**
   * Whether a frontier child may be admitted at a level: the run has (or makes now, its ids joining
   * `seen`) that level's held-out set. Absent (a served run), only at its parent's level or below.
   */
  heldOut?: (family: string, level: number) => Promise<boolean>;
  /** The solver's solve rate of a task so far, shown to an LLM proposer beside its references. */
  rateOf?: (taskId: string) => number | undefined;
}

/** The learned grammar proposer of a config, or null when it is off (the default). */
export function learnedProposerOf(config: RunConfig): LearnedProposer | null {
  const cfg = config.proposer?.learned;
  return cfg?.enabled ? new LearnedProposer(cfg) : null;
}

/** The learned proposer's round as step metrics (its mean reward, novelty, validity, learnable share). */
export function learnedMetrics(stats: LearnStats | null): Record<string, number> {
  if (!stats) return { 'proposer.drafts': 0 };
  return {
    'proposer.drafts': stats.drafts,
    'proposer.refused': stats.refused,
    'proposer.reward': stats.reward,
    'proposer.novelty': stats.novelty,
    'proposer.validity': stats.validity,
    'proposer.learnable': stats.learnable,
  };
}

/** Materialises one pick: a fresh task of its arm (from the LLM proposer for its share, else the generators), an archived task, or a mutation of one. */
export async function propose(ctx: ProposeContext, pick: Pick, rng: Rng, proposals: ProposalRecord[]): Promise<Task> {
  const { sandbox, seen, archive, proposer } = ctx;
  const arm = pick.arm;
  const avoid = pick.kind === 'new' && pick.avoid ? new Set(pick.avoid) : undefined;
  if (!isTaskArm(arm))
    throw new Error(`propose: ${armKey(arm)} is an environment arm; src/run/env-arms.ts makes those`);
  if (pick.kind === 'new' && proposer && rng.next() < proposer.share) {
    const req = {
      ...arm,
      skills: ctx.skills.filter((s) => s.family === arm.family && s.level <= arm.level),
      references: [...archive.values()],
      seed: rng.int(0, 2 ** 31 - 1),
      ...(ctx.rateOf ? { rateOf: ctx.rateOf } : {}),
    };
    const out = await proposer.propose(req);
    const m = out.draft ? await materialise(sandbox, out.draft, seen) : undefined;
    // Loaded here, where an LLM proposer already runs: a served run shares this file and never loads LangChain.
    const { toProposalRecord } = await import('../agents/index.js');
    proposals.push(toProposalRecord(ctx.step, req, proposer.label, out, m));
    if (m?.ok) return m.task;
    // Rejected or unreachable: the generators step in (the agent has logged why).
  }
  if (pick.kind === 'replay') {
    const task = archive.get(pick.taskId);
    if (task) return task;
  }
  if (pick.kind === 'mutate' && pick.op !== undefined) {
    const child = await proposeChild(ctx, pick, rng, proposals);
    if (child) return child;
  } else if (pick.kind === 'mutate') {
    const parent = archive.get(pick.taskId);
    if (parent) {
      const res = await materialise(sandbox, mutate(rng, parent), seen);
      if (res.ok) return res.task;
    }
  }
  try {
    if (ctx.selfPlay && !isBridgedArm(arm)) {
      const { proposer: sp, model } = ctx.selfPlay;
      return await sp.generate(sandbox, arm, rng, seen, 20, model, referenceTask(archive, arm), (d) =>
        proposals.push(draftRecord(ctx.step, SELF_PLAY_PROPOSER, d)),
      );
    }
    if (ctx.learned && !isBridgedArm(arm))
      return await ctx.learned.generate(sandbox, arm, rng, seen, 20, (d) =>
        proposals.push(draftRecord(ctx.step, LEARNED_PROPOSER, d)),
      );
    return await drawTask(sandbox, { ...arm, rng, seen, attempts: 20, ...(avoid ? { avoid } : {}) });
  } catch (e) {
    // The arm's space is exhausted (small levels hold few distinct tasks): replay one of its
    // archived tasks (one not made only of skills to avoid, where there is one); with none archived
    // yet, draw again allowing anything but a held-out probe.
    const own = archive.ofArm(arm);
    const wanted = own.filter((t) => !madeOnlyOf(t.skills, avoid));
    if (own.length > 0) return rng.pick(wanted.length > 0 ? wanted : own);
    try {
      return await drawTask(sandbox, { ...arm, rng, seen: new Set(ctx.probeIds) });
    } catch {
      throw e;
    }
  }
}

/** Operators a pick tries, the one it names first, before it falls back to a fresh task. */
const CHILD_TRIES = 3;

/**
 * The frontier proposer's child of a pick (curricula/evolve.ts): the operator it names, then others
 * of the same direction where that one makes no child the run can use, or crossover with its mate.
 * A child may be one level above its parent, no more, and only at a level whose held-out set the
 * run has (made before the child is admitted). Every draft is a proposals row. null sends the pick
 * to a fresh task of its arm.
 */
async function proposeChild(
  ctx: ProposeContext,
  pick: Extract<Pick, { kind: 'mutate' }>,
  rng: Rng,
  proposals: ProposalRecord[],
): Promise<Task | null> {
  const parent = ctx.archive.get(pick.taskId);
  const mate = pick.mate === undefined ? undefined : ctx.archive.get(pick.mate);
  if (!parent || parent.type === 'problem' || mate?.type === 'problem') return null;
  if (ctx.proposer && !mate && rng.next() < ctx.proposer.share) {
    const variant = await llmVariant(ctx, parent, pick.op!, rng, proposals);
    if (variant) return variant;
  }
  const ops = mate ? [CROSSOVER] : childOps(parent, pick.op!, rng);
  for (const op of ops.slice(0, CHILD_TRIES)) {
    let draft: TaskDraft;
    try {
      draft = mate ? crossover(rng, parent, mate) : directedMutate(rng, parent, op as DirectedOp);
    } catch (e) {
      proposals.push(childRecord(ctx.step, parent, { op, mate: pick.mate }, null, 'refused', (e as Error).message));
      continue;
    }
    const why = await childLevelRefused(ctx, parent, draft);
    if (why) {
      proposals.push(childRecord(ctx.step, parent, pick, draft, 'refused', why));
      continue;
    }
    const res = await materialise(ctx.sandbox, draft, ctx.seen);
    const [outcome, detail, id] = res.ok ? ['accepted', null, res.task.id] : [res.reason, res.detail, null];
    proposals.push(childRecord(ctx.step, parent, pick, draft, outcome, detail, id));
    if (res.ok) return res.task;
  }
  return null;
}

/**
 * The LLM proposer's variant of a frontier parent, for its share of the frontier's picks: asked one
 * step harder or easier (the direction of the operator the pick names), shown the parent first and
 * every reference with its solve rate. Labelled by its own program where label.ts reads it, and
 * held to a child's levels.
 */
async function llmVariant(
  ctx: ProposeContext,
  parent: CodeTask,
  op: string,
  rng: Rng,
  proposals: ProposalRecord[],
): Promise<Task | null> {
  const proposer = ctx.proposer!;
  const direction = directionOf(op) ?? 'either';
  const req: ProposalRequest = {
    family: parent.family,
    level: parent.level,
    type: parent.type,
    skills: ctx.skills.filter((s) => s.family === parent.family && s.level <= parent.level + 1),
    references: [...ctx.archive.values()],
    seed: rng.int(0, 2 ** 31 - 1),
    ...(ctx.rateOf ? { rateOf: ctx.rateOf } : {}),
    variant: { parent, direction },
  };
  const out = await proposer.propose(req);
  const { toProposalRecord } = await import('../agents/index.js');
  if (!out.draft || out.draft.type === 'problem') {
    proposals.push(toProposalRecord(ctx.step, req, proposer.label, out));
    return null;
  }
  const label = labelProgram(parent.family, out.draft.program, out.draft.inputs);
  const draft: TaskDraft = {
    ...out.draft,
    ...(label.level === null ? {} : { level: label.level, skills: label.skills }),
    parent: { id: parent.id, op: `llm-${direction}` },
  };
  const why = await childLevelRefused(ctx, parent, draft);
  const m = why
    ? ({ ok: false, reason: 'refused', detail: why } as const)
    : await materialise(ctx.sandbox, draft, ctx.seen);
  proposals.push(toProposalRecord(ctx.step, req, proposer.label, { ...out, draft }, m));
  return m.ok ? m.task : null;
}

/** Why a child's level is refused: more than one above its parent's, or a level without a held-out set. */
async function childLevelRefused(ctx: ProposeContext, parent: Task, draft: TaskDraft): Promise<string | null> {
  if (draft.level > parent.level + 1) return `level ${draft.level} is more than one above its parent's`;
  const ok = ctx.heldOut ? await ctx.heldOut(draft.family, draft.level) : draft.level <= parent.level;
  return ok ? null : `level ${draft.level} of ${draft.family} has no held-out set in this run`;
}

/** The operator asked for where it applies, then the others of its direction that apply, in a random order. */
function childOps(parent: CodeTask, op: string, rng: Rng): DirectedOp[] {
  const direction = directionOf(op);
  if (!direction) return [];
  const others = directedOps(parent, direction).filter((o) => o !== op);
  // Fisher–Yates on the pick's own stream, so that a resumed run tries the same order.
  for (let i = others.length - 1; i > 0; i--) {
    const j = rng.int(0, i);
    [others[i], others[j]] = [others[j]!, others[i]!];
  }
  return directedApplies(parent, op as DirectedOp) ? [op as DirectedOp, ...others] : others;
}

export interface GraphSink {
  name: string;
  graph: SkillGraph;
}

/** The embedded graph always; Neo4j too when configured. Each drains the outbox with its own cursor. */
export async function openGraphs(
  config: RunConfig,
  store: { db: RunStore['db'] },
  log: (l: string) => void,
): Promise<GraphSink[]> {
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
export async function flushGraphs(
  sinks: GraphSink[],
  store: RunStore,
  batchSize: number,
  log: (l: string) => void,
): Promise<number> {
  let backlog = 0;
  for (const sink of sinks) {
    const res = await drainOutbox(store.outbox(sink.name), sink.graph, { batchSize });
    if (res.error) log(`skill graph ${sink.name} unavailable (${res.error}); ${res.pending} events wait in the outbox`);
    backlog += res.pending;
  }
  return backlog;
}
