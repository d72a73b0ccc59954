// Arrays: map, filter, reduce, some/every, includes, slice/concat, chained; lambda bodies come from
// the arithmetic and comparison grammar, and from level 3 use ternaries, modulo and an extra
// integer parameter captured by the lambdas.
//
// Knobs per level (params, expression depth, methods, lambda depth, input arrays):
//   0: 1 array param, one map or filter whose lambda has one operator; arrays of 1-3 ints 0-9
//   1: 1 array param, depth 2 (chains of two methods), adds reduce; lambdas of depth 1; 2-4 ints 0-9
//   2: 1-2 array params, depth 3, adds some/every, includes, slice, concat, length; lambdas of depth 2; 2-5 ints 0-20
//   3: 1 array + 1 integer param k, depth 3, lambdas with ternaries, % and floor division (cond, arith) capturing k; 2-6 ints -10..20
//   4: 1-2 arrays + k, depth 4, adds sorting and reversal (sort); 3-7 ints -20..20
import { countNodes, gen, newCtx, prods, ret, type Param } from '../grammar/index.js';
import { defineFamily, skill, type Candidate } from '../kit.js';
import { ranges } from '../levels.js';
import type { Rng } from '../../core/rng.js';

const F = 'array';

export const arraySkills = [
  skill(F, 'length', 'array length', 'Counts the elements of an array.', [], 0),
  skill(F, 'map', 'map', 'Transforms every element with a function.', ['array.length', 'arith.add'], 0),
  skill(F, 'filter', 'filter', 'Keeps the elements a predicate accepts.', ['array.length', 'logic.compare'], 0),
  skill(F, 'reduce', 'reduce', 'Folds an array into one value with an accumulator.', ['array.map'], 1),
  skill(F, 'chain', 'method chains', 'Chains several array methods, each feeding the next.', ['array.map', 'array.filter'], 1),
  skill(F, 'some', 'some / every', 'Tests whether some or every element satisfies a predicate.', ['array.filter', 'logic.or'], 2),
  skill(F, 'includes', 'membership', 'Tests membership with includes.', ['array.length'], 2),
  skill(F, 'slice', 'slice and concat', 'Drops a prefix with slice, joins arrays with concat.', ['array.length'], 2),
];

const OPS = [
  prods('map', 'filter', 'add', 'sub', 'mul', 'gt', 'lt'),
  prods('map', 'filter', 'sum', 'add', 'sub', 'mul', 'gt', 'lt', 'eq'),
  prods('map', 'filter', 'sum', 'some', 'every', 'aincl', 'aslice', 'aconcat', 'alen', 'add', 'sub', 'mul', 'gt', 'lt', 'eq', 'ne', 'mod'),
  prods('map', 'filter', 'sum', 'some', 'aincl', 'aslice', 'alen', 'add', 'sub', 'mul', 'mod', 'div', 'gt', 'lt', 'eq', 'ifInt', 'even'),
  prods('map', 'filter', 'sum', 'some', 'every', 'aslice', 'aconcat', 'alen', 'add', 'sub', 'mul', 'mod', 'gt', 'lt', 'ge', 'ifInt', 'sortAsc', 'sortDesc', 'arev', 'and', 'or'),
];
const RANGES = [
  ranges([0, 9], [1, 3]),
  ranges([0, 9], [2, 4]),
  ranges([0, 20], [2, 5]),
  ranges([-10, 20], [2, 6]),
  ranges([-20, 20], [3, 7]),
];
const OUT: string[][] = [['int[]'], ['int[]', 'int[]', 'int'], ['int[]', 'int', 'bool'], ['int[]', 'int', 'bool'], ['int[]', 'int']];
const DEPTH = [2, 2, 3, 4, 5];

/** The methods that count towards a chain (array.chain). */
const CHAINED = new Set(['map', 'filter', 'reduce', 'some', 'every', 'slice', 'concat', 'sort']);

function candidate(rng: Rng, level: number): Candidate {
  const ps: Param[] = [{ name: 'xs', type: 'int[]' }];
  if ((level === 2 || level === 4) && rng.bool(0.3)) ps.push({ name: 'ys', type: 'int[]' });
  if (level >= 3) ps.push({ name: 'k', type: 'int' });
  const ctx = newCtx(rng, OPS[level]!, ps, { leaf: level === 0 ? 1 : level === 1 ? 0.15 : 0.3, ints: level < 2 ? [1, 9] : [1, 12] });
  const out = rng.pick(OUT[level]!);
  const depth = DEPTH[level]!;
  const body = gen(ctx, out, depth, true, ['xs']);
  const skills = new Set(ctx.skills);
  if (countNodes([body], (n) => n.kind === 'meth' && CHAINED.has(n.method)) >= 2) skills.add('array.chain');
  return { prog: { params: ps, body: [ret(body)] }, skills, inputTypes: ps.map((p) => (p.name === 'k' ? 'int' : p.type)) };
}

export const array = defineFamily({
  id: F,
  name: 'arrays',
  description: 'map, filter, reduce, some/every, includes, slice/concat over integer arrays, with arithmetic and comparison lambdas.',
  skills: arraySkills,
  knobs: [
    '1 array param; one map or filter whose lambda has one operator; 1-3 ints 0-9',
    '1 array; depth 2 (two chained methods); adds reduce; lambdas of depth 1; 2-4 ints 0-9',
    '1-2 arrays; depth 3; adds some/every, includes, slice, concat, length; lambdas of depth 2; 2-5 ints 0-20',
    '1 array + integer k; depth 3; lambdas with ternaries, %, floor division (cond, arith) capturing k; 2-6 ints -10..20',
    '1-2 arrays + k; depth 4; adds sort and reverse (sort); 3-7 ints -20..20',
  ],
  ranges: (level) => RANGES[level]!,
  candidate,
});
