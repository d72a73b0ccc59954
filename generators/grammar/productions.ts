// The production library: every rule the sampler may apply, grouped by the family that owns its
// skill. A family picks its productions per level by name.
import type { Rng } from '../../core/rng.js';
import type { Production } from './sample.js';
import { bin, call, cond, fn, lit, meth, prop, spread, un, v, type BinOp, type Expr } from './tree.js';

const b2 = (op: BinOp) => (xs: Expr[]) => bin(op, xs[0]!, xs[1]!);

export const P = {
  // arith
  add: { skill: 'arith.add', out: 'int', args: ['int', 'int'], build: b2('+') },
  sub: { skill: 'arith.sub', out: 'int', args: ['int', 'int'], build: b2('-') },
  mul: { skill: 'arith.mul', out: 'int', args: ['int', 'int'], build: b2('*') },
  div: {
    skill: 'arith.div',
    out: 'int',
    args: ['int', 'k'],
    build: (xs: Expr[]) => call('Math.floor', bin('/', xs[0]!, xs[1]!)),
  },
  mod: { skill: 'arith.mod', out: 'int', args: ['int', 'k'], build: b2('%') },
  abs: { skill: 'arith.abs', out: 'int', args: ['int'], build: (xs: Expr[]) => call('Math.abs', xs[0]!) },
  neg: { skill: 'arith.neg', out: 'int', args: ['int'], build: (xs: Expr[]) => un('-', xs[0]!), weight: 0.5 },
  min: {
    skill: 'arith.minmax',
    out: 'int',
    args: ['int', 'int'],
    build: (xs: Expr[]) => call('Math.min', xs[0]!, xs[1]!),
    weight: 0.5,
  },
  max: {
    skill: 'arith.minmax',
    out: 'int',
    args: ['int', 'int'],
    build: (xs: Expr[]) => call('Math.max', xs[0]!, xs[1]!),
    weight: 0.5,
  },
  // logic
  and: { skill: 'logic.and', out: 'bool', args: ['bool', 'bool'], build: b2('&&') },
  or: { skill: 'logic.or', out: 'bool', args: ['bool', 'bool'], build: b2('||') },
  not: { skill: 'logic.not', out: 'bool', args: ['bool'], build: (xs: Expr[]) => un('!', xs[0]!), weight: 0.7 },
  xor: { skill: 'logic.xor', out: 'bool', args: ['bool', 'bool'], build: b2('!==') },
  beq: { skill: 'logic.xor', out: 'bool', args: ['bool', 'bool'], build: b2('==='), weight: 0.5 },
  lt: { skill: 'logic.compare', out: 'bool', args: ['int', 'int'], build: b2('<') },
  le: { skill: 'logic.compare', out: 'bool', args: ['int', 'int'], build: b2('<='), weight: 0.5 },
  gt: { skill: 'logic.compare', out: 'bool', args: ['int', 'int'], build: b2('>') },
  ge: { skill: 'logic.compare', out: 'bool', args: ['int', 'int'], build: b2('>='), weight: 0.5 },
  eq: { skill: 'logic.compare', out: 'bool', args: ['int', 'int'], build: b2('===') },
  ne: { skill: 'logic.compare', out: 'bool', args: ['int', 'int'], build: b2('!=='), weight: 0.5 },
  // cond
  ifInt: {
    skill: 'cond.ternary',
    out: 'int',
    args: ['bool', 'int', 'int'],
    build: (xs: Expr[]) => cond(xs[0]!, xs[1]!, xs[2]!),
  },
  ifStr: {
    skill: 'cond.ternary',
    out: 'str',
    args: ['bool', 'str', 'str'],
    build: (xs: Expr[]) => cond(xs[0]!, xs[1]!, xs[2]!),
  },
  ifBool: {
    skill: 'cond.ternary',
    out: 'bool',
    args: ['bool', 'bool', 'bool'],
    build: (xs: Expr[]) => cond(xs[0]!, xs[1]!, xs[2]!),
    weight: 0.3,
  },
  ifArr: {
    skill: 'cond.ternary',
    out: 'int[]',
    args: ['bool', 'int[]', 'int[]'],
    build: (xs: Expr[]) => cond(xs[0]!, xs[1]!, xs[2]!),
    weight: 0.5,
  },
  // str
  concat: { skill: 'str.concat', out: 'str', args: ['str', 'str'], build: b2('+') },
  slen: { skill: 'str.length', out: 'int', args: ['str'], build: (xs: Expr[]) => prop(xs[0]!, 'length') },
  upper: { skill: 'str.case', out: 'str', args: ['str'], build: (xs: Expr[]) => meth(xs[0]!, 'toUpperCase') },
  srev: {
    skill: 'str.reverse',
    out: 'str',
    args: ['str'],
    build: (xs: Expr[]) => meth(meth(meth(xs[0]!, 'split', lit('')), 'reverse'), 'join', lit('')),
  },
  sliceFrom: {
    skill: 'str.slice',
    out: 'str',
    args: ['str', 'n3'],
    build: (xs: Expr[]) => meth(xs[0]!, 'slice', xs[1]!),
  },
  sliceTo: {
    skill: 'str.slice',
    out: 'str',
    args: ['str', 'n3'],
    build: (xs: Expr[]) => meth(xs[0]!, 'slice', lit(0), xs[1]!),
  },
  repeat: {
    skill: 'str.repeat',
    out: 'str',
    args: ['str', 'n3'],
    build: (xs: Expr[]) => meth(xs[0]!, 'repeat', xs[1]!),
    weight: 0.5,
  },
  charAt: {
    skill: 'str.index',
    out: 'str',
    args: ['str', 'n3'],
    build: (xs: Expr[]) => meth(xs[0]!, 'charAt', xs[1]!),
  },
  includes: {
    skill: 'str.search',
    out: 'bool',
    args: ['str', 'ch'],
    build: (xs: Expr[]) => meth(xs[0]!, 'includes', xs[1]!),
  },
  indexOf: {
    skill: 'str.search',
    out: 'int',
    args: ['str', 'ch'],
    build: (xs: Expr[]) => meth(xs[0]!, 'indexOf', xs[1]!),
  },
  replace: {
    skill: 'str.replace',
    out: 'str',
    args: ['str', 'ch', 'ch'],
    build: (xs: Expr[]) => meth(xs[0]!, 'replaceAll', xs[1]!, xs[2]!),
    weight: 0.5,
  },
  strOfInt: {
    skill: 'str.convert',
    out: 'str',
    args: ['int'],
    build: (xs: Expr[]) => call('String', xs[0]!),
    weight: 0.5,
  },
  // arrays
  alen: { skill: 'array.length', out: 'int', args: ['int[]'], build: (xs: Expr[]) => prop(xs[0]!, 'length') },
  map: {
    skill: 'array.map',
    out: 'int[]',
    args: ['int[]', 'int=>int'],
    build: (xs: Expr[]) => meth(xs[0]!, 'map', xs[1]!),
  },
  filter: {
    skill: 'array.filter',
    out: 'int[]',
    args: ['int[]', 'int=>bool'],
    build: (xs: Expr[]) => meth(xs[0]!, 'filter', xs[1]!),
  },
  sum: {
    skill: 'array.reduce',
    out: 'int',
    args: ['int[]', 'int,int=>int'],
    build: (xs: Expr[], rng: Rng) => meth(xs[0]!, 'reduce', xs[1]!, lit(rng.int(0, 2))),
  },
  some: {
    skill: 'array.some',
    out: 'bool',
    args: ['int[]', 'int=>bool'],
    build: (xs: Expr[]) => meth(xs[0]!, 'some', xs[1]!),
    weight: 0.5,
  },
  every: {
    skill: 'array.some',
    out: 'bool',
    args: ['int[]', 'int=>bool'],
    build: (xs: Expr[]) => meth(xs[0]!, 'every', xs[1]!),
    weight: 0.5,
  },
  aincl: {
    skill: 'array.includes',
    out: 'bool',
    args: ['int[]', 'int'],
    build: (xs: Expr[]) => meth(xs[0]!, 'includes', xs[1]!),
    weight: 0.5,
  },
  aslice: {
    skill: 'array.slice',
    out: 'int[]',
    args: ['int[]', 'n3'],
    build: (xs: Expr[]) => meth(xs[0]!, 'slice', xs[1]!),
    weight: 0.5,
  },
  aconcat: {
    skill: 'array.slice',
    out: 'int[]',
    args: ['int[]', 'int[]'],
    build: (xs: Expr[]) => meth(xs[0]!, 'concat', xs[1]!),
    weight: 0.5,
  },
  // sorting and searching
  sortAsc: {
    skill: 'sort.sort',
    out: 'int[]',
    args: ['int[]'],
    build: (xs: Expr[]) => meth(meth(xs[0]!, 'slice'), 'sort', fn(['p', 'q'], bin('-', v('p'), v('q')))),
  },
  sortDesc: {
    skill: 'sort.sort',
    out: 'int[]',
    args: ['int[]'],
    build: (xs: Expr[]) => meth(meth(xs[0]!, 'slice'), 'sort', fn(['p', 'q'], bin('-', v('q'), v('p')))),
  },
  arev: {
    skill: 'sort.reverse',
    out: 'int[]',
    args: ['int[]'],
    build: (xs: Expr[]) => meth(meth(xs[0]!, 'slice'), 'reverse'),
  },
  aindexOf: {
    skill: 'sort.search',
    out: 'int',
    args: ['int[]', 'int'],
    build: (xs: Expr[]) => meth(xs[0]!, 'indexOf', xs[1]!),
  },
  findIndex: {
    skill: 'sort.search',
    out: 'int',
    args: ['int[]', 'int=>bool'],
    build: (xs: Expr[]) => meth(xs[0]!, 'findIndex', xs[1]!),
  },
  amax: {
    skill: 'sort.extremum',
    out: 'int',
    args: ['int[]'],
    build: (xs: Expr[]) => call('Math.max', lit(0), spread(xs[0]!)),
  },
  amin: {
    skill: 'sort.extremum',
    out: 'int',
    args: ['int[]'],
    build: (xs: Expr[]) => call('Math.min', lit(99), spread(xs[0]!)),
  },
  // bits
  band: { skill: 'bits.and', out: 'int', args: ['int', 'int'], build: b2('&') },
  bor: { skill: 'bits.or', out: 'int', args: ['int', 'int'], build: b2('|') },
  bxor: { skill: 'bits.xor', out: 'int', args: ['int', 'int'], build: b2('^') },
  shl: { skill: 'bits.shift', out: 'int', args: ['int', 'sh'], build: b2('<<') },
  shr: { skill: 'bits.shift', out: 'int', args: ['int', 'sh'], build: b2('>>') },
  bnot: { skill: 'bits.not', out: 'int', args: ['int'], build: (xs: Expr[]) => un('~', xs[0]!), weight: 0.4 },
  // records
  getX: { skill: 'record.get', out: 'int', args: ['rec'], build: (xs: Expr[]) => prop(xs[0]!, 'x') },
  getY: { skill: 'record.get', out: 'int', args: ['rec'], build: (xs: Expr[]) => prop(xs[0]!, 'y') },
  getName: { skill: 'record.get', out: 'str', args: ['rec'], build: (xs: Expr[]) => prop(xs[0]!, 'name') },
  getOk: { skill: 'record.get', out: 'bool', args: ['rec'], build: (xs: Expr[]) => prop(xs[0]!, 'ok') },
  // number theory
  even: {
    skill: 'numtheory.parity',
    out: 'bool',
    args: ['int'],
    build: (xs: Expr[]) => bin('===', bin('%', xs[0]!, lit(2)), lit(0)),
  },
  divides: {
    skill: 'numtheory.divisibility',
    out: 'bool',
    args: ['int', 'k'],
    build: (xs: Expr[]) => bin('===', bin('%', xs[0]!, xs[1]!), lit(0)),
  },
  ndigits: {
    skill: 'numtheory.digits',
    out: 'int',
    args: ['int'],
    build: (xs: Expr[]) => prop(call('String', call('Math.abs', xs[0]!)), 'length'),
    weight: 0.5,
  },
  lastDigit: {
    skill: 'numtheory.digits',
    out: 'int',
    args: ['int'],
    build: (xs: Expr[]) => bin('%', call('Math.abs', xs[0]!), lit(10)),
    weight: 0.5,
  },
} satisfies Record<string, Production>;

export type ProdName = keyof typeof P;
export const prods = (...names: ProdName[]): Production[] => names.map((n) => P[n]);
