// Strings: length, concatenation, indexing, slicing, case, reversal, repetition, search and
// replacement; from level 3 composed with integer arithmetic and ternaries, at level 4 strings
// built character by character in a loop.
//
// Knobs per level (params, expression depth, operator set, input strings):
//   0: 1 string param, exactly one of + literal, .length, .toUpperCase(); strings of 1-4 letters a-e
//   1: 1-2 string params, depth 2, adds .charAt(k) and .slice(k); 1-5 letters a-e
//   2: 2 string params, depth 2-3, adds reverse, .repeat, .includes, .indexOf; 1-6 letters a-h
//   3: 2 string params + 1 integer, depth 3, adds .replaceAll, String(n), arithmetic on lengths (arith) and ternaries (cond); 1-6 letters
//   4: a for-of loop over the characters building a string with a guarded choice (loop, cond), then a depth-2 expression; 1-7 letters
import { bin, cond, forOf, gen, let_, lit, meth, newCtx, prods, prop, ret, set, v, type Param, type Stmt } from '../grammar/index.js';
import { defineFamily, ranges, skill, type Candidate } from '../kit.js';
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
  skill(F, 'build', 'building strings in a loop', 'Builds a string character by character in a for-of loop.', ['str.concat', 'loop.forof', 'cond.if-else'], 4),
];

const OPS = [
  prods('concat', 'slen', 'upper'),
  prods('concat', 'slen', 'upper', 'charAt', 'sliceFrom', 'sliceTo'),
  prods('concat', 'slen', 'charAt', 'sliceFrom', 'sliceTo', 'srev', 'repeat', 'includes', 'indexOf'),
  prods('concat', 'slen', 'upper', 'charAt', 'sliceFrom', 'sliceTo', 'srev', 'repeat', 'includes', 'indexOf', 'replace', 'strOfInt', 'add', 'sub', 'mul', 'ifStr', 'lt', 'eq'),
  prods('concat', 'slen', 'charAt', 'sliceFrom', 'sliceTo', 'srev', 'includes', 'indexOf', 'replace', 'add', 'sub', 'ifStr'),
];
const RANGES = [
  ranges([0, 9], [1, 4], [1, 4], 'abcde'),
  ranges([0, 9], [1, 4], [1, 5], 'abcde'),
  ranges([0, 9], [1, 4], [1, 6], 'abcdefgh'),
  ranges([0, 9], [1, 4], [1, 6], 'abcdefgh'),
  ranges([0, 9], [1, 4], [1, 7], 'abcdefgh'),
];
const OUT: string[][] = [['str', 'int'], ['str', 'str', 'int'], ['str', 'int', 'bool'], ['str', 'int', 'bool'], ['str']];
const DEPTH = [1, 2, 3, 3, 2];

function candidate(rng: Rng, level: number): Candidate {
  const ps: Param[] = [{ name: 's', type: 'str' }];
  if (level >= 2 || (level === 1 && rng.bool())) ps.push({ name: 't', type: 'str' });
  if (level === 3) ps.push({ name: 'n', type: 'int' });
  const ctx = newCtx(rng, OPS[level]!, ps, { leaf: level === 0 ? 1 : 0.3, ints: [1, 9] });
  const names = ps.map((p) => p.name);
  const out = rng.pick(OUT[level]!);
  if (level < 4) {
    const depth = level === 2 ? rng.int(2, 3) : DEPTH[level]!;
    return { prog: { params: ps, body: [ret(gen(ctx, out, depth, true, names))] }, skills: ctx.skills };
  }
  // Level 4: r starts empty; each character c is appended or prepended (or transformed) under a guard.
  const c = { name: 'c', type: 'str' };
  ctx.scope.push(c);
  const guard = rng.pick([
    () => bin(rng.pick(['<', '>', '==='] as const), v('c'), lit(rng.pick(['b', 'c', 'd', 'e']))),
    () => meth(v('t'), 'includes', v('c')),
    () => bin('===', bin('%', prop(v('r'), 'length'), lit(2)), lit(0)),
  ])();
  const piece = gen(ctx, 'str', 1, false, ['c']);
  const other = rng.pick([bin('+', v('c'), v('r')), bin('+', v('r'), lit(rng.pick(['x', 'y', '-']))), v('r')]);
  const loop: Stmt = forOf('c', v('s'), [set('r', '=', cond(guard, bin('+', v('r'), piece), other))]);
  ctx.scope.push({ name: 'r', type: 'str' });
  const tail = gen(ctx, rng.pick(['str', 'int']), 1, false, ['r']);
  const skills = new Set([...ctx.skills, 'str.build', 'str.concat', 'loop.forof', 'cond.ternary']);
  return { prog: { params: ps, body: [let_('r', lit('')), loop, ret(tail)] }, skills };
}

export const str = defineFamily({
  id: F,
  name: 'strings',
  description: 'String length, concatenation, indexing, slicing, case, reversal, repetition, search and replacement.',
  skills: strSkills,
  knobs: [
    '1 string param; exactly one of + literal, .length, .toUpperCase(); strings of 1-4 letters a-e',
    '1-2 string params; depth 2; adds .charAt(k), .slice(k); 1-5 letters a-e',
    '2 string params; depth 2-3; adds reverse, .repeat, .includes, .indexOf; 1-6 letters a-h',
    '2 strings + 1 integer; depth 3; adds .replaceAll, String(n), arithmetic on lengths (arith), ternaries (cond); 1-6 letters a-h',
    'for-of loop building a string under a guard (loop, cond), then a depth-1 expression; 1-7 letters a-h',
  ],
  ranges: (level) => RANGES[level]!,
  candidate,
});
