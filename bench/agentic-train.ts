// bench:agentic's trained section (bench/results/agentic.md): for each kind at level 0, the
// built-in solver trained with multi-turn GRPO (src/run/env-training.ts) on a pool of generated
// environments, its success before and after training on that pool and on held-out environments of
// the same kind (greedy, and with --eval-samples the sampled policy's), with its learning curve;
// and the cost of the longer context (ms per agentic training step at the single-turn default
// context and at the agentic one).
import { createRng } from '../core/rng.js';
import { generateEnv, type EnvKind, type EnvSpec } from '../envs/index.js';
import type { Sandbox } from '../sandbox/index.js';
import { createPolicy, solverConfigSchema, type SolverConfigInput } from '../src/solver/index.js';
import { evaluateSolver, playSolver, trainAgentic } from '../src/run/testing.js';
import { median } from './stats.js';

export interface TrainOptions {
  steps: number;
  poolSize: number;
  heldOut: number;
  group: number;
  envsPerStep: number;
  seed: number;
  families: string[];
  /** Sampled episodes per environment for the sampled policy's success (0: greedy only). */
  evalSamples: number;
  /** Optimiser settings over AGENTIC_SOLVER's (bench:agentic --optim '{"lr":1e-3}'). */
  optim?: Record<string, number>;
}

/** The solver a run trains: AGENTIC_SOLVER with the run's optimiser settings. */
export const solverOf = (o: Pick<TrainOptions, 'optim'>): SolverConfigInput => ({
  ...AGENTIC_SOLVER,
  optim: { ...AGENTIC_SOLVER.optim, ...o.optim },
});

/** The agentic solver: the default model with a context long enough for a level-0 transcript. */
export const AGENTIC_SOLVER: SolverConfigInput = {
  backend: 'wasm',
  workers: 1,
  model: { maxPromptLen: 256, maxAnswerLen: 80 },
  optim: { lr: 3e-3, warmupSteps: 5, weightDecay: 0.1 },
  // an entropy bonus keeps test runs among the sampled actions: without it the sampled policy
  // stopped running tests within ~50 steps (agentic.md)
  loss: { type: 'bnpo', entropy: 0.01 },
};

export interface CurvePoint {
  step: number;
  reward: number;
  success: number;
  loss: number;
  ms: number;
  poolSuccess?: number;
}

export interface TrainedRow {
  kind: EnvKind;
  seed: number;
  steps: number;
  poolSize: number;
  heldOut: number;
  untrained: { pool: number; heldOut: number; heldOutSampled?: number };
  trained: {
    pool: number;
    heldOut: number;
    poolMeanReward: number;
    heldOutEndings: Record<string, number>;
    poolSampled?: number;
    heldOutSampled?: number;
  };
  curve: CurvePoint[];
  seconds: number;
}

/** n environments of a kind and level (distinct from `seen`, which they join), the families in turn. */
export async function makeSpecs(
  sb: Sandbox,
  kind: EnvKind,
  n: number,
  families: string[],
  label: string,
  seen: Set<string>,
  level = 0,
): Promise<EnvSpec[]> {
  const out: EnvSpec[] = [];
  for (let i = 0; out.length < n && i < n * 6; i++) {
    try {
      out.push(
        await generateEnv(sb, {
          kind,
          family: families[i % families.length]!,
          level,
          rng: createRng(`${label}/${i}`),
          seen,
        }),
      );
    } catch {
      // a family that makes no environment of this kind (repair of str programs): the others fill the pool
    }
  }
  return out;
}

