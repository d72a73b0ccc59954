// An answer shape's grammar and allowed tokens, whichever kind of shape it is: a working's template
// (work-grammar.ts) or any other (answer-grammar.ts). Decoding, supervision and the views ask here.
import type { AnswerShape } from '../../core/task.js';
import { isWorkShape } from '../../core/working.js';
import { shapeGrammar, shapeTokens, type Grammar } from './answer-grammar.js';
import { workGrammar, workTokens } from './work-grammar.js';

/** The grammar of an answer shape: 'program', 'literal' (any JSON literal), a typed literal, or a working. */
export const grammarFor = (kind: AnswerShape): Grammar => (isWorkShape(kind) ? workGrammar(kind) : shapeGrammar(kind));

/** The tokens allowed after `state` with `tokensLeft` tokens left (1 = allowed), cached. */
export const allowedTokens = (kind: AnswerShape, state: unknown, tokensLeft: number): Uint8Array =>
  isWorkShape(kind) ? workTokens(kind, state, tokensLeft) : shapeTokens(kind, state, tokensLeft);
