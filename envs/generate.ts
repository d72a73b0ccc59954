// Making environments: a validated single-turn task of the family and level becomes a spec, which is
// kept only if the scripted reference policy reaches reward 1 through the environment's own API
// within the budget (the path an agent takes), and if it is new (canonical hash + kind + question).
import { createHash } from 'node:crypto';
import type { Rng } from '../core/rng.js';
import type { Skill } from '../core/task.js';
import { valueType } from '../core/task.js';
import { generateTask } from '../generators/index.js';
import { sandboxBudget, taskBudget, type Sandbox } from '../sandbox/index.js';
import { Env, kindOf } from './env.js';
import { KINDS } from './kinds/index.js';
import type { SpecBase } from './kinds/common.js';
import { playEpisode, referencePolicy } from './policies.js';
import { ENV_KINDS, type EnvKind, type EnvSpec } from './types.js';

const sha = (s: string): string => createHash('sha256').update(s).digest('hex').slice(0, 16);

/** The environment id: kind, the hidden program's canonical hash and the question. */
export const envId = (kind: EnvKind, hash: string, question: string): string =>
  sha(`env\u0000${kind}\u0000${hash}\u0000${question}`);

export interface GenerateEnvOptions {
  kind: EnvKind;
  family: string;
  level: number;
  rng: Rng;
  /** Ids already made (updated on success): a duplicate is drawn again. */
  seen?: Set<string>;
  /** Source tasks to try before giving up (default 30). */
  attempts?: number;
  /**
   * Task ids a source task must not be (a run's held-out probes); the source tasks drawn are added
   * to it (generators/index.ts generateTask's `seen`).
   */
  tasksSeen?: Set<string>;
}

export type ValidatedEnv = { ok: true; spec: EnvSpec } | { ok: false; reason: string };

/** Plays the reference policy: a spec is valid when it reaches reward 1 within the budget. */
export async function validateEnv(sandbox: Sandbox, spec: EnvSpec): Promise<ValidatedEnv> {
  const traj = await playEpisode(new Env(spec, sandbox), referencePolicy(spec), 0);
  if (traj.reward === 1 && traj.done) return { ok: true, spec };
  return {
    ok: false,
    reason: `the reference policy got reward ${traj.reward} (${traj.reason ?? 'episode not finished'})`,
  };
}

/** Draws source tasks until one makes a valid, new environment. Same rng state (and seen) → same spec. */
export async function generateEnv(sandbox: Sandbox, opts: GenerateEnvOptions): Promise<EnvSpec> {
  if (!ENV_KINDS.includes(opts.kind))
    throw new Error(`unknown environment kind '${String(opts.kind)}'; known kinds: ${ENV_KINDS.join(', ')}`);
  const impl = KINDS[opts.kind] as unknown as ReturnType<typeof kindOf>;
  const attempts = opts.attempts ?? 30;
  const reasons = new Map<string, number>();
  let last = '';
  const settings = sandboxBudget(sandbox);
  for (let i = 0; i < attempts; i++) {
    const task = await generateTask(sandbox, {
      family: opts.family,
      level: opts.level,
      type: impl.source,
      rng: opts.rng,
      ...(opts.tasksSeen ? { seen: opts.tasksSeen } : {}),
    });
    const firstInput = task.type === 'induction' ? task.visible[0]!.input : task.type === 'abduction' ? task.input : [];
    const base: SpecBase = {
      id: '',
      family: task.family,
      level: task.level,
      skills: [`env.${opts.kind}`, ...task.skills],
      program: task.program,
      hash: task.hash,
      argTypes: firstInput.map(valueType),
      stepBudget: taskBudget(task, settings),
      budgets: impl.budgets(opts.level),
    };
    const built = await impl.build(sandbox, task, base, opts.rng);
    let why: string;
    if (typeof built === 'string') why = built;
    else {
      const spec = { ...built.spec, id: envId(opts.kind, task.hash, built.question) } as EnvSpec;
      if (opts.seen?.has(spec.id)) why = 'duplicate';
      else {
        const v = await validateEnv(sandbox, spec);
        if (v.ok) {
          opts.seen?.add(spec.id);
          return spec;
        }
        why = v.reason;
      }
    }
    const key = why.split(/[:(]/)[0]!.trim();
    reasons.set(key, (reasons.get(key) ?? 0) + 1);
    last = why;
  }
  const summary = [...reasons].map(([k, n]) => `${k} ×${n}`).join(', ');
  throw new Error(
    `generateEnv: no ${opts.kind} environment for family '${opts.family}' at level ${opts.level} after ${attempts} tasks (${summary}; last: ${last})`,
  );
}

/**
 * The environment skills, with prerequisites on the code skills they build on: probing a function
 * means writing one (induction over arithmetic and strings), search means reading one and inverting
 * it, repair means reading comparisons and arithmetic closely enough to see a wrong one.
 */
export const ENV_SKILLS: readonly Skill[] = Object.freeze([
  {
    id: 'env.probe',
    family: 'env',
    name: 'probe a hidden function',
    description: 'call a hidden f with chosen arguments, then write a program that behaves the same',
    requires: ['arith.add', 'str.length'],
    level: 0,
  },
  {
    id: 'env.repair',
    family: 'env',
    name: 'repair a planted bug',
    description: 'run candidate fixes of a buggy program against tests, then submit the repaired program',
    requires: ['arith.add', 'logic.compare'],
    level: 0,
  },
  {
    id: 'env.search',
    family: 'env',
    name: 'search for an input',
    description: 'call f to find an argument list that gives a target output',
    requires: ['arith.add'],
    level: 0,
  },
]);

/** The task type an environment kind is made from (a family that makes it can make the kind). */
export const envSourceType = (kind: EnvKind): 'induction' | 'abduction' => KINDS[kind].source;

/** The environment skills of `kinds`, their prerequisites cut to the skills a run has (`present`). */
export function envSkills(kinds: readonly EnvKind[], present: ReadonlySet<string>): Skill[] {
  return ENV_SKILLS.filter((s) => kinds.some((k) => s.id === `env.${k}`)).map((s) => ({
    ...s,
    requires: s.requires.filter((r) => present.has(r)),
  }));
}
