// The self-play mode's glue (experimental; docs/proposers.md): the built-in solver's
// transformer is also the proposer (proposers/self-play.ts). Here the two meet: the config's
// switch, the model as the decoder's ChoiceModel, the reference task of a prompt, and the
// proposals' rows and metrics.
import type { Task } from '../../core/task.js';
import type { TaskArm } from '../../curricula/index.js';
import type { TaskArchive } from './task-archive.js';
import { SelfPlayProposer, type ChoiceModel, type SelfPlayStats } from '../../proposers/index.js';
import type { RunConfig } from './config.js';
import type { TrainablePolicy } from '../solver/index.js';

/** The self-play proposer and the model it proposes with (the solver's own network, which the loop trains in both roles). */
export interface SelfPlay {
  proposer: SelfPlayProposer;
  model: ChoiceModel;
}

/** The self-play config of a run, or null when the mode is off (the default). */
export function selfPlayConfigOf(config: RunConfig): NonNullable<RunConfig['proposer']>['selfPlay'] | null {
  const cfg = config.proposer?.selfPlay;
  return cfg?.enabled ? cfg : null;
}

/** Self-play on `policy` (the built-in solver; a chat-model solver cannot propose this way). */
export function selfPlayOf(config: RunConfig, policy: TrainablePolicy | null): SelfPlay | null {
  const cfg = selfPlayConfigOf(config);
  if (!cfg) return null;
  if (!policy)
    throw new Error(
      "proposer.selfPlay needs the built-in solver (it proposes with the solver's own network); turn off agents.solver",
    );
  return { proposer: new SelfPlayProposer(cfg), model: { open: (prompt) => policy.openChoices(prompt) } };
}

/** The reference task of a prompt: the newest archived task of the arm (none at first). */
export const referenceTask = (archive: TaskArchive, arm: TaskArm): Task | undefined => archive.ofArm(arm).at(-1);

/** The proposer role's round as step metrics. */
export function selfPlayMetrics(
  stats: (SelfPlayStats & { candidates: number; overflow: number }) | null,
): Record<string, number> {
  if (!stats) return { 'selfPlay.drafts': 0 };
  return {
    'selfPlay.drafts': stats.drafts,
    'selfPlay.refused': stats.refused,
    'selfPlay.candidates': stats.candidates,
    'selfPlay.overflow': stats.overflow,
    'selfPlay.validity': stats.validity,
    'selfPlay.novelty': stats.novelty,
    'selfPlay.learnable': stats.learnable,
    'selfPlay.reward': stats.reward,
    'selfPlay.tokens': stats.tokens,
  };
}
