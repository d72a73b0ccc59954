// Supervised steps on given answers (bench:ceiling's ceiling; tests): the cross-entropy of each
// answer written in its prompt's answer grammar, through the same model, optimiser and backend as
// an update. Runs never call it; testing.ts is its door.
import { answerIds, stepToken, tokenMask } from './answer-grammar.js';
import { actionGrammar, type ActionTool } from './episodes.js';
import { allowedTokens, grammarFor } from './grammars.js';
import { answerTokenIds } from './answer-view.js';
import { stateOf } from './policy.js';
import { grammarOf, promptIds } from './sample.js';
import type { PolicyState } from './state.js';
import { EOS, tokenText } from './tokenizer.js';
import type { TrainRow } from './train-step.js';
import type { PolicyPrompt, TrainablePolicy, TrainStats } from './types.js';
import type { AnswerShape } from '../../core/task.js';
import { iterationGrads } from './update.js';

/**
 * One supervised step: the cross-entropy of the given answers, each written in its prompt's answer
 * grammar (answerTokenIds, the tokens decoding would take), through the same model, optimiser and
 * backend as update(). For bench:ceiling's ceiling and for warm starts.
 */
export async function supervise(
  policy: TrainablePolicy,
  prompts: PolicyPrompt[],
  answers: string[],
): Promise<TrainStats> {
  const s = stateOf(policy);
  if (prompts.length !== answers.length)
    throw new Error(`supervise(): ${prompts.length} prompts, ${answers.length} answers`);
  return shownStep(
    s,
    prompts.map((p, i) => shownRow(s, p, answers[i]!)),
  );
}

/**
 * One supervised step on given actions (cloning a demonstrator, bench:agentic-clone): the
 * cross-entropy of each action, written in its context's action grammar (episodes.ts) as decoding
 * would write it, given the transcript so far, cut from the left as decodeActions cuts it.
 */
export async function superviseActions(
  policy: TrainablePolicy,
  prompts: ActionContext[],
  actions: string[],
): Promise<TrainStats> {
  const s = stateOf(policy);
  if (prompts.length !== actions.length)
    throw new Error(`superviseActions(): ${prompts.length} contexts, ${actions.length} actions`);
  return shownStep(
    s,
    prompts.map((p, i) => actionRow(s, p, actions[i]!)),
  );
}

async function shownStep(s: PolicyState, rows: TrainRow[]): Promise<TrainStats> {
  const { grads, stats } = await iterationGrads(
    s,
    rows.map((r) => [r]),
    1,
    true,
  );
  const r = s.opt.apply(grads);
  const gradNorm = (await r.gradNorm.data())[0]!;
  r.gradNorm.dispose();
  return {
    ...stats,
    meanAbsAdvantage: 0,
    tokens: rows.reduce((a, row) => a + row.answer.length, 0),
    groups: rows.length,
    lr: r.lr,
    gradNorm,
  };
}

/**
 * The tokens the built-in solver reads a prompt in and writes an answer in (its answer grammar's,
 * <eos> last): what supervise() trains on, and what a peer model is given (bench:ceiling).
 */
export function answerTokens(
  policy: TrainablePolicy,
  p: PolicyPrompt,
  answer: string,
): { prompt: number[]; answer: number[] } {
  return tokensOf(stateOf(policy), p, answer);
}

function tokensOf(s: PolicyState, p: PolicyPrompt, answer: string): { prompt: number[]; answer: number[] } {
  const shape = grammarOf(s, p);
  const ids = answerTokenIds(shape, answer);
  const maxA = s.cfg.model.maxAnswerLen;
  if (!ids || ids.length - 1 > maxA) throw new Error(`"${answer}" is not a ${shape} answer of at most ${maxA} tokens`);
  return { prompt: promptIds(s, p.text), answer: ids };
}

/** The grammar the policy writes a prompt's answers in (a working's shape where it writes one; sample.ts grammarOf). */
export function answerGrammar(policy: TrainablePolicy, p: PolicyPrompt): AnswerShape {
  return grammarOf(stateOf(policy), p);
}

type ActionContext = { text: string; tools: readonly ActionTool[] };

/** The tokens the built-in solver reads a context in and writes an action in (<eos> last): what a peer is given (bench:agentic-clone). */
export function actionTokens(
  policy: TrainablePolicy,
  p: ActionContext,
  action: string,
): { prompt: number[]; answer: number[] } {
  const s = stateOf(policy);
  return { prompt: promptIds(s, p.text), answer: actionIds(s, p, action) };
}

function actionIds(s: PolicyState, p: ActionContext, action: string): number[] {
  const ids = answerIds(actionGrammar(p.tools), action);
  const maxA = s.cfg.model.maxAnswerLen;
  if (!ids || ids.length - 1 > maxA) throw new Error(`"${action}" is not an action of these tools in ${maxA} tokens`);
  return ids;
}

/** A given action as a training row: its tokens in its tools' action grammar and the masks decoding would have had. */
function actionRow(s: PolicyState, p: ActionContext, action: string): TrainRow {
  const g = actionGrammar(p.tools);
  const ids = actionIds(s, p, action);
  const maxA = s.cfg.model.maxAnswerLen;
  const allowed: Uint8Array[] = [];
  let state = g.start();
  ids.forEach((id, k) => {
    allowed.push(tokenMask(g, state, maxA - k));
    if (id !== EOS) state = stepToken(g, state, tokenText(id))!;
  });
  return { prompt: promptIds(s, p.text), answer: ids, oldLogp: new Float32Array(ids.length), allowed, adv: 1 };
}

/** A given answer as a training row: its tokens and the masks decoding would have had. */
function shownRow(s: PolicyState, p: PolicyPrompt, answer: string): TrainRow {
  const { prompt, answer: ids } = tokensOf(s, p, answer);
  const shape = grammarOf(s, p);
  const g = grammarFor(shape);
  const allowed: Uint8Array[] = [];
  let state = g.start();
  ids.forEach((id, k) => {
    allowed.push(allowedTokens(shape, state, s.cfg.model.maxAnswerLen - k));
    if (id !== EOS) state = stepToken(g, state, tokenText(id))!;
  });
  return { prompt, answer: ids, oldLogp: new Float32Array(ids.length), allowed, adv: 1 };
}
