// Multi-turn episodes for the built-in solver (docs/DESIGN.md, "Environments"): actions decoded
// under an action grammar, and the rows a multi-turn GRPO update trains on.
//
// An episode is a transcript: the first prompt, then turns of (the action the agent wrote, the text
// the environment answered). Turn k is decoded as one row `<bos> context action <eos>`, where
// the context is the transcript before it (the prompt and every earlier action and observation,
// tokenized as any prompt and cut from the left to maxPromptLen). So the agent's tokens are the
// rows' answers, and the environment's tokens appear only as context: they are never a target, the
// loss is masked to the agent's own tokens. Positions follow the solver's rule (model.ts), so
// decoding a turn and training on it run the same sequence. The price: each
// turn's row reads its whole context again (no cache across turns), so an update costs about
// turns x context, and its attention about turns x context² (bench/results/agentic.md measures it).
//
// The action language: `name(<argument>)`, one tool per action, its argument decoded in the tool's
// answer grammar (a typed literal such as `[int]`, or program text). The glue that plays an
// environment (src/run/env-training.ts) names the tools and turns the text into the environment's action.
import type { AnswerShape } from '../../core/task.js';
import { decodeMasked, type DecodedRow, type DecodeOptions } from './decode.js';
import { stepToken, tokenMask, type Grammar } from './answer-grammar.js';
import { grammarFor } from './grammars.js';
import { answerFromView, answerInView } from './answer-view.js';
import { advantages } from './loss.js';
import type { ModelConfig, Params } from './params.js';
import { tokenText } from './tokenizer.js';
import type { TrainRow } from './train-step.js';

/**
 * A tool as the solver writes it: `name(<argument>)`, the argument in the `arg` grammar, or (with
 * `oneOf`) exactly one of the given texts, as a choice among candidates the glue lists; `except`
 * lists argument texts the grammar refuses (calls and test runs already made: the transcript holds their results).
 */
export interface ActionTool {
  name: string;
  arg: AnswerShape;
  oneOf?: readonly string[];
  except?: readonly string[];
}

const PRINTABLE: string[] = [];
for (let c = 32; c <= 126; c++) PRINTABLE.push(String.fromCharCode(c));

interface ExceptState {
  inner: unknown;
  /** the text so far while it is a prefix of some refused text; null once it left them all */
  text: string | null;
}

/**
 * `g` without the texts in `except`. Only a prefix of a refused text can lead to one, so the fewest
 * characters left is searched along those prefixes alone (a prefix every completion of which is
 * refused, such as `[0` when `[0]` is, is a dead end: Infinity).
 */
export function exceptGrammar(g: Grammar, except: readonly string[]): Grammar<ExceptState> {
  const refused = new Set(except);
  const prefixes = new Set(except.flatMap((t) => Array.from({ length: t.length + 1 }, (_, i) => t.slice(0, i))));
  const step = (s: ExceptState, c: string): ExceptState | null => {
    const inner = g.next(s.inner, c);
    if (inner === null) return null;
    const text = s.text !== null && prefixes.has(s.text + c) ? s.text + c : null;
    return { inner, text };
  };
  const memo = new Map<string, number>();
  const minRemaining = (s: ExceptState): number => {
    if (s.text === null) return g.minRemaining(s.inner);
    const known = memo.get(s.text);
    if (known !== undefined) return known;
    let best = g.canEnd(s.inner) && !refused.has(s.text) ? 0 : Infinity;
    for (const c of PRINTABLE) {
      const n = best > 0 ? step(s, c) : null;
      if (n !== null) best = Math.min(best, 1 + minRemaining(n));
    }
    memo.set(s.text, best);
    return best;
  };
  return {
    start: () => ({ inner: g.start(), text: refused.size > 0 ? '' : null }),
    next: step,
    minRemaining,
    canEnd: (s) => g.canEnd(s.inner) && !(s.text !== null && refused.has(s.text)),
    key: (s) => `${s.text === null ? '' : `${s.text}\u0000`}${g.key(s.inner)}`,
    midWord: (s) => g.midWord?.(s.inner) ?? false,
    charsOnly: (s) => g.charsOnly?.(s.inner) ?? false,
  };
}

