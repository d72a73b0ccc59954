// The solver's view written as text (src/solver/served-view.ts): a prompt served in it splits back
// to exactly the solver's token ids of that prompt and to its compact rendering; an answer written in
// it maps back to its text; the rule refuses a word that is no token.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createRng } from '../core/rng.js';
import { CODE_TASK_TYPES, answerShape, type Json, type Task } from '../core/task.js';
import { canonicalHash, compactProgram, drawReference, families, renderCompact } from '../generators/index.js';
import { answerFromView, hfTokenizer, viewAnswer, viewAnswerText, viewPrompt } from '../src/solver/index.js';
import { BOS, decode, encode, EOS, joinView, splitView, TOKENS, withSep } from '../src/solver/testing.js';

const cells = families.flatMap((f) => [0, 1, 2, 3, 4].map((level) => ({ family: f.id, level })));
const PRINTABLE = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i));

/** A task of a family's reference programs, as the generators would make it (unvalidated). */
function drawn(seed: number, family: string, level: number, type: (typeof CODE_TASK_TYPES)[number]): Task {
  const { draft, outputs } = drawReference(family, createRng(seed), level, type);
  const io =
    type === 'induction'
      ? {
          message: draft.message ?? '',
          visible: draft.inputs.map((input, i) => ({ input, output: outputs[i]! })).slice(0, draft.visibleCount),
          hidden: [],
        }
      : { input: draft.inputs[0]!, output: outputs[0]! };
  return {
    ...io,
    type,
    id: 't',
    family,
    level,
    skills: draft.skills,
    program: draft.program,
    hash: canonicalHash(draft.program),
    parent: null,
    proposer: 'generator',
  } as unknown as Task;
}

describe("the solver's view as text", () => {
  it("serves a task's prompt as its solver tokens, which split back to exactly those ids and that rendering", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 31 }),
        fc.constantFrom(...cells),
        fc.constantFrom(...CODE_TASK_TYPES),
        (seed, { family, level }, type) => {
          const compact = renderCompact(drawn(seed, family, level, type));
          const { text, ids } = viewPrompt(compact);
          expect(ids).toEqual([BOS, ...withSep(encode(compact))]);
          expect(splitView(text)).toEqual(ids.slice(1));
          expect(decode(splitView(text) as number[])).toBe(compact);
          expect(text.split(' ').at(-2)).toBe('<sep>');
          expect(text.split(' ')).toHaveLength(ids.length - 1);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("writes every task's reference answer with <eos> last, and reads it back to the answer", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 31 }),
        fc.constantFrom(...cells),
        fc.constantFrom(...CODE_TASK_TYPES),
        (seed, { family, level }, type) => {
          const task = drawn(seed, family, level, type);
          const answer =
            type === 'deduction'
              ? JSON.stringify((task as { output: Json }).output)
              : type === 'abduction'
                ? JSON.stringify((task as { input: Json[] }).input)
                : compactProgram(task.program); // one line, as the compact rendering writes programs
          const written = viewAnswer(answerShape(task), answer);
          expect(written.endsWith(' <eos>')).toBe(true);
          expect(answerFromView(answerShape(task), viewAnswerText(written) as string)).toBe(answer);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('round-trips every literal answer and any printable text', () => {
    const value: fc.Arbitrary<Json> = fc.letrec((tie) => ({
      v: fc.oneof(
        { depthSize: 'small' },
        fc.integer(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.boolean(),
        fc.constant(null),
        fc.string({ unit: fc.constantFrom(...PRINTABLE) }),
        fc.array(tie('v'), { maxLength: 3 }),
        fc.dictionary(fc.string({ maxLength: 4 }), tie('v'), { maxKeys: 2 }),
      ),
    })).v as fc.Arbitrary<Json>;
    fc.assert(
      fc.property(value, (v) => {
        const text = JSON.stringify(v);
        if (/[^\x20-\x7e]/.test(text)) return; // the solver writes only printable ASCII
        expect(answerFromView('literal', viewAnswerText(viewAnswer('literal', text)) as string)).toBe(text);
      }),
    );
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...PRINTABLE, 'true', '=>', '===') }), (s) => {
        expect(viewAnswerText(joinView(encode(s)))).toBe(s);
      }),
    );
  });

  it('writes the space character as ␣ and reads any whitespace between tokens as one separator', () => {
    expect(joinView(encode('"a b"'))).toBe('" a ␣ b "');
    expect(viewAnswerText(' "\ta  ␣\n b " ')).toBe('"a b"');
  });

  it('drops <eos> and what follows, and any other special', () => {
    expect(viewAnswerText('<bos> 4 <sep> 2 <eos> 9 9')).toBe('42');
    expect(viewAnswerText('true <pad>')).toBe('true');
    expect(viewAnswerText('')).toBe('');
  });

  it('refuses a word that is no token, naming it', () => {
    expect(viewAnswerText('1, 2')).toEqual({
      error: expect.stringMatching(/^"1," is not a token of the solver's view words-signed/),
    });
    expect(viewAnswerText('é')).toHaveProperty('error');
    expect(splitView('<unk>')).toHaveProperty('error');
  });

  it("states the vocabulary as a tokenizers WordLevel file: each view token at the solver's id", () => {
    const tok = hfTokenizer() as {
      model: { type: string; vocab: Record<string, number>; unk_token: string };
      added_tokens: { id: number; content: string; special: boolean }[];
      pre_tokenizer: { type: string };
    };
    expect(tok.model.type).toBe('WordLevel');
    expect(Object.keys(tok.model.vocab)).toHaveLength(TOKENS.length);
    expect(tok.added_tokens.map((t) => [t.id, t.content, t.special])).toEqual([
      [0, '<pad>', true],
      [1, '<bos>', true],
      [2, '<sep>', true],
      [3, '<eos>', true],
    ]);
    expect(tok.model.vocab['␣']).toBe(encode(' ')[0]);
    expect(tok.model.vocab['===']).toBe(encode('===')[0]);
    expect(tok.model.vocab[tok.model.unk_token]).toBe(encode('?')[0]);
    expect(tok.model.vocab['<eos>']).toBe(EOS);
    expect(tok.pre_tokenizer.type).toBe('WhitespaceSplit');
  });
});
