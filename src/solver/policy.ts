// The built-in solver's policy: a small transformer that samples answers in its answer grammar and
// learns from their rewards with the GRPO family (docs/DESIGN.md, "Solver and the GRPO family";
// src/solver/README.md). index.ts is the room's door and builds it (createPolicy). Its state is in
// state.ts; sampling in sample.ts, updates in update.ts, checkpoints in checkpoint.ts.
import { createRng } from '../../core/rng.js';
import type { SolverConfig } from './config.js';
import { ChoiceDecoder } from './choices.js';
import { loadCheckpoint, loadModelWeights, writeCheckpoint, type PolicyParts } from './checkpoint.js';
import type { ActionTool, EpisodeRows } from './episodes.js';
import type { ModelConfig } from './params.js';
import { decodeActionRows, decodeBatch } from './sample.js';
import { createState, type PolicyState } from './state.js';
import type { PolicyPrompt, RolloutRow, SolverRollout, TrainablePolicy, TrainStats, UpdateAlso } from './types.js';
import { update, updateEpisodes } from './update.js';

export class TransformerPolicy implements TrainablePolicy {
  readonly backend: string;
  readonly mc: ModelConfig;
  /** What sampling and updates work on (and the test seams read: testing.ts, supervise.ts). */
  readonly state: PolicyState;

  /** proposalLen: choice tokens a self-play proposer writes (proposers/self-play.ts); 0 without one. */
  constructor(
    readonly cfg: SolverConfig,
    backend: string,
    seed: number,
    totalSteps: number,
    log: (l: string) => void,
    proposalLen = 0,
  ) {
    this.backend = backend;
    this.state = createState(cfg, backend, seed, totalSteps, log, proposalLen);
    this.mc = this.state.mc;
  }

  // ------------------------------------------------------------------ sampling (sample.ts)
  async sample(prompts: PolicyPrompt[], groupSize: number): Promise<SolverRollout> {
    const rows = prompts.length ? await decodeBatch(this.state, prompts, groupSize, false) : [];
    return {
      answers: rows.map((group) => group.map((r) => r.text)),
      written: rows.map((group) => group.map((r) => r.written)),
      rows,
      temperature: this.cfg.sampling.temperature,
    };
  }

  async greedy(prompts: PolicyPrompt[]): Promise<string[]> {
    if (!prompts.length) return [];
    return (await decodeBatch(this.state, prompts, 1, true)).map((group) => group[0]!.text);
  }

  decodeActions(prompts: { text: string; tools: readonly ActionTool[] }[], greedy: boolean): Promise<RolloutRow[]> {
    return decodeActionRows(this.state, prompts, greedy);
  }

  openChoices(prompt: string): ChoiceDecoder {
    const m = this.cfg.model;
    return new ChoiceDecoder(
      this.state.params,
      this.mc,
      m.maxPromptLen,
      this.mc.maxPositions - m.maxPromptLen - 1,
      this.cfg.sampling.temperature,
      prompt,
    );
  }

  // ------------------------------------------------------------------ training (update.ts)
  update(rollout: SolverRollout, rewards: number[][], also: UpdateAlso = {}): Promise<TrainStats> {
    return update(this.state, rollout, rewards, also);
  }

  updateEpisodes(groups: EpisodeRows[][], temperature: number): Promise<TrainStats> {
    return updateEpisodes(this.state, groups, temperature);
  }

  // ------------------------------------------------------------------ checkpoints (checkpoint.ts)
  private parts(): PolicyParts {
    const s = this.state;
    return { params: s.params, ref: s.ref, opt: s.opt, replay: s.replay };
  }

  async save(dir: string): Promise<void> {
    const s = this.state;
    await writeCheckpoint(dir, this.parts(), {
      config: this.cfg,
      model: this.mc,
      optimizer: { type: 'adamw', step: s.opt.step, ...s.schedule, moments: 'optimizer.safetensors' },
      rng: s.rng.state(),
      backend: this.backend,
    });
  }

  async load(dir: string): Promise<void> {
    const { rng, replay } = await loadCheckpoint(dir, this.parts(), this.mc);
    this.state.replay = replay;
    this.state.rng = createRng(rng);
    this.state.pool.resetRef();
  }

  async loadWeights(dir: string): Promise<void> {
    await loadModelWeights(dir, this.parts(), this.mc);
    this.state.pool.resetRef();
  }

  dispose(): void {
    const s = this.state;
    s.pool.close();
    for (const v of s.params.values()) v.dispose();
    if (s.ref) for (const v of s.ref.values()) v.dispose();
    s.opt.dispose();
  }
}

/** The state of a policy createPolicy made (for the test seams); a chat-model solver has none. */
export function stateOf(policy: TrainablePolicy): PolicyState {
  if (!(policy instanceof TransformerPolicy)) throw new Error('not the built-in solver: it has no transformer state');
  return policy.state;
}