/** The grammar of exactly one of `options` (a trie over their characters). */
export function choiceGrammar(options: readonly string[]): Grammar<string> {
  // the fewest characters left after each prefix of some option
  const left = new Map<string, number>();
  for (const o of options)
    for (let i = 0; i <= o.length; i++)
      left.set(o.slice(0, i), Math.min(left.get(o.slice(0, i)) ?? Infinity, o.length - i));
  const whole = new Set(options);
  return {
    start: () => '',
    next: (s, c) => (left.has(s + c) ? s + c : null),
    minRemaining: (s) => left.get(s) ?? Infinity,
    canEnd: (s) => whole.has(s),
    key: (s) => s,
  };
}

interface ActionState {
  /** the tool being written, once its `name(` is complete */
  tool: number;
  /** characters of `name(` written so far (before the tool is known) */
  head: string;
  inner: unknown;
  closed: boolean;
}

/**
 * The grammar of one action `name(<arg>)` over the given tools. Inside the argument the tool's own
 * grammar has the first say; `)` closes the action only where that grammar cannot take it and the
 * argument is complete, so every text has one reading (parseAction).
 */
export function actionGrammar(tools: readonly ActionTool[]): Grammar<ActionState> {
  const heads = tools.map((t) => `${t.name}(`);
  const inner = tools.map((t) => {
    const g = t.oneOf ? (choiceGrammar(t.oneOf) as Grammar) : grammarFor(t.arg);
    // refused arguments are given as their text; a literal's numbers are written signed (answer-view.ts)
    const refused = t.oneOf ? t.except : t.except?.map((e) => answerInView(t.arg, e));
    return (refused?.length ? exceptGrammar(g, refused) : g) as Grammar;
  });
  return {
    start: () => ({ tool: -1, head: '', inner: null, closed: false }),
    next(s, c) {
      if (s.closed) return null;
      if (s.tool < 0) {
        const head = s.head + c;
        const i = heads.indexOf(head);
        if (i >= 0) return { tool: i, head, inner: inner[i]!.start(), closed: false };
        return heads.some((h) => h.startsWith(head)) ? { ...s, head } : null;
      }
      const g = inner[s.tool]!;
      const n = g.next(s.inner, c);
      if (n !== null) return { ...s, inner: n };
      return c === ')' && g.canEnd(s.inner) ? { ...s, closed: true } : null;
    },
    minRemaining(s) {
      if (s.closed) return 0;
      if (s.tool >= 0) return inner[s.tool]!.minRemaining(s.inner) + 1;
      let best = Infinity;
      heads.forEach((h, i) => {
        if (h.startsWith(s.head))
          best = Math.min(best, h.length - s.head.length + inner[i]!.minRemaining(inner[i]!.start()) + 1);
      });
      return best;
    },
    canEnd: (s) => s.closed,
    key: (s) => (s.tool < 0 ? `h${s.head}` : `${s.tool}|${s.closed}|${inner[s.tool]!.key(s.inner)}`),
    midWord: (s) => s.tool >= 0 && !s.closed && (inner[s.tool]!.midWord?.(s.inner) ?? false),
    charsOnly: (s) => s.tool >= 0 && !s.closed && (inner[s.tool]!.charsOnly?.(s.inner) ?? false),
  };
}

