// The proposers room (docs/proposers.md): a proposer that learns where the fixed
// generators draw. The learned grammar proposer keeps per-arm preferences over the typed grammar's
// choices and trains them on the learnability of its tasks, with novelty and validity terms.
export {
  learnedProposerConfigSchema,
  proposerConfigSchema,
  selfPlayConfigSchema,
  type LearnedProposerConfig,
  type ProposerConfig,
  type SelfPlayConfig,
} from './config.js';
export { buckets, probabilities, traceText, TracingChooser, type Choice, type Preferences } from './chooser.js';
export {
  LEARNED_PROPOSER,
  LEARNED_VERSION,
  LearnedProposer,
  preferenceRows,
  type LearnedDraft,
  type LearnedState,
  type LearnStats,
  type PreferenceRow,
} from './learned.js';
export {
  ModelChooser,
  SELF_PLAY_PROPOSER,
  SELF_PLAY_VERSION,
  SelfPlayProposer,
  selfPlayPrompt,
  type ChoiceModel,
  type ChoiceRow,
  type ChoiceSession,
  type ChoiceToken,
  type SelfPlayDraft,
  type SelfPlayState,
  type SelfPlayStats,
} from './self-play.js';
