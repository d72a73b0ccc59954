// Self-play (docs/proposers.md; Absolute Zero's one policy in two roles), an
// experiment, off by default: the solver's own transformer writes the fresh tasks. The generators'
// grammar stays the author of the program's shape; at each of its choice points (which production
// fills a hole, whether a hole stops growing, which range an integer literal falls in) the model
// picks the option instead of the fixed weights. Each option is one token (a character), the model
// reads the prompt (a reference task and the arm) and the choice tokens so far, and its next-token
// distribution is masked to the point's options: constrained decoding, so any weights give a
// program of the grammar. The sandbox checks validity, determinism and duplicates as for any
// proposal.
//
// The proposer role's reward is AZR's: learnability(p) + novelty · [canonical hash new to the run] +
// validity · [the sandbox accepted it] (refused candidates score 0; reward.ts), and its advantage is the
// reward's z-score among the round's drafts of the same task type (task-relative REINFORCE++: one
// baseline per role and task type; the solver role keeps its per-task group baseline). It learns
// from the log-probs of its own choice tokens only; the loop adds those rows to the solver's update.
import type { Rng } from '../core/rng.js';
import type { Task, TaskType } from '../core/task.js';
import { armKey, type TaskArm } from '../curricula/index.js';
import { drawReference, materialise, type Chooser, type Production } from '../generators/index.js';
import type { Sandbox } from '../sandbox/index.js';
import type { SelfPlayConfig } from './config.js';
import type { LearnedDraft } from './learned.js';
import { scoreDrafts } from './reward.js';
import { mean } from '../core/stats.js';

export const SELF_PLAY_VERSION = 1;
/** The `proposer` of every task the self-play proposer writes. */
export const SELF_PLAY_PROPOSER = `self-play@${SELF_PLAY_VERSION}`;

/** Refused candidates of one draft that are trained on (the rest are counted only). */
const MAX_REFUSED = 8;
/** A production's option token is its index among the point's options, as a letter. */
const PRODUCTION_TOKENS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** Leaf or grow. */
const LEAF_TOKENS = '.+';
/** Integer buckets (at most four; chooser.ts's buckets). */
const INT_TOKENS = '0123';

/** The model's side of the decoder: one prompt, then candidates of choice tokens after it. */
export interface ChoiceSession {
  /** A new candidate: its first choice token comes right after the prompt. */
  restart(): void;
  /** The model's next-token logits (divided by the sampling temperature) for each allowed token. */
  scores(allowed: string): number[];
  /** Appends the chosen token to the current candidate. */
  push(token: string): void;
  close(): void;
}

export interface ChoiceModel {
  open(prompt: string): ChoiceSession;
}

/** One choice token the model wrote: the token, the tokens it was allowed, and its log-prob then. */
export interface ChoiceToken {
  token: string;
  allowed: string;
  logp: number;
}

/** The proposer role's training row: its prompt, its choice tokens, and their advantage. */
export interface ChoiceRow {
  prompt: string;
  tokens: string;
  /** allowed[k]: the tokens allowed at choice k */
  allowed: string[];
  /** sampling log-probs of the tokens (masked to the allowed, temperature applied) */
  logp: number[];
  adv: number;
}

/** Raised inside a draw when its candidates run out: the draft counts as invalid. */
class CandidatesExhausted extends Error {}

/** A Chooser whose choices the model makes (masked to the options), recording its tokens per candidate. */
export class ModelChooser implements Chooser {
  trace: ChoiceToken[] = [];
  readonly refused: ChoiceToken[][] = [];
  candidates = 0;
  /** Choices past maxChoices, taken with the fixed weights. */
  overflow = 0;

  constructor(
    private readonly session: ChoiceSession,
    private readonly maxChoices: number,
    private readonly maxCandidates: number,
  ) {}

  begin(): void {
    if (this.candidates > 0 && this.refused.length < MAX_REFUSED) this.refused.push(this.trace);
    if (this.candidates >= this.maxCandidates) throw new CandidatesExhausted(`${this.candidates} candidates`);
    this.candidates++;
    this.trace = [];
    this.session.restart();
  }

  /** Index of the option taken among `weights` (options of weight 0 are not allowed). */
  private choose(rng: Rng, tokens: string, weights: readonly number[]): number {
    const open = weights.flatMap((w, i) => (w > 0 ? [i] : []));
    if (open.length <= 1) return open[0] ?? 0;
    if (this.trace.length >= this.maxChoices || weights.length > tokens.length) {
      this.overflow++;
      return drawIndex(
        rng,
        weights.map((w) => Math.max(0, w)),
      );
    }
    const allowed = open.map((i) => tokens[i]!).join('');
    const z = this.session.scores(allowed);
    const top = Math.max(...z);
    const lse = top + Math.log(z.reduce((a, x) => a + Math.exp(x - top), 0));
    const k = drawIndex(
      rng,
      z.map((x) => Math.exp(x - lse)),
    );
    this.trace.push({ token: allowed[k]!, allowed, logp: z[k]! - lse });
    this.session.push(allowed[k]!);
    return open[k]!;
  }