export async function trainKind(
  sb: Sandbox,
  kind: EnvKind,
  o: TrainOptions,
  log: (l: string) => void,
): Promise<TrainedRow> {
  const seen = new Set<string>();
  const pool = await makeSpecs(sb, kind, o.poolSize, o.families, `agentic-train/${o.seed}/${kind}/pool`, seen);
  const held = await makeSpecs(sb, kind, o.heldOut, o.families, `agentic-train/${o.seed}/${kind}/held`, seen);
  const policy = await createPolicy(solverConfigSchema.parse(solverOf(o)), {
    seed: o.seed,
    totalSteps: o.steps,
    log: () => {},
  });
  const sampled = async (specs: EnvSpec[]) =>
    o.evalSamples > 0 ? (await evaluateSolver(policy, sb, specs, { samples: o.evalSamples })).success : undefined;
  const untrained = {
    pool: (await evaluateSolver(policy, sb, pool)).success,
    heldOut: (await evaluateSolver(policy, sb, held)).success,
  };
  const untrainedSampled = await sampled(held);
  const curve: CurvePoint[] = [];
  const t0 = performance.now();
  const every = Math.max(1, Math.floor(o.steps / 8));
  await trainAgentic(policy, sb, pool, {
    steps: o.steps,
    envsPerStep: o.envsPerStep,
    group: o.group,
    seed: o.seed,
    onStep: (s) => {
      curve.push({ step: s.step, reward: s.reward, success: s.success, loss: s.loss, ms: s.ms });
      if (s.step % every === 0 || s.step === o.steps - 1)
        log(
          `  ${kind} step ${s.step}: sampled success ${s.success.toFixed(2)} reward ${s.reward.toFixed(2)} (${s.ms.toFixed(0)} ms)`,
        );
    },
  });
  const seconds = (performance.now() - t0) / 1000;
  const p = await evaluateSolver(policy, sb, pool);
  const h = await evaluateSolver(policy, sb, held);
  const [ps, hs] = [await sampled(pool), await sampled(held)];
  policy.dispose();
  return {
    kind,
    seed: o.seed,
    steps: o.steps,
    poolSize: pool.length,
    heldOut: held.length,
    untrained: { ...untrained, ...(untrainedSampled === undefined ? {} : { heldOutSampled: untrainedSampled }) },
    trained: {
      pool: p.success,
      heldOut: h.success,
      poolMeanReward: p.meanReward,
      heldOutEndings: h.endings,
      ...(hs === undefined ? {} : { poolSampled: ps!, heldOutSampled: hs }),
    },
    curve,
    seconds,
  };
}

/**
 * The longer context's cost: median ms of one multi-turn update on the same played episodes (a
 * search batch, prompts cut from the left to each context), at the single-turn default context
 * (128 prompt + 40 answer characters) and at the agentic one.
 */
export async function contextCost(
  sb: Sandbox,
  o: TrainOptions,
  reps = 5,
): Promise<{ maxPromptLen: number; maxAnswerLen: number; msPerUpdate: number; promptChars: number }[]> {
  const pool = await makeSpecs(sb, 'search', o.envsPerStep, o.families, `agentic-cost/${o.seed}`, new Set());
  const player = await createPolicy(solverConfigSchema.parse(AGENTIC_SOLVER), {
    seed: o.seed,
    totalSteps: 1,
    log: () => {},
  });
  const groups = await playSolver(player, sb, pool, o.group, { greedy: false });
  player.dispose();
  const out = [];
  for (const [maxPromptLen, maxAnswerLen] of [
    [128, 40],
    [256, 80],
  ] as const) {
    const cut = groups.map((g) =>
      g.map((e) => ({ reward: e.reward, rows: e.rows.map((r) => ({ ...r, prompt: r.prompt.slice(-maxPromptLen) })) })),
    );
    const cfg = solverConfigSchema.parse({
      ...AGENTIC_SOLVER,
      model: { maxPromptLen, maxAnswerLen },
      loss: { type: 'bnpo', dynamicSampling: false },
    });
    const policy = await createPolicy(cfg, { seed: o.seed, totalSteps: reps + 1, log: () => {} });
    const ms: number[] = [];
    for (let i = 0; i <= reps; i++) {
      const t0 = performance.now();
      await policy.updateEpisodes(cut, 1);
      if (i > 0) ms.push(performance.now() - t0); // the first is warm-up
    }
    policy.dispose();
    const rows = cut.flat().flatMap((e) => e.rows);
    out.push({
      maxPromptLen,
      maxAnswerLen,
      msPerUpdate: median(ms),
      promptChars: rows.reduce((a, r) => a + r.prompt.length, 0) / rows.length,
    });
  }
  return out;
}
