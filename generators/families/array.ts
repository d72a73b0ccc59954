// Arrays: map, filter, reduce and the other methods over integer arrays, with generated lambdas.
import { countNodes, gen, newCtx, P, prods, ret, type Param } from '../grammar/index.js';
import { chain, defineFamily, skill, type Candidate } from '../kit.js';
import { ranges, type Level } from '../levels.js';
import { knob, ladder } from '../ladder.js';
import type { Rng } from '../../core/rng.js';

const F = 'array';

export const arraySkills = [
  skill(F, 'length', 'array length', 'Counts the elements of an array.', [], 0),
  skill(F, 'map', 'map', 'Transforms every element with a function.', ['array.length', 'arith.add'], 0),
  skill(F, 'filter', 'filter', 'Keeps the elements a predicate accepts.', ['array.length', 'logic.compare'], 0),
  skill(F, 'reduce', 'reduce', 'Folds an array into one value with an accumulator.', ['array.map'], 1),
  skill(
    F,
    'chain',
    'method chains',
    'Chains several array methods, each feeding the next.',
    ['array.map', 'array.filter'],
    2,
  ),
  skill(
    F,
    'some',
    'some / every',
    'Tests whether some or every element satisfies a predicate.',
    ['array.filter', 'logic.or'],
    2,
  ),
  skill(F, 'includes', 'membership', 'Tests membership with includes.', ['array.length'], 2),
  skill(F, 'slice', 'slice and concat', 'Drops a prefix with slice, joins arrays with concat.', ['array.length'], 2),
];

const LEVELS = [
  {
    // (an int is the length of the array built: a count)
    params: { 'int[]': 1 },
    exprs: {
      body: {
        ops: prods('map', 'filter', 'add', 'sub', 'mul', 'gt', 'lt'),
        returns: ['int[]', 'int[]', 'int'],
        depth: 2,
        leaf: 1,
        ints: [1, 9],
      },
    },
    inputs: ranges([0, 9], [1, 3]),
  },
  {
    params: { 'int[]': 1 },
    exprs: {
      body: {
        ops: prods('map', 'filter', 'sum', 'add', 'sub', 'mul', 'gt', 'lt', 'eq'),
        returns: ['int[]', 'int[]', 'int'],
        depth: 2,
        leaf: 0.15,
        ints: [1, 9],
      },
    },
    inputs: ranges([0, 9], [2, 4]),
  },
  {
    // (a second array with chance 0.3)
    params: { 'int[]': [1, 2] },
    exprs: {
      body: {
        ops: prods(
          'map',
          'filter',
          'sum',
          'some',
          'every',
          'aincl',
          'aslice',
          'aconcat',
          'alen',
          'add',
          'sub',
          'mul',
          'gt',
          'lt',
          'eq',
          'ne',
          'mod',
        ),
        returns: ['int[]', 'int', 'bool'],
        depth: 3,
        leaf: 0.3,
        ints: [1, 12],
      },
    },
    inputs: ranges([0, 20], [2, 5]),
  },
  {
    params: { 'int[]': 1, int: 1 },
    exprs: {
      body: {
        ops: prods(
          'map',
          'filter',
          'sum',
          'some',
          'aincl',
          'aslice',
          'alen',
          'add',
          'sub',
          'mul',
          'mod',
          'div',
          'gt',
          'lt',
          'eq',
          'ifInt',
          'even',
        ),
        returns: ['int[]', 'int', 'bool'],
        depth: 4,
        leaf: 0.3,
        ints: [1, 12],
      },
    },
    inputs: ranges([-10, 20], [2, 6]),
  },
  {
    shape: 'const t1 = E; …; return E (each definition an array reading the one before it, t1 reading xs)',
    params: { 'int[]': [1, 2], int: 1 },
    counts: { definitions: 0 },
    exprs: {
      body: {
        ops: prods(
          'map',
          'filter',
          'sum',
          'some',
          'every',
          'aslice',
          'aconcat',
          'alen',
          'add',
          'sub',
          'mul',
          'mod',
          'gt',
          'lt',
          'ge',
          'ifInt',
          'sortAsc',
          'sortDesc',
          'arev',
          'and',
          'or',
        ),
        returns: ['int[]', 'int'],
        depth: 5,
        leaf: 0.3,
        ints: [1, 12],
      },
    },
    inputs: ranges([-20, 20], [3, 7]),
  },
] satisfies Level[];

const LADDER = ladder(LEVELS, [
  knob.count('definitions', { by: 1, every: 2, max: 60, why: 'programs would near the 16,000-character limit' }),
  knob.arrays({
    by: 1,
    max: 200,
    why: 'arrays and what is built from them would make prompts of many thousands of characters',
  }),
  knob.ints({ by: 5 }),
]);

/** The methods that count towards a chain (array.chain). */
const CHAINED = new Set(['map', 'filter', 'reduce', 'some', 'every', 'slice', 'concat', 'sort']);

function candidate(rng: Rng, level: number): Candidate {
  const { params, exprs, counts } = LADDER.at(level);
  const { body: spec } = exprs;
  const ps: Param[] = [{ name: 'xs', type: 'int[]' }];
  if (typeof params['int[]'] !== 'number' && rng.bool(0.3)) ps.push({ name: 'ys', type: 'int[]' });
  if (params.int) ps.push({ name: 'k', type: 'int' });
  const ctx = newCtx(rng, spec.ops, ps, spec);
  const ty = rng.pick(spec.returns);
  // At level 0 an int is a count, the .length of a map or filter: array.length is a level-0 skill
  // (map, filter and other families' first skills build on it).
  const count = level === 0 && ty === 'int';
  const defs = chain(ctx, 'int[]', counts?.definitions ?? 0, spec.depth, ['xs']);
  const built = gen(ctx, count ? 'int[]' : ty, spec.depth, true, defs.read);
  const body = [...defs.stmts, ret(count ? P.alen.build([built]) : built)];
  const skills = new Set(ctx.skills);
  if (count) skills.add(P.alen.skill);
  if (countNodes(body, (n) => n.kind === 'meth' && CHAINED.has(n.method)) >= 2) skills.add('array.chain');
  return { prog: { params: ps, body }, skills };
}

export const array = defineFamily({
  id: F,
  name: 'arrays',
  description:
    'map, filter, reduce, some/every, includes, slice/concat over integer arrays, with arithmetic and comparison lambdas.',
  skills: arraySkills,
  ladder: LADDER,
  candidate,
});