  production(rng: Rng, _ty: string, options: Production[]): Production {
    return options[
      this.choose(
        rng,
        PRODUCTION_TOKENS,
        options.map((p) => p.weight ?? 1),
      )
    ]!;
  }

  leaf(rng: Rng, _ty: string, p: number): boolean {
    return this.choose(rng, LEAF_TOKENS, [p, 1 - p]) === 0;
  }

  int(rng: Rng, _ty: string, lo: number, hi: number): number {
    const n = hi - lo + 1;
    const k = Math.max(1, Math.min(INT_TOKENS.length, n));
    const b = this.choose(
      rng,
      INT_TOKENS,
      Array.from({ length: k }, (_, i) => Math.floor(((i + 1) * n) / k) - Math.floor((i * n) / k)),
    );
    return rng.int(lo + Math.floor((b * n) / k), lo + Math.floor(((b + 1) * n) / k) - 1);
  }
}

/** Draws an index with probability proportional to `w`, with one uniform from the rng. */
function drawIndex(rng: Rng, w: readonly number[]): number {
  let r = rng.next() * w.reduce((a, b) => a + b, 0);
  let last = 0;
  for (let i = 0; i < w.length; i++) {
    if (w[i]! <= 0) continue;
    last = i;
    r -= w[i]!;
    if (r < 0) return i;
  }
  return last;
}

/** The proposer's prompt: a reference task's program, then the arm (last, so a left cut keeps it). */
export const selfPlayPrompt = (arm: TaskArm, reference?: Pick<Task, 'program'>): string =>
  `${reference ? `ref ${reference.program.replace(/\s+/g, ' ')} ` : ''}| ${arm.family} L${arm.level} ${arm.type} >`;

interface Pending {
  type: TaskType;
  prompt: string;
  trace: ChoiceToken[];
  valid: boolean;
  novel: boolean;
  taskId: string | null;
  /** Refused inside the draw (by the reference interpreter, or candidates ran out), before the sandbox. */
  screened: boolean;
}

export interface SelfPlayState {
  version: number;
  pending: Pending[];
}

/** One draft as the exports see it: the learned proposer's record, with the model's context as the prompt. */
export type SelfPlayDraft = LearnedDraft;

/** What one round saw; null when it had nothing to learn from. */
export interface SelfPlayStats {
  /** Drafts that reached the sandbox. */
  drafts: number;
  /** Candidates refused inside the draws (trained on with reward 0, up to 8 a draft). */
  refused: number;
  /** Share of the drafts that reached the sandbox that it accepted. */
  validity: number;
  novelty: number;
  /** Share of accepted drafts whose solve rate was in the learnable band 0 < p < 1. */
  learnable: number;
  reward: number;
  /** Choice tokens trained on. */
  tokens: number;
}

export class SelfPlayProposer {
  private pending: Pending[] = [];
  private readonly hashes = new Set<string>();
  /** Candidates decoded and choices past the cap, since the last learn() (metrics). */
  private counts = { candidates: 0, overflow: 0 };

  constructor(readonly config: SelfPlayConfig) {}

  note(task: Pick<Task, 'hash'>): void {
    this.hashes.add(task.hash);
  }

