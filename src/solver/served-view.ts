// The solver's view written as text, for a model trained outside cogen (`cogen serve` with
// `view: "compact"`, `GET /v1/tokenizer`, `cogen export --view compact`; docs/train-your-own-model.md,
// "The solver's view over HTTP"). This file is the one home of the rule:
//
//   a sequence of token ids is written as each token's text joined by one ASCII space;
//   the space character's token is written `␣` (U+2423), a special by its name (`<sep>`, `<eos>`);
//   so splitting the text on whitespace gives back every token, and nothing else.
//
// A prompt is its tokens (tokenizer.ts `encode` of the compact rendering, generators/render.ts) with
// `<sep>` written before the last of them; a tokenizer made from `hfTokenizer()` prepends `<bos>`. An
// answer is its tokens followed by `<eos>`. Why `<sep>` before the last token and not after it: the
// built-in solver adds `<sep>`'s embedding to the prompt's last token, so that the first answer token
// is read at the last name of the program, which finds its value in one step (docs/solver-view.md); a
// stock causal LM cannot add embeddings, and with `<sep>` last it must find the last name first and
// then its value. A plain GPT-2 of the solver's size on logic level 0 fitted ~0.80 of its training set
// that way and reached 1.00 held out with `<sep>` before the last token (docs/train-your-own-model.md,
// "Why <sep> sits before the last token"). Dropping `<sep>` gives the tokens back. The prompt is not truncated: the
// built-in solver keeps its last `solver.model.maxPromptLen` tokens, another model has its own context.
import type { AnswerShape } from '../../core/task.js';
import { answerInView, answerTokenIds } from './answer-view.js';
import { BOS, EOS, SEP, SPECIAL_NAMES, TOKENS, VIEW, encode } from './tokenizer.js';
import { clip } from '../../core/text.js';

/** What joins two tokens, and how the space character's token is written. */
export const VIEW_SEPARATOR = ' ';
export const SPACE_TOKEN = '\u2423';

/** The rule as a response states it, so that a client need not hard-code it. */
export const VIEW_RULE = {
  name: VIEW,
  separator: VIEW_SEPARATOR,
  space: SPACE_TOKEN,
  prompt_sep: SPECIAL_NAMES[SEP]!,
  prompt_sep_at: 'before the last token',
  answer_end: SPECIAL_NAMES[EOS]!,
} as const;

/** A token's text in the view: a special's name, `␣` for the space character, else its own text. */
export function viewToken(id: number): string {
  if (id < SPECIAL_NAMES.length) return SPECIAL_NAMES[id]!;
  const text = TOKENS[id];
  if (text === undefined)
    throw new RangeError(`token id ${id} is outside the solver's vocabulary (${TOKENS.length} tokens)`);
  return text === ' ' ? SPACE_TOKEN : text;
}

/** Every token's text in the view, by id (the vocabulary of `hfTokenizer`). */
export const VIEW_TOKENS: readonly string[] = TOKENS.map((_, id) => viewToken(id));
const idOfViewToken = new Map(VIEW_TOKENS.map((t, id) => [t, id]));

/** Token ids written in the view. */
export const joinView = (ids: readonly number[]): string => ids.map(viewToken).join(VIEW_SEPARATOR);

/** The token ids of a text written in the view, or a one-line reason naming the first word that is no token. */
export function splitView(text: string): number[] | { error: string } {
  const ids: number[] = [];
  for (const word of text.split(/\s+/)) {
    if (word === '') continue;
    const id = idOfViewToken.get(word);
    if (id === undefined)
      return {
        error: `${shown(word)} is not a token of the solver's view ${VIEW} (tokens are joined by one space, the space itself written ${SPACE_TOKEN}; GET /v1/tokenizer lists them)`,
      };
    ids.push(id);
  }
  return ids;
}

/** A task's prompt in the view (its compact rendering's tokens, `<sep>` before the last), and the ids a tokenizer from `hfTokenizer` reads it as (`<bos>` first). */
export function viewPrompt(compact: string): { text: string; ids: number[] } {
  const tokens = withSep(encode(compact));
  return { text: joinView(tokens), ids: [BOS, ...tokens] };
}

/**
 * The text of an answer written in the view: the tokens up to the first `<eos>` (it and what follows
 * are dropped), other specials dropped, the rest's texts concatenated. A word that is no token is refused.
 */
export function viewAnswerText(completion: string): string | { error: string } {
  const ids = splitView(completion);
  if (!Array.isArray(ids)) return ids;
  const end = ids.indexOf(EOS);
  return (end < 0 ? ids : ids.slice(0, end)).map((id) => TOKENS[id]!).join('');
}

/**
 * An answer written in the view, `<eos>` last: the tokens supervised training takes (answer-grammar.ts
 * `answerTokenIds` under the answer's shape), or where that grammar cannot write it, its plain encoding.
 */
export function viewAnswer(shape: AnswerShape, answer: string): string {
  return joinView(answerTokenIds(shape, answer) ?? [...encode(answerInView(shape, answer)), EOS]);
}

/**
 * The vocabulary as a Hugging Face `tokenizers` file (tokenizer.json): a WordLevel model from each
 * view token to its solver id, split on whitespace, `<bos>` prepended, no decoder (so `decode` joins
 * tokens by one space: the view again). An unknown word reads as `?`, the character the solver writes
 * for one it has no token for (tokenizer.ts `charId`); text written by the rule above has none.
 */
export function hfTokenizer(): object {
  const special = (content: string, id: number) => ({
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  const bos = SPECIAL_NAMES[BOS]!;
  const piece = (p: 'bos' | 'A' | 'B') =>
    p === 'bos' ? { SpecialToken: { id: bos, type_id: 0 } } : { Sequence: { id: p, type_id: 0 } };
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL_NAMES.map(special),
    normalizer: null,
    pre_tokenizer: { type: 'WhitespaceSplit' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [piece('bos'), piece('A')],
      pair: [piece('bos'), piece('A'), piece('B')],
      special_tokens: { [bos]: { id: bos, ids: [BOS], tokens: [bos] } },
    },
    decoder: null,
    model: { type: 'WordLevel', vocab: Object.fromEntries(VIEW_TOKENS.map((t, id) => [t, id])), unk_token: '?' },
  };
}

/** `<sep>` inserted before the last token (an empty prompt is `<sep>` alone). */
export const withSep = (ids: readonly number[]): number[] => [...ids.slice(0, -1), SEP, ...ids.slice(-1)];

const shown = (s: string): string => JSON.stringify(clip(s, 40));
