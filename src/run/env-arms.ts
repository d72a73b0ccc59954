// Environment arms in an autonomous run (docs/DESIGN.md, "Environments"): where the environments
// (envs/), the curriculum's arms and the built-in solver meet for `cogen run`. loop.ts calls these
// at the points of a step where it handles tasks: the space (arms and skills), the held-out probes,
// playing the picked arms, and scoring the probes. An environment arm is (family, level, kind); its
// skill is `env.<kind>`.
import type { Rng } from '../../core/rng.js';
import { isSolved, solveRate } from '../../core/rules.js';
import type { Skill } from '../../core/task.js';
import {
  armKey,
  meanAbsAdvantage,
  minProbes,
  masterable,
  type Arm,
  type ArmResult,
  type MasteryOptions,
  type Pick,
  type SkillProbe,
} from '../../curricula/index.js';
import {
  CONSTANT_SUBMISSIONS,
  constantSolves,
  Env,
  envSkills,
  envSourceType,
  generateEnv,
  playEpisode,
  randomPolicy,
  type EnvKind,
  type EnvSpec,
  type Trajectory,
} from '../../envs/index.js';
import type { ProbeSets } from '../../graphs/index.js';
import type { Sandbox } from '../../sandbox/index.js';
import type { RunConfig } from './config.js';
import { playSolver, type SolverEpisode } from './env-training.js';
import { mean } from '../../core/stats.js';
import type { TrainablePolicy } from '../solver/index.js';
import { spaceFamily } from './verification.js';

export interface EnvArm extends Arm {
  type: EnvKind;
}

/** The environment arms and skills of a config: each family that makes the kind's source task type, at each level. */
export function envSpace(config: RunConfig, present: readonly Skill[]): { arms: EnvArm[]; skills: Skill[] } {
  const kinds = config.environments;
  if (kinds.length === 0) return { arms: [], skills: [] };
  const arms = config.families.flatMap((id) => {
    const f = spaceFamily(id);
    // (environments are made at the tabled levels: an open maxLevel lists those)
    const levels = Math.min(config.maxLevel ?? f.levels - 1, f.levels - 1) + 1;
    return kinds
      .filter((k) => f.types.includes(envSourceType(k)))
      .flatMap((type) => Array.from({ length: levels }, (_, level): EnvArm => ({ family: id, level, type })));
  });
  return { arms, skills: envSkills(kinds, new Set(present.map((s) => s.id))) };
}

/** The skill an environment arm exercises. */
export const envArmSkill = (arm: Arm): string => `env.${arm.type}`;

/** A held-out environment, with whether the random valid-action policy solved it, and each constant submission (the trivial baseline's parts). */
export interface EnvProbe {
  arm: EnvArm;
  spec: EnvSpec;
  random: number;
  /** constant[k]: whether envs' k-th constant submission solved it */
  constant: number[];
}

/**
 * The trivial baseline of a set of held-out environments: the better of the random valid-action
 * policy and the best constant submission (one k for the whole set, as a policy that ignores what it
 * is shown would be).
 */
export function envBaseline(set: readonly EnvProbe[]): number {
  if (set.length === 0) return 0;
  const constants = Array.from({ length: CONSTANT_SUBMISSIONS }, (_, k) => mean(set.map((p) => p.constant[k] ?? 0)));
  return Math.max(mean(set.map((p) => p.random)), ...constants);
}

/**
 * The held-out environments: per kind, at least minProbes in all (so that its skill can show
 * mastery) and perArm per arm. Their source tasks join `seen`, so that no training task is one of
 * them. An arm that makes no environment (a family whose programs no bug operator applies to, for
 * repair) is left out of the run, with one line.
 */
export async function buildEnvProbes(
  sandbox: Sandbox,
  arms: readonly EnvArm[],
  o: { perArm: number; mastery: MasteryOptions; log: (line: string) => void },
  rng: Rng,
  seen: Set<string>,
): Promise<{ probes: EnvProbe[]; arms: EnvArm[] }> {
  const envSeen = new Set<string>();
  const draw = async (arm: EnvArm, i: number): Promise<EnvProbe> => {
    const spec = await generateEnv(sandbox, {
      kind: arm.type,
      family: arm.family,
      level: arm.level,
      rng: rng.fork(`${armKey(arm)}/${i}`),
      seen: envSeen,
      tasksSeen: seen,
    });
    const traj = await playEpisode(new Env(spec, sandbox), randomPolicy(spec, rng.fork(`random/${spec.id}`)), 0);
    return { arm, spec, random: isSolved(traj.reward) ? 1 : 0, constant: await constantSolves(sandbox, spec) };
  };
  // Each arm is filled to its kind's quota, which counts the arms still in; an arm that cannot fill
  // its quota is left out (its probes with it) and the quotas are counted again.
  const made = new Map<EnvArm, EnvProbe[]>(arms.map((a) => [a, []]));
  let kept = [...arms];
  for (let changed = true; changed;) {
    changed = false;
    for (const arm of kept) {
      const n = Math.max(o.perArm, Math.ceil(minProbes(o.mastery) / kept.filter((a) => a.type === arm.type).length));
      const have = made.get(arm)!;
      try {
        while (have.length < n) have.push(await draw(arm, have.length));
      } catch (e) {
        o.log(`environment arm ${armKey(arm)} left out: ${(e as Error).message}`);
        kept = kept.filter((a) => a !== arm);
        changed = true;
        break;
      }
    }
  }
  const probes = kept.flatMap((a) => made.get(a)!);
  return { probes, arms: kept };
}