  /**
   * Drafts of `arm` written by the model until one passes the sandbox; every draft and the refused
   * candidates inside it wait in `pending` for their reward.
   */
  async generate(
    sandbox: Sandbox,
    arm: TaskArm,
    rng: Rng,
    seen: Set<string>,
    attempts: number,
    model: ChoiceModel,
    reference?: Task,
    onDraft?: (d: SelfPlayDraft) => void,
  ): Promise<Task> {
    const prompt = selfPlayPrompt(arm, reference);
    const session = model.open(prompt);
    const reasons = new Map<string, number>();
    try {
      for (let i = 0; i < attempts; i++) {
        const chooser = new ModelChooser(session, this.config.maxChoices, this.config.maxCandidates);
        let drawn: ReturnType<typeof drawReference> | null = null;
        try {
          drawn = drawReference(arm.family, rng, arm.level, arm.type, chooser);
        } catch (e) {
          if (!(e instanceof CandidatesExhausted)) throw e;
        }
        this.counts.candidates += chooser.candidates;
        this.counts.overflow += chooser.overflow;
        // (when the candidates ran out, begin() has filed the last one among the refused)
        for (const trace of chooser.refused)
          this.pending.push({
            type: arm.type,
            prompt,
            trace,
            valid: false,
            novel: false,
            taskId: null,
            screened: true,
          });
        if (!drawn) {
          reasons.set('candidates', (reasons.get('candidates') ?? 0) + 1);
          onDraft?.({
            arm,
            prompt: `${armKey(arm)} ${prompt}`,
            program: '',
            outcome: 'exhausted',
            detail: `${chooser.candidates} candidates refused by the reference interpreter`,
            taskId: null,
          });
          continue;
        }
        const m = await materialise(sandbox, { ...drawn.draft, proposer: SELF_PLAY_PROPOSER }, seen);
        const novel = m.ok && !this.hashes.has(m.task.hash);
        if (m.ok) this.note(m.task);
        this.pending.push({
          type: arm.type,
          prompt,
          trace: chooser.trace,
          valid: m.ok,
          novel,
          taskId: m.ok ? m.task.id : null,
          screened: false,
        });
        onDraft?.({
          arm,
          prompt: `${armKey(arm)} ${prompt} ${chooser.trace.map((c) => c.token).join('')}`,
          program: drawn.draft.program,
          outcome: m.ok ? 'accepted' : m.reason,
          detail: m.ok ? null : m.detail,
          taskId: m.ok ? m.task.id : null,
        });
        if (m.ok) return m.task;
        reasons.set(m.reason, (reasons.get(m.reason) ?? 0) + 1);
      }
    } finally {
      session.close();
    }
    const summary = [...reasons].map(([k, n]) => `${k} ×${n}`).join(', ');
    throw new Error(
      `self-play proposer: no ${arm.type} task for family '${arm.family}' at level ${arm.level} after ${attempts} drafts (${summary})`,
    );
  }

  /**
   * The drafts whose reward is known (refused ones, and accepted ones whose task is in `groups`) as
   * training rows with their task-relative advantages, and the round's stats.
   */
  learn(
    groups: readonly { taskId: string; rewards: readonly number[] }[],
  ): { rows: ChoiceRow[]; stats: SelfPlayStats & { candidates: number; overflow: number } } | null {
    const { ready, waiting } = scoreDrafts(this.pending, groups, this.config);
    this.pending = waiting;
    const counts = this.counts;
    this.counts = { candidates: 0, overflow: 0 };
    if (ready.length === 0) return null;
    // One baseline per task type (the proposer role's): the z-score of the reward among the round's drafts of that type.
    const byType = new Map<TaskType, number[]>();
    for (const { d, r } of ready) (byType.get(d.type) ?? byType.set(d.type, []).get(d.type)!).push(r);
    const norm = new Map(
      [...byType].map(([t, rs]) => [t, { mean: mean(rs), std: Math.sqrt(mean(rs.map((r) => (r - mean(rs)) ** 2))) }]),
    );
    const rows: ChoiceRow[] = [];
    for (const { d, r } of ready) {
      const { mean: m, std } = norm.get(d.type)!;
      const adv = std > 0 ? (r - m) / (std + 1e-4) : 0;
      if (adv !== 0 && d.trace.length > 0) {
        rows.push({
          prompt: d.prompt,
          tokens: d.trace.map((c) => c.token).join(''),
          allowed: d.trace.map((c) => c.allowed),
          logp: d.trace.map((c) => c.logp),
          adv,
        });
      }
    }
    const sent = ready.filter((x) => !x.d.screened);
    const accepted = ready.filter((x) => x.d.valid);
    return {
      rows,
      stats: {
        drafts: sent.length,
        refused: ready.length - sent.length,
        validity: mean(sent.map((x) => (x.d.valid ? 1 : 0))),
        novelty: mean(sent.map((x) => (x.d.novel ? 1 : 0))),
        learnable: mean(accepted.map((x) => (x.p! > 0 && x.p! < 1 ? 1 : 0))),
        reward: mean(ready.map((x) => x.r)),
        tokens: rows.reduce((a, x) => a + x.tokens.length, 0),
        candidates: counts.candidates,
        overflow: counts.overflow,
      },
    };
  }

  state(): SelfPlayState {
    return structuredClone({ version: SELF_PLAY_VERSION, pending: this.pending });
  }

  restore(state: unknown): void {
    const s = state as SelfPlayState | undefined;
    if (!s || typeof s !== 'object' || s.version !== SELF_PLAY_VERSION) {
      throw new Error(
        `self-play proposer: the checkpoint holds no state of version ${SELF_PLAY_VERSION} (got ${s === undefined ? 'none' : `version ${String((s as { version?: unknown }).version)}`})`,
      );
    }
    this.pending = structuredClone(s.pending);
  }
}
