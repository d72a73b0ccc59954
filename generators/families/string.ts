// Strings: length, concatenation, indexing, slicing, case, reversal, search and replacement.
import {
  bin,
  cond,
  forOf,
  gen,
  let_,
  lit,
  meth,
  newCtx,
  prods,
  prop,
  ret,
  set,
  v,
  type Param,
  type Stmt,
} from '../grammar/index.js';
import { defineFamily, skill, type Candidate } from '../kit.js';
import { drawSpan, ranges, type Level } from '../levels.js';
import { knob, ladder } from '../ladder.js';
import type { Rng } from '../../core/rng.js';

const F = 'str';

export const strSkills = [
  skill(F, 'length', 'string length', 'Counts the characters of a string.', [], 0),
  skill(F, 'concat', 'concatenation', 'Joins strings with +.', [], 0),
  skill(F, 'case', 'upper case', 'Converts letters with toUpperCase.', ['str.concat'], 0),
  skill(F, 'index', 'character access', 'Reads one character with charAt (empty past the end).', ['str.length'], 1),
  skill(F, 'slice', 'slicing', 'Takes a prefix or suffix with slice.', ['str.index'], 1),
  skill(F, 'reverse', 'reversal', 'Reverses a string via split/reverse/join.', ['str.slice'], 2),
  skill(F, 'repeat', 'repetition', 'Repeats a string k times.', ['str.concat'], 2),
  skill(F, 'search', 'search', 'Finds a character with includes / indexOf (-1 when absent).', ['str.index'], 2),
  skill(F, 'replace', 'replacement', 'Replaces every occurrence of a character with replaceAll.', ['str.search'], 3),
  skill(F, 'convert', 'number to string', 'Turns a number into text with String(n).', ['str.concat', 'arith.add'], 3),
  skill(
    F,
    'build',
    'building strings in a loop',
    'Builds a string character by character in a for-of loop.',
    ['str.concat', 'loop.forof', 'cond.if-else'],
    4,
  ),
];

const BASIC = prods('concat', 'slen', 'upper');
const SLICED = [...BASIC, ...prods('charAt', 'sliceFrom', 'sliceTo')];
const SEARCHED = prods('concat', 'slen', 'charAt', 'sliceFrom', 'sliceTo', 'srev', 'repeat', 'includes', 'indexOf');
const BUILT = prods(
  'concat',
  'slen',
  'charAt',
  'sliceFrom',
  'sliceTo',
  'srev',
  'includes',
  'indexOf',
  'replace',
  'add',
  'sub',
  'ifStr',
);

const LEVELS = [
  {
    params: { str: 1 },
    exprs: { body: { ops: BASIC, returns: ['str', 'int'], depth: 1, leaf: 1, ints: [1, 9] } },
    inputs: ranges([0, 9], [1, 4], [1, 4], 'abcde'),
  },
  // (a second string parameter is added on a coin flip)
  {
    params: { str: [1, 2] },
    exprs: { body: { ops: SLICED, returns: ['str', 'str', 'int'], depth: 2, leaf: 0.3, ints: [1, 9] } },
    inputs: ranges([0, 9], [1, 4], [1, 5], 'abcde'),
  },
  {
    params: { str: 2 },
    exprs: { body: { ops: SEARCHED, returns: ['str', 'int', 'bool'], depth: [2, 3], leaf: 0.3, ints: [1, 9] } },
    inputs: ranges([0, 9], [1, 4], [1, 6], 'abcdefgh'),
  },
  {
    params: { str: 2, int: 1 },
    exprs: {
      body: {
        ops: [
          ...SLICED,
          ...prods(
            'srev',
            'repeat',
            'includes',
            'indexOf',
            'replace',
            'strOfInt',
            'add',
            'sub',
            'mul',
            'ifStr',
            'lt',
            'eq',
          ),
        ],
        returns: ['str', 'int', 'bool'],
        depth: 3,
        leaf: 0.3,
        ints: [1, 9],
      },
    },
    inputs: ranges([0, 9], [1, 4], [1, 6], 'abcdefgh'),
  },
  {
    shape: 'r = ""; for (const c of s) r = guard ? r + body : c + r, r + "x" or r (loop, cond); return result',
    params: { str: 2 },
    exprs: {
      body: { ops: BUILT, returns: ['str'], depth: 1, leaf: 0.3, ints: [1, 9] },
      result: { ops: BUILT, returns: ['str', 'int'], depth: 1, leaf: 0.3, ints: [1, 9] },
    },
    inputs: ranges([0, 9], [1, 4], [1, 7], 'abcdefgh'),
  },
] satisfies Level[];

/** str's levels (exported for generators/label.ts, which reads a program's level from them). */
export const LADDER = ladder(LEVELS, [
  knob.depth('body', { by: 1, every: 6, max: 40, why: 'deeper expressions would near the 16,000-character limit' }),
  knob.depth('result', { by: 1, every: 6, max: 40, why: 'deeper expressions would near the 16,000-character limit' }),
  knob.strings({
    by: 4,
    max: 1000,
    why: 'a string input and what is built from it would make prompts of many thousands of characters',
  }),
]);

function candidate(rng: Rng, level: number): Candidate {
  const { params, exprs } = LADDER.at(level);
  const { body } = exprs;
  const ps: Param[] = [{ name: 's', type: 'str' }];
  if (typeof params.str === 'number' ? params.str === 2 : rng.bool()) ps.push({ name: 't', type: 'str' });
  if ('int' in params) ps.push({ name: 'n', type: 'int' });
  const ctx = newCtx(rng, body.ops, ps, body);
  const names = ps.map((p) => p.name);
  const out = rng.pick(body.returns);
  const { result } = exprs;
  if (!result) {
    return {
      prog: { params: ps, body: [ret(gen(ctx, out, drawSpan(rng, body.depth), true, names))] },
      skills: ctx.skills,
    };
  }
  // r starts empty; each character c is appended (through body) or prepended, or r kept, under a guard.
  ctx.scope.push({ name: 'c', type: 'str' });
  const guard = rng.pick([
    () => bin(rng.pick(['<', '>', '==='] as const), v('c'), lit(rng.pick(['b', 'c', 'd', 'e']))),
    () => meth(v('t'), 'includes', v('c')),
    () => bin('===', bin('%', prop(v('r'), 'length'), lit(2)), lit(0)),
  ])();
  const piece = gen(ctx, out, drawSpan(rng, body.depth), false, ['c']);
  const other = rng.pick([bin('+', v('c'), v('r')), bin('+', v('r'), lit(rng.pick(['x', 'y', '-']))), v('r')]);
  const loop: Stmt = forOf('c', v('s'), [set('r', '=', cond(guard, bin('+', v('r'), piece), other))]);
  ctx.scope.push({ name: 'r', type: 'str' });
  const tail = gen(ctx, rng.pick(result.returns), drawSpan(rng, result.depth), false, ['r']);
  const skills = new Set([...ctx.skills, 'str.build', 'str.concat', 'loop.forof', 'cond.ternary']);
  return { prog: { params: ps, body: [let_('r', lit('')), loop, ret(tail)] }, skills };
}

export const str = defineFamily({
  id: F,
  name: 'strings',
  description: 'String length, concatenation, indexing, slicing, case, reversal, repetition, search and replacement.',
  skills: strSkills,
  ladder: LADDER,
  candidate,
});
