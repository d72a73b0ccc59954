// What a built-in policy is made of: its config, weights (and KL reference), optimiser, sampling
// stream, self-imitation's kept answers and shard workers. policy.ts holds one; sample.ts and
// update.ts work on it, and so do the test seams (testing.ts, supervise.ts).
import { createRng, type Rng } from '../../core/rng.js';
import { updateThreads } from './backend.js';
import type { SolverConfig } from './config.js';
import { initWeights, makeParams, type ModelConfig, type Params } from './params.js';
import { AdamW, type OptimConfig } from './optim.js';
import { ShardPool } from './accel/index.js';
import { AnswerReplay } from './self-imitation.js';
import { BATCH_FLOATS, shardSetupOf, type ShardSetup } from './train-step.js';

/** The ShardModule the shard workers run (accel/parallel.ts). */
const TRAIN_STEP_MODULE = new URL('./train-step.ts', import.meta.url);

export interface PolicyState {
  readonly cfg: SolverConfig;
  readonly backend: string;
  readonly mc: ModelConfig;
  readonly params: Params;
  /** the KL reference's weights (β > 0) */
  readonly ref: Params | null;
  readonly opt: AdamW;
  /** The optimiser settings with the schedule's length (the run's steps). */
  readonly schedule: OptimConfig;
  /** What every shard of an update or a decode shares (this thread's and the shard workers'). */
  readonly setup: ShardSetup;
  /** Shard workers for data-parallel updates and decoding (started on first use). */
  readonly pool: ShardPool;
  /** the sampling stream (a checkpoint load replaces it) */
  rng: Rng;
  /** kept answers for self-imitation; null when it is off */
  replay: AnswerReplay | null;
  /** Attention and logit floats one training batch may hold (memoryChunks). */
  batchFloats: number;
}

/**
 * A new policy's state: nanoGPT-initialised weights from `seed`'s 'init' stream (the KL reference a
 * copy of them), its sampling stream from `seed`'s 'sample' stream. proposalLen: choice tokens a
 * self-play proposer writes (proposers/self-play.ts); 0 without one.
 */
export function createState(
  cfg: SolverConfig,
  backend: string,
  seed: number,
  totalSteps: number,
  log: (l: string) => void,
  proposalLen = 0,
): PolicyState {
  const setup = shardSetupOf(cfg, proposalLen);
  const pool = new ShardPool(updateThreads(cfg.workers, backend), backend, TRAIN_STEP_MODULE, setup, log);
  const replay = cfg.selfImitation ? new AnswerReplay() : null;
  const base = createRng(seed);
  const init = initWeights(setup.mc, base.fork('init'));
  const params = makeParams(init);
  const ref = cfg.loss.beta > 0 ? makeParams(init, false) : null;
  const schedule = { ...cfg.optim, totalSteps };
  const opt = new AdamW(params, schedule);
  const rng = base.fork('sample');
  return {
    cfg,
    backend,
    mc: setup.mc,
    params,
    ref,
    opt,
    schedule,
    setup,
    pool,
    rng,
    replay,
    batchFloats: BATCH_FLOATS,
  };
}