/** Each environment skill's probe set, as probeSets gives the task skills': size, trivial baseline, whether it can show mastery. */
export function envProbeSets(
  probes: readonly EnvProbe[],
  skills: readonly Skill[],
  opts: MasteryOptions,
): ProbeSets['skills'] {
  const out: ProbeSets['skills'] = {};
  for (const s of skills) {
    const set = probes.filter((p) => envArmSkill(p.arm) === s.id);
    const baseline = envBaseline(set);
    out[s.id] = { probes: set.length, baseline, masterable: masterable({ baseline, probes: set.length }, opts) };
  }
  return out;
}

/** Greedy episodes on the held-out environments: success per environment skill (beside its trivial baseline, envBaseline) and per arm. */
export async function scoreEnvProbes(
  policy: TrainablePolicy,
  sandbox: Sandbox,
  probes: readonly EnvProbe[],
): Promise<{ solved: number[]; perSkill: Map<string, SkillProbe>; perArm: Record<string, number> }> {
  const eps = (
    await playSolver(
      policy,
      sandbox,
      probes.map((p) => p.spec),
      1,
      { greedy: true },
    )
  ).map((g) => g[0]!);
  const solved = eps.map((e) => (isSolved(e.reward) ? 1 : 0));
  const perSkill = new Map<string, SkillProbe>();
  const perArm: Record<string, number[]> = {};
  const bySkill = new Map<string, number[]>();
  probes.forEach((p, i) => {
    const s = envArmSkill(p.arm);
    (bySkill.get(s) ?? bySkill.set(s, []).get(s)!).push(i);
    (perArm[`probe.${armKey(p.arm)}`] ??= []).push(solved[i]!);
  });
  for (const [s, at] of bySkill)
    perSkill.set(s, {
      accuracy: mean(at.map((i) => solved[i]!)),
      baseline: envBaseline(at.map((i) => probes[i]!)),
      probes: at.length,
    });
  return { solved, perSkill, perArm: Object.fromEntries(Object.entries(perArm).map(([k, xs]) => [k, mean(xs)])) };
}

/** A run's played environments: the specs by id, and their ids (a fresh one must be new). */
export interface EnvArchive {
  specs: Map<string, EnvSpec>;
  /** Task ids no environment's source task may be: the held-out probes', tasks' and environments'. */
  held: ReadonlySet<string>;
}

export interface PlayedEnvs {
  /** The episodes, one group per picked environment (what the update trains on). */
  groups: SolverEpisode[][];
  results: ArmResult[];
  /** What the store records: every episode with the spec it played. */
  records: { spec: EnvSpec; trajectory: Trajectory }[];
}

/**
 * Materialises each environment pick (a replay plays an archived environment again; a fresh or
 * mutation pick makes a new one, or, when the arm makes no new one, replays one of its own) and
 * plays `group` sampled episodes of each together. `rngs[i]` is pick i's own stream. `policy`: the
 * built-in solver, which alone plays environments (null when a chat model solves: no picks then).
 */
export async function playEnvPicks(
  policy: TrainablePolicy | null,
  sandbox: Sandbox,
  picks: readonly Pick[],
  rngs: readonly Rng[],
  archive: EnvArchive,
  group: number,
  step: number,
): Promise<PlayedEnvs> {
  if (picks.length === 0) return { groups: [], results: [], records: [] };
  if (!policy) throw new Error('environment arms are played by the built-in solver, not a chat model');
  const specs: EnvSpec[] = [];
  for (const [i, pick] of picks.entries()) {
    const arm = pick.arm as EnvArm;
    const rng = rngs[i]!;
    const replayed = pick.kind === 'replay' ? archive.specs.get(pick.taskId) : undefined;
    if (replayed) {
      specs.push(replayed);
      continue;
    }
    try {
      const seen = new Set(archive.specs.keys());
      const spec = await generateEnv(sandbox, {
        kind: arm.type,
        family: arm.family,
        level: arm.level,
        rng,
        seen,
        tasksSeen: new Set(archive.held),
        attempts: 20,
      });
      archive.specs.set(spec.id, spec);
      specs.push(spec);
    } catch (e) {
      const own = [...archive.specs.values()].filter(
        (s) => s.kind === arm.type && s.family === arm.family && s.level === arm.level,
      );
      if (own.length === 0) throw e;
      specs.push(rng.pick(own));
    }
  }
  const groups = await playSolver(policy, sandbox, specs, group, { greedy: false, seed: rngs[0]!.int(0, 999) });
  const results = groups.map((g, i): ArmResult => {
    const rewards = g.map((e) => e.reward);
    return {
      arm: picks[i]!.arm,
      taskId: specs[i]!.id,
      step,
      rewards,
      solveRate: solveRate(rewards),
      meanAbsAdvantage: meanAbsAdvantage(rewards, true),
    };
  });
  const records = groups.flatMap((g, i) => g.map((e) => ({ spec: specs[i]!, trajectory: e.trajectory })));
  return { groups, results, records };
}
