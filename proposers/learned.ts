// The learned grammar proposer (docs/DESIGN.md, step 5): per arm (family, level, type) it keeps
// preferences over the grammar's choices, samples drafts with them (TracingChooser), and learns by
// REINFORCE with a per-arm baseline from each draft's reward:
//   r = learnability(p) + novelty · [canonical hash new to the run] + validity · [the sandbox accepted it]
// (p: the solver's group solve rate on the task; a refused draft scores 0; reward.ts holds the rule,
// for self-play too). Its whole state is plain numbers, so it checkpoints as JSON and resumes
// exactly; it draws only from the rng it is handed (the pick's fork), so it has no stream of its own.
import type { Rng } from '../core/rng.js';
import type { Task } from '../core/task.js';
import { armKey, type TaskArm } from '../curricula/index.js';
import { drawReference, materialise } from '../generators/index.js';
import type { Sandbox } from '../sandbox/index.js';
import { probabilities, TracingChooser, traceText, type Choice, type Preferences } from './chooser.js';
import type { LearnedProposerConfig } from './config.js';
import { scoreDrafts } from './reward.js';
import { mean } from '../core/stats.js';

export const LEARNED_VERSION = 2;
/** The `proposer` of every task the learned grammar proposer draws. */
export const LEARNED_PROPOSER = `learned:grammar@${LEARNED_VERSION}`;

/** Candidates the reference interpreter refused in one draw that are trained on as invalid (the kit may try hundreds). */
const MAX_REFUSED = 8;

/** A draft waiting for its reward: refused (no task) or accepted and waiting for the solver's answers. */
interface Pending {
  arm: string;
  trace: Choice[];
  valid: boolean;
  novel: boolean;
  taskId: string | null;
  /** Refused by the reference interpreter inside the draw, before the sandbox saw it. */
  screened?: boolean;
}

interface ArmState {
  prefs: Preferences;
  /** EMA of the rewards of this arm's drafts (null before the first). */
  baseline: number | null;
  /** Drafts trained on. */
  drafts: number;
}

export interface LearnedState {
  version: number;
  arms: Record<string, ArmState>;
  /** The fixed weights met at each arm's choice points (for showing preferences against them). */
  fixed: Record<string, Record<string, Record<string, number>>>;
  pending: Pending[];
}

/** One draft as the exports see it: the arm and the choice trace (the "prompt"), the program, the outcome. */
export interface LearnedDraft {
  arm: TaskArm;
  prompt: string;
  program: string;
  outcome: string;
  detail: string | null;
  taskId: string | null;
}

/** What one learning round saw (means over the drafts it trained on); null when it trained on none. */
export interface LearnStats {
  /** Drafts and refused candidates trained on. */
  drafts: number;
  /** Candidates the reference interpreter refused (trained on with reward 0; not in the means below but reward). */
  refused: number;
  reward: number;
  novelty: number;
  /** Share of the drafts the sandbox saw that it accepted. */
  validity: number;
  /** Share of accepted drafts whose solve rate was in the learnable band 0 < p < 1. */
  learnable: number;
}

/** One row of `cogen proposer`: an option at a choice point of an arm, learned against fixed probability. */
export interface PreferenceRow {
  arm: string;
  point: string;
  option: string;
  learned: number;
  fixed: number;
}

export class LearnedProposer {
  private arms: Record<string, ArmState> = {};
  private fixed: LearnedState['fixed'] = {};
  private pending: Pending[] = [];
  /** Canonical hashes of the run's tasks so far: a task is novel when its hash is not here (renaming cannot fake it). */
  private readonly hashes = new Set<string>();

  constructor(readonly config: LearnedProposerConfig) {}

  /** Marks a task of the run as seen (every new task, and the archive on resume). */
  note(task: Pick<Task, 'hash'>): void {
    this.hashes.add(task.hash);
  }

  isNovel(hash: string): boolean {
    return !this.hashes.has(hash);
  }

  private arm(key: string): ArmState {
    return (this.arms[key] ??= { prefs: {}, baseline: null, drafts: 0 });
  }

  /**
   * Draws drafts of `arm` with the learned choices until one passes the sandbox (as generateTask
   * does with the fixed weights); every draft, accepted or not, waits in `pending` for its reward.
   */
  async generate(
    sandbox: Sandbox,
    arm: TaskArm,
    rng: Rng,
    seen: Set<string>,
    attempts: number,
    onDraft?: (d: LearnedDraft) => void,
  ): Promise<Task> {
    const key = armKey(arm);
    const reasons = new Map<string, number>();
    for (let i = 0; i < attempts; i++) {
      const chooser = new TracingChooser(this.arm(key).prefs, MAX_REFUSED);
      const { draft } = drawReference(arm.family, rng, arm.level, arm.type, chooser);
      for (const trace of chooser.refused)
        this.pending.push({ arm: key, trace, valid: false, novel: false, taskId: null, screened: true });
      const m = await materialise(sandbox, { ...draft, proposer: LEARNED_PROPOSER }, seen);
      const novel = m.ok && this.isNovel(m.task.hash);
      if (m.ok) this.note(m.task);
      this.pending.push({ arm: key, trace: chooser.trace, valid: m.ok, novel, taskId: m.ok ? m.task.id : null });
      onDraft?.({
        arm,
        prompt: `${key} ${traceText(chooser.trace)}`,
        program: draft.program,
        outcome: m.ok ? 'accepted' : m.reason,
        detail: m.ok ? null : m.detail,
        taskId: m.ok ? m.task.id : null,
      });
      if (m.ok) return m.task;
      reasons.set(m.reason, (reasons.get(m.reason) ?? 0) + 1);
    }
    const summary = [...reasons].map(([k, n]) => `${k} ×${n}`).join(', ');
    throw new Error(
      `learned proposer: no ${arm.type} task for family '${arm.family}' at level ${arm.level} after ${attempts} drafts (${summary})`,
    );
  }