/** An action's tool and argument text (a literal's numbers read back as JSON writes them), or null when the text is not one action of these tools. */
export function parseAction(tools: readonly ActionTool[], text: string): { tool: string; arg: string } | null {
  const g = actionGrammar(tools);
  let s = g.start();
  for (const ch of text) {
    const n = g.next(s, ch);
    if (n === null) return null;
    s = n;
  }
  if (!g.canEnd(s)) return null;
  const tool = tools[s.tool]!;
  const written = text.slice(tool.name.length + 1, -1);
  return { tool: tool.name, arg: tool.oneOf ? written : answerFromView(tool.arg, written) };
}

/** One turn to decode: the context's ids (already cut to maxPromptLen), the tools, a random stream. */
export interface ActionPrompt {
  ids: number[];
  tools: readonly ActionTool[];
  seed: string;
}

/**
 * One action per prompt (rows[b]), decoded by decode.ts's loop for answers (prefill, KV-cache steps, the same
 * sampling and log-probs) but each token masked by the action grammar of its prompt's tools.
 */
export async function decodeActions(
  params: Params,
  mc: ModelConfig,
  o: DecodeOptions,
  prompts: ActionPrompt[],
  greedy: boolean,
): Promise<DecodedRow[]> {
  // In chunks of DECODE_ROWS contexts (each row has its own seed, so the rows are the same): the
  // prefill's attention over thousands of long transcripts would pass wasm's 4 GiB heap.
  const out: DecodedRow[] = [];
  for (let i = 0; i < prompts.length; i += DECODE_ROWS)
    out.push(...(await decodeChunk(params, mc, o, prompts.slice(i, i + DECODE_ROWS), greedy)));
  return out;
}

/** Contexts one action decode holds at once. */
const DECODE_ROWS = 256;

function decodeChunk(
  params: Params,
  mc: ModelConfig,
  o: DecodeOptions,
  prompts: ActionPrompt[],
  greedy: boolean,
): Promise<DecodedRow[]> {
  return decodeMasked(params, mc, o, prompts, 1, greedy, (b) => {
    const grammar = actionGrammar(prompts[b]!.tools);
    let state = grammar.start();
    return {
      allowed: (tokensLeft) => {
        const allowed = tokenMask(grammar, state, tokensLeft);
        if (!allowed.some((x) => x))
          throw new Error(`no action fits in ${o.maxAnswerLen} characters (maxAnswerLen too small for these tools)`);
        return allowed;
      },
      next: (token) => {
        state = stepToken(grammar, state, tokenText(token))!;
      },
    };
  });
}

/** One turn of a transcript: what the agent wrote and what the environment answered. */
export interface Turn {
  action: string;
  observation: string;
}

/**
 * The context an agent's turn k is decoded from: the first prompt, then every earlier turn as
 * `\n>action\n` + the environment's text. (The agent's own earlier actions are context here too;
 * they were targets in their own turn's row.)
 */
export const turnContext = (prompt: string, turns: readonly Turn[]): string =>
  prompt + turns.map((t) => `\n>${t.action}\n${t.observation}`).join('');

/** A played episode as training sees it: one decoded row per agent turn and the final reward. */
export interface EpisodeRows {
  rows: DecodedRow[];
  reward: number;
}

/**
 * Multi-turn GRPO's batch: groups[g] holds the episodes of one environment; each episode's final
 * reward gives one advantage (against its group, scaled as `scale`), shared by all its turns. A
 * group whose rewards are all equal carries no gradient and is dropped when `dropFlat`. Returns
 * every agent turn as a training group of one row (turns of one episode have different contexts).
 */
export function turnRows(groups: EpisodeRows[][], scale: 'group' | 'batch' | 'none', dropFlat: boolean): TrainRow[][] {
  const adv = advantages(
    groups.map((g) => g.map((e) => e.reward)),
    scale,
  );
  const out: TrainRow[][] = [];
  groups.forEach((g, b) => {
    if (dropFlat && g.every((e) => e.reward === g[0]!.reward)) return;
    g.forEach((e, i) => {
      for (const row of e.rows) out.push([{ ...row, adv: adv[b]![i]! }]);
    });
  });
  return out;
}
