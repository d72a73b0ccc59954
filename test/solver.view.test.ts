// The solver's view of a task (docs/solver-view.md): the compact rendering, values first, in the
// solver's tokens. It re-encodes the task losslessly and evaluates nothing: every view maps back to
// its program and values; the tokenizer round-trips; an answer has one way to be written in tokens.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createRng } from '../core/rng.js';
import { CODE_TASK_TYPES, type Json } from '../core/task.js';
import {
  canonicalHash,
  compactProgram,
  drawReference,
  families,
  parseCompact,
  renderCompact,
} from '../generators/index.js';
import { answerFromView, answerIds, answerInView, grammarFor } from '../src/solver/index.js';
import { allowedTokens, decode, encode, EOS, stepToken, TOKENS, tokenText } from '../src/solver/testing.js';

const PRINTABLE = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i));
const cells = families.flatMap((f) => [0, 1, 2, 3, 4].map((level) => ({ family: f.id, level })));

describe('the solver view', () => {
  it('maps every deduction and abduction back to its values and program, through its tokens', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 31 }),
        fc.constantFrom(...cells),
        fc.constantFrom(...CODE_TASK_TYPES),
        (seed, { family, level }, type) => {
          const { draft, outputs } = drawReference(family, createRng(seed), level, type);
          const task =
            type === 'induction'
              ? {
                  type,
                  message: draft.message ?? '',
                  visible: draft.inputs
                    .map((input, i) => ({ input, output: outputs[i]! }))
                    .slice(0, draft.visibleCount),
                  hidden: [],
                }
              : { type, input: draft.inputs[0]!, output: outputs[0]! };
          const text = renderCompact({
            ...task,
            id: 't',
            family,
            level,
            skills: draft.skills,
            program: draft.program,
            hash: canonicalHash(draft.program),
            parent: null,
            proposer: 'generator',
          } as Parameters<typeof renderCompact>[0]);
          const ids = encode(text);
          expect(decode(ids)).toBe(text);
          if (type === 'induction') return;
          const back = parseCompact(text);
          expect(back).not.toBeNull();
          expect(back!.type).toBe(type);
          expect(back!.program).toBe(compactProgram(draft.program));
          expect(back!.values).toEqual(type === 'deduction' ? draft.inputs[0] : [outputs[0]]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('writes each boolean, keyword and operator as one token, so values sit at fixed places', () => {
    const view = (args: string) => encode(`D:${args}@(p,q,r)=>p&&r`).map(tokenText);
    expect(view('true,false,true')).toEqual([
      'D',
      ':',
      'true',
      ',',
      'false',
      ',',
      'true',
      '@',
      '(',
      'p',
      ',',
      'q',
      ',',
      'r',
      ')',
      '=>',
      'p',
      '&&',
      'r',
    ]);
    expect(view('false,false,false').indexOf('@')).toBe(view('true,true,true').indexOf('@'));
    // a word inside a longer identifier stays characters
    expect(encode('trueish').map(tokenText)).toEqual([...'trueish']);
  });

  it('round-trips any printable text', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(...PRINTABLE, 'true', 'null', '=>', '===', 'return') }),
        (s) => decode(encode(s)) === s,
      ),
    );
  });

  it('has one way to write a literal answer: answerIds is the only token path the masks allow that spells it', () => {
    const plain = fc.string({
      unit: fc.constantFrom(...'ab tru-e0129=>'.split(''), 'true', 'null'),
      maxLength: 8,
    });
    const decimal = fc
      .tuple(fc.integer({ min: -999, max: 999 }), fc.integer({ min: 0, max: 9999 }))
      .map(([i, f]) => Number(`${i}.${f}`));
    const value: fc.Arbitrary<Json> = fc.letrec((tie) => ({
      v: fc.oneof(
        { depthSize: 'small' },
        fc.integer({ min: -99_999, max: 99_999 }),
        decimal,
        fc.boolean(),
        fc.constant(null),
        plain,
        fc.array(tie('v'), { maxLength: 3 }),
        fc.dictionary(plain, tie('v'), { maxKeys: 2 }),
      ),
    })).v as fc.Arbitrary<Json>;
    const g = grammarFor('literal');
    /** Every complete token path (ids, <eos> last) from `state` that the masks allow and that spells text[at..]. */
    const paths = (text: string, state: unknown, at: number): number[][] => {
      const mask = allowedTokens('literal', state, 1000);
      if (at === text.length) return mask[EOS] ? [[EOS]] : [];
      return [...mask.keys()]
        .filter((t) => t >= 4 && mask[t] && text.startsWith(TOKENS[t]!, at))
        .flatMap((t) =>
          paths(text, stepToken(g, state, tokenText(t))!, at + tokenText(t).length).map((p) => [t, ...p]),
        );
    };
    fc.assert(
      fc.property(value, (v) => {
        const json = JSON.stringify(v);
        const text = answerInView('literal', json);
        const ids = answerIds(g, text);
        expect(ids).not.toBeNull();
        expect(decode(ids!)).toBe(text);
        expect(answerFromView('literal', text)).toBe(json);
        expect(paths(text, g.start(), 0)).toEqual([ids]);
      }),
      { numRuns: 300 },
    );
  });

  it("writes a literal's numbers with their sign and at least two digits, and leaves strings and programs as they are", () => {
    expect(answerInView('int', '7')).toBe('+07');
    expect(answerInView('int', '-12')).toBe('-12');
    expect(answerInView('literal', '[0,"a1",-0.5,{"7":100}]')).toBe('[+00,"a1",-00.5,{"7":+100}]');
    expect(answerInView('program', 'a=>a+1')).toBe('a=>a+1');
    expect(answerFromView('program', 'a=>a+01')).toBe('a=>a+01');
    expect(answerInView('literal', '["a\\"1",2]')).toBe('["a\\"1",+02]');
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const json = JSON.stringify(v);
        expect(answerFromView('literal', answerInView('literal', json))).toBe(json);
      }),
    );
    fc.assert(
      fc.property(fc.integer({ min: -1e6, max: 1e6 }), (n) => {
        const written = answerInView('int', String(n));
        expect(written).toMatch(/^[+-]\d\d+$/);
        expect(answerFromView('int', written)).toBe(String(n));
      }),
    );
  });
});
