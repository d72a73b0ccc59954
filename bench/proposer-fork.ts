// The forked measure of bench:proposer (bench/results/proposer.md). A run's own learnable share
// mixes the proposer with where that run's solver went: a solver that learns its tasks takes them
// out of the band, and two runs of one seed part ways after the first update. Here, at checkpoints
// of a learned run, the learned proposer (its state at that step) and the fixed generators each
// draw fresh tasks for every arm, and the run's own solver at that step answers both sets (G
// samples each): the share of each set in the band 0 < p < 1 against the same solver, arms and
// step.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { armKey } from '../curricula/index.js';
import { createRng } from '../core/rng.js';
import { solvedCount } from '../core/rules.js';
import { answerKind, answerShape, type Task } from '../core/task.js';
import { renderCompact } from '../generators/index.js';
import type { RunConfig } from '../src/run/config.js';
import { learnedProposerOf, sandboxOf, taskSpace } from '../src/run/testing.js';
import { createPolicy, type Policy, type PolicyPrompt } from '../src/solver/index.js';
import type { Sandbox } from '../sandbox/index.js';
import { drawTask, verifyTasks } from '../src/run/testing.js';

/** Per arm and overall (the mean over arms, each drawn equally): the learnable shares of both proposers' fresh tasks at one checkpoint. */
export interface ForkPoint {
  step: number;
  learned: number;
  fixed: number;
  byArm: Record<
    string,
    { learned: number; fixed: number; learnedNone: number; fixedNone: number; learnedAll: number; fixedAll: number }
  >;
}

/** Tasks sampled in one call (the run's own batch is 16; this keeps the sampler's memory near it). */
const CHUNK = 32;

export async function forkedShares(
  dir: string,
  config: RunConfig,
  opts: { perArm: number; every: number },
): Promise<ForkPoint[]> {
  const steps = checkpointSteps(dir, opts.every);
  const { arms } = taskSpace(config);
  const sandbox = await sandboxOf(config);
  const policy = await createPolicy(config.solver, { seed: config.seed, totalSteps: config.steps });
  const points: ForkPoint[] = [];
  try {
    for (const step of steps) {
      const ck = join(dir, 'checkpoints', `step-${String(step).padStart(6, '0')}`);
      await policy.load(ck);
      const learned = learnedProposerOf(config);
      if (!learned)
        throw new Error("forkedShares: the run's config has no learned proposer (proposer.learned.enabled)");
      learned.restore((JSON.parse(readFileSync(join(ck, 'loop.json'), 'utf8')) as { proposer: unknown }).proposer);
      const drawn: { arm: string; who: 'learned' | 'fixed'; task: Task }[] = [];
      for (const arm of arms) {
        const key = armKey(arm);
        const seen = new Set<string>();
        for (let i = 0; i < opts.perArm; i++) {
          // A draw that exhausts its attempts (a small level) is left out of both counts.
          const l = await learned
            .generate(sandbox, arm, createRng(`fork/${config.seed}/${step}/${key}/learned/${i}`), seen, 20)
            .catch(() => null);
          const f = await drawTask(sandbox, {
            ...arm,
            rng: createRng(`fork/${config.seed}/${step}/${key}/fixed/${i}`),
            seen,
            attempts: 20,
          }).catch(() => null);
          if (l) drawn.push({ arm: key, who: 'learned', task: l });
          if (f) drawn.push({ arm: key, who: 'fixed', task: f });
        }
      }
      const solved = await solvedCounts(
        policy,
        sandbox,
        drawn.map(({ task: t }) => ({
          task: t,
          prompt: { text: renderCompact(t), kind: answerKind(t.type), shape: answerShape(t) },
        })),
        config.group,
      );
      const byArm: ForkPoint['byArm'] = {};
      for (const arm of arms.map(armKey)) {
        const share = (who: string, pred: (s: number) => boolean) => {
          const xs = drawn.flatMap((d, i) => (d.arm === arm && d.who === who ? [solved[i]!] : []));
          return xs.length ? xs.filter(pred).length / xs.length : NaN;
        };
        const band = (s: number) => s > 0 && s < config.group;
        byArm[arm] = {
          learned: share('learned', band),
          fixed: share('fixed', band),
          learnedNone: share('learned', (s) => s === 0),
          fixedNone: share('fixed', (s) => s === 0),
          learnedAll: share('learned', (s) => s === config.group),
          fixedAll: share('fixed', (s) => s === config.group),
        };
      }
      const over = (who: 'learned' | 'fixed') =>
        meanOf(
          Object.values(byArm)
            .map((a) => a[who])
            .filter(Number.isFinite),
        );
      points.push({ step, learned: over('learned'), fixed: over('fixed'), byArm });
    }
  } finally {
    policy.dispose();
    await sandbox.close();
  }
  return points;
}

/** The steps of a run's finished checkpoints that are multiples of `every`, in order. */
export const checkpointSteps = (dir: string, every: number): number[] =>
  readdirSync(join(dir, 'checkpoints'))
    .map((d) => /^step-(\d+)$/.exec(d))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .filter((s) => s % every === 0)
    .sort((a, b) => a - b);

/** Each task's solved count over `group` answers sampled from its prompt, CHUNK tasks a call. */
export async function solvedCounts(
  policy: Policy,
  sandbox: Sandbox,
  items: readonly { task: Task; prompt: PolicyPrompt }[],
  group: number,
): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < items.length; i += CHUNK) {
    const part = items.slice(i, i + CHUNK);
    const { answers } = await policy.sample(
      part.map((x) => x.prompt),
      group,
    );
    const verdicts = await verifyTasks(
      sandbox,
      part.flatMap(({ task }, g) => answers[g]!.map((answer) => ({ task, answer }))),
    );
    part.forEach((_, g) => out.push(solvedCount(verdicts.slice(g * group, (g + 1) * group).map((v) => v.reward))));
  }
  return out;
}

const meanOf = (xs: number[]): number => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