  /**
   * One REINFORCE round on the drafts whose reward is known: refused ones, and accepted ones whose
   * task is in `groups` (its G rewards). Accepted drafts whose task was not scored yet (a served run
   * hands tasks out before the trainer answers) keep waiting.
   */
  learn(groups: readonly { taskId: string; rewards: readonly number[] }[]): LearnStats | null {
    const { ready, waiting } = scoreDrafts(this.pending, groups, this.config);
    this.pending = waiting;
    if (ready.length === 0) return null;
    // Gradients first, all against the preferences the drafts were sampled with; then one step.
    const grads = new Map<string, Preferences>();
    const rewardsByArm = new Map<string, number[]>();
    for (const { d, r } of ready) (rewardsByArm.get(d.arm) ?? rewardsByArm.set(d.arm, []).get(d.arm)!).push(r);
    for (const { d, r } of ready) {
      const a = this.arm(d.arm);
      const baseline = a.baseline ?? mean(rewardsByArm.get(d.arm)!);
      // The mean over the arm's drafts of this round, not the sum: a draw that the interpreter
      // refused eight times before it found a program would otherwise move its arm ~9× as far as a
      // draw found at once, and the step size would depend on how many picks the arm got.
      const adv = (r - baseline) / rewardsByArm.get(d.arm)!.length;
      const g = grads.get(d.arm) ?? grads.set(d.arm, {}).get(d.arm)!;
      const fixed = (this.fixed[d.arm] ??= {});
      for (const c of d.trace) {
        const at = (fixed[c.point] ??= {});
        c.labels.forEach((l, i) => (at[l] = c.weights[i]!));
        if (adv === 0) continue;
        const probs = probabilities(a.prefs, c.point, c.labels, c.weights);
        const gp = (g[c.point] ??= {});
        c.labels.forEach((l, i) => (gp[l] = (gp[l] ?? 0) + adv * ((i === c.chosen ? 1 : 0) - probs[i]!)));
      }
    }
    const { lr, maxLogit, baselineDecay } = this.config;
    for (const [key, g] of grads) {
      const prefs = this.arm(key).prefs;
      for (const [point, byLabel] of Object.entries(g)) {
        const at = (prefs[point] ??= {});
        for (const [label, v] of Object.entries(byLabel)) at[label] = clamp((at[label] ?? 0) + lr * v, maxLogit);
      }
    }
    for (const [key, rs] of rewardsByArm) {
      const a = this.arm(key);
      for (const r of rs) a.baseline = a.baseline === null ? r : baselineDecay * a.baseline + (1 - baselineDecay) * r;
      a.drafts += rs.length;
    }
    const accepted = ready.filter((x) => x.d.valid);
    const drafts = ready.filter((x) => !x.d.screened);
    return {
      drafts: ready.length,
      refused: ready.length - drafts.length,
      reward: mean(ready.map((x) => x.r)),
      novelty: mean(drafts.map((x) => (x.d.novel ? 1 : 0))),
      validity: mean(drafts.map((x) => (x.d.valid ? 1 : 0))),
      learnable: mean(accepted.map((x) => (x.p! > 0 && x.p! < 1 ? 1 : 0))),
    };
  }

  state(): LearnedState {
    return structuredClone({ version: LEARNED_VERSION, arms: this.arms, fixed: this.fixed, pending: this.pending });
  }

  restore(state: unknown): void {
    const s = state as LearnedState | undefined;
    if (!s || typeof s !== 'object' || s.version !== LEARNED_VERSION) {
      throw new Error(
        `learned proposer: the checkpoint holds no state of version ${LEARNED_VERSION} (got ${s === undefined ? 'none' : `version ${String((s as { version?: unknown }).version)}`})`,
      );
    }
    ({ arms: this.arms, fixed: this.fixed, pending: this.pending } = structuredClone(s));
  }

  /** The preferences now: per arm, the options at each choice point with learned and fixed probabilities. */
  preferences(): PreferenceRow[] {
    return preferenceRows(this.state());
  }
}

/** Every option of every choice point met, per arm, with its learned and fixed probability (from a saved state too). */
export function preferenceRows(state: LearnedState): PreferenceRow[] {
  const rows: PreferenceRow[] = [];
  for (const arm of Object.keys(state.fixed).sort()) {
    const prefs = state.arms[arm]?.prefs ?? {};
    for (const point of Object.keys(state.fixed[arm]!).sort()) {
      const labels = Object.keys(state.fixed[arm]![point]!);
      const weights = labels.map((l) => state.fixed[arm]![point]![l]!);
      const learned = probabilities(prefs, point, labels, weights);
      const fixed = probabilities({}, point, labels, weights);
      labels.forEach((option, i) => rows.push({ arm, point, option, learned: learned[i]!, fixed: fixed[i]! }));
    }
  }
  return rows;
}

const clamp = (x: number, m: number): number => Math.max(-m, Math.min(m, x));
