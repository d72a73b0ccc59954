// Objects and records: field access, building and updating records, dictionaries, counting.
import {
  bin,
  call,
  cond,
  fn,
  forOf,
  gen,
  idx,
  if_,
  let_,
  lit,
  meth,
  newCtx,
  obj,
  prods,
  prop,
  ret,
  set,
  seti,
  someNode,
  substitute,
  v,
  type Expr,
  type Param,
  type Stmt,
} from '../grammar/index.js';
import { defineFamily, skill, type Candidate } from '../kit.js';
import { ranges, type Level } from '../levels.js';
import { knob, ladder } from '../ladder.js';
import type { Rng } from '../../core/rng.js';

const F = 'record';

export const recordSkills = [
  skill(F, 'get', 'field access', 'Reads a field of a record with o.key.', [], 0),
  skill(F, 'build', 'building records', 'Returns a new object literal with computed fields.', ['record.get'], 1),
  skill(F, 'update', 'spread updates', 'Copies a record with {...o} and overrides one field.', ['record.build'], 2),
  skill(
    F,
    'keys',
    'keys and values',
    'Lists the keys or values of a dictionary (insertion order).',
    ['record.get', 'array.length'],
    2,
  ),
  skill(
    F,
    'count',
    'counting into an object',
    'Builds a frequency table keyed by a derived key.',
    ['record.build', 'loop.forof'],
    3,
  ),
  skill(
    F,
    'aggregate',
    'aggregating entries',
    'Loops over the keys of a dictionary, updating a result under a condition.',
    ['record.keys', 'cond.if-else'],
    4,
  ),
];

const FIELD_OPS = prods('add', 'sub', 'mul', 'concat', 'not', 'and', 'slen', 'gt', 'lt', 'upper');
const QUERY = {
  shape: 'Object.keys(m).length, .join(""), .filter(k => pred(m[k])) or its length, or the sum of Object.values(m)',
  params: { dict: 1 },
  exprs: { pred: { ops: prods('gt', 'lt', 'eq', 'even', 'add'), depth: 1, leaf: 0.5, ints: [1, 12] } },
  inputs: ranges([0, 20], [1, 4], [1, 3], 'abc'),
} satisfies Level;

const LEVELS = [
  {
    shape: 'o.x, o.y, o.name or o.ok, alone or under one operator',
    params: { rec: 1 },
    exprs: {
      E: {
        ops: prods('add', 'sub', 'mul', 'concat', 'not', 'upper', 'slen'),
        returns: ['int', 'int', 'str', 'bool'],
        leaf: 1,
        ints: [1, 9],
      },
    },
    inputs: ranges([0, 9], [1, 4], [1, 3], 'abc'),
  },
  {
    shape: 'a new record of 1-2 fields, each a field expression',
    params: { rec: 1 },
    exprs: { field: { ops: FIELD_OPS, returns: ['int', 'str', 'bool'], depth: 1, leaf: 0.5, ints: [1, 9] } },
    inputs: ranges([0, 9], [1, 4], [1, 3], 'abc'),
  },
  {
    shape: '{ ...o, x / y / name / ok: field }',
    params: { rec: 1 },
    exprs: { field: { ops: FIELD_OPS, depth: 2, leaf: 0.5, ints: [1, 9] } },
    inputs: ranges([0, 20], [1, 4], [1, 3], 'abc'),
    or: [QUERY],
  },
  {
    shape:
      'c = {}; for (const w of ws) c[key(w)] = (c[key(w)] || 0) + 1, w.length or 2-3; return c or its number of keys',
    params: { 'str[]': 1 },
    inputs: ranges([0, 9], [1, 6], [1, 3], 'abc'),
  },
  {
    shape:
      'r = 0; for (const k of Object.keys(m)) { x = m[k]; if (guard) r = update(x, r) }; return r or r > c ? r : d',
    params: { dict: 1 },
    exprs: {
      guard: { ops: prods('gt', 'lt', 'eq', 'even', 'add', 'and', 'or'), depth: 2, leaf: 0.4, ints: [1, 12] },
      update: { ops: prods('add', 'sub', 'mul', 'max', 'ifInt', 'gt'), depth: 3, leaf: 0.4, ints: [1, 5] },
    },
    inputs: { ...ranges([-10, 20], [1, 5], [1, 3], 'abc'), keys: 6 },
  },
] as const satisfies readonly Level[];

const LADDER = ladder(LEVELS, [
  knob.keys({ by: 4, max: 400, why: 'dictionaries would make prompts of many thousands of characters' }),
  knob.depth('guard', { by: 1, every: 8, max: 16, why: 'deeper guards would seldom stay within the value bounds' }),
  knob.depth('update', { by: 1, every: 8, max: 16, why: 'deeper updates would seldom stay within the value bounds' }),
  knob.ints({ by: 5 }),
]);

const o = v('o');
const recScope = (): Param[] => [
  { name: 'o', type: 'rec' },
  { name: 'o', type: 'int', expr: prop(o, 'x') },
  { name: 'o', type: 'int', expr: prop(o, 'y') },
  { name: 'o', type: 'str', expr: prop(o, 'name') },
  { name: 'o', type: 'bool', expr: prop(o, 'ok') },
];
const KEYS = ['a', 'b', 'n', 's', 'v', 'w'];

function candidate(rng: Rng, level: number): Candidate {
  const ps: Param[] = [{ name: 'o', type: 'rec' }];
  if (level === 0) {
    const { E } = LEVELS[0].exprs;
    const ctx = newCtx(rng, E.ops, recScope(), E);
    const ty = rng.pick(E.returns);
    const e = rng.bool(0.4) ? gen(ctx, ty, 0, false, ['o']) : gen(ctx, ty, 1, true, ['o']);
    return { prog: { params: ps, body: [ret(e)] }, skills: ['record.get', ...ctx.skills] };
  }
  if (level === 1 || (level === 2 && rng.bool())) {
    const { field: spec } = LEVELS[level === 1 ? 1 : 2].exprs;
    const ctx = newCtx(rng, spec.ops, recScope(), spec);
    // (level 2 shuffles the keys too though it uses none: without the draw its programs would change)
    const nf = level === 1 ? rng.int(1, 2) : 1;
    const keys = [...KEYS].sort(() => rng.next() - 0.5).slice(0, nf);
    if (level === 2) {
      const field = rng.pick(['x', 'y', 'name', 'ok']);
      const ty = field === 'name' ? 'str' : field === 'ok' ? 'bool' : 'int';
      const body = obj([
        [null, o],
        [field, gen(ctx, ty, spec.depth, true, ['o'])],
      ]);
      return {
        prog: { params: ps, body: [ret(body)] },
        skills: ['record.update', 'record.build', 'record.get', ...ctx.skills],
      };
    }
    const returns = LEVELS[1].exprs.field.returns;
    const fields = keys.map((k) => [k, gen(ctx, rng.pick(returns), spec.depth, true, ['o'])] as [string, Expr]);
    return { prog: { params: ps, body: [ret(obj(fields))] }, skills: ['record.build', 'record.get', ...ctx.skills] };
  }
  if (level === 2) {
    const m = v('m');
    const { pred } = QUERY.exprs;
    const vctx = newCtx(rng, pred.ops, [{ name: 'x', type: 'int' }], pred);
    const predK: Expr = fn(['k'], substitute(gen(vctx, 'bool', pred.depth, true, ['x']), 'x', idx(m, v('k'))));
    const options: Expr[] = [
      prop(call('Object.keys', m), 'length'),
      meth(call('Object.keys', m), 'join', lit('')),
      meth(call('Object.keys', m), 'filter', predK),
      prop(meth(call('Object.keys', m), 'filter', predK), 'length'),
      meth(call('Object.values', m), 'reduce', fn(['p', 'q'], bin('+', v('p'), v('q'))), lit(0)),
    ];
    const body = rng.pick(options);
    return {
      prog: { params: [{ name: 'm', type: 'dict' }], body: [ret(body)] },
      skills: [
        'record.keys',
        'record.get',
        ...(callsMethod(body, 'filter') ? ['array.filter', ...vctx.skills] : []),
        ...(callsMethod(body, 'reduce') ? ['array.reduce'] : []),
      ],
    };
  }
  if (level === 3) {
    const w = v('w');
    const key = rng.pick<Expr>([
      w,
      meth(w, 'charAt', lit(0)),
      meth(w, 'charAt', lit(1)),
      prop(w, 'length'),
      meth(w, 'slice', lit(-1)),
      meth(w, 'toUpperCase'),
      meth(w, 'slice', lit(0), lit(2)),
    ]);
    const inc = rng.pick<Expr>([lit(1), prop(w, 'length'), lit(rng.int(2, 3))]);
    const body: Stmt[] = [
      let_('c', obj([]), true),
      forOf('w', v('ws'), [seti('c', key, bin('+', bin('||', idx(v('c'), key), lit(0)), inc))]),
      ret(rng.bool(0.75) ? v('c') : prop(call('Object.keys', v('c')), 'length')),
    ];
    return {
      prog: { params: [{ name: 'ws', type: 'str[]' }], body },
      skills: ['record.count', 'record.build', 'loop.forof', 'str.index'],
    };
  }
  const { guard, update } = LADDER.top(level).exprs;
  const m = v('m');
  const scope: Param[] = [
    { name: 'k', type: 'str' },
    { name: 'x', type: 'int' },
    { name: 'r', type: 'int' },
  ];
  const cctx = newCtx(rng, guard.ops, scope, guard);
  const actx = newCtx(rng, update.ops, scope, update);
  const bodyStmts: Stmt[] = [
    let_('r', lit(0)),
    forOf('k', call('Object.keys', m), [
      let_('x', idx(m, v('k')), true),
      if_(gen(cctx, 'bool', guard.depth, true, ['x']), [
        set('r', '=', gen(actx, 'int', update.depth, true, ['x', 'r'])),
      ]),
    ]),
    ret(rng.bool(0.3) ? v('r') : cond(bin('>', v('r'), lit(rng.int(0, 10))), v('r'), lit(rng.int(0, 3)))),
  ];
  return {
    prog: { params: [{ name: 'm', type: 'dict' }], body: bodyStmts },
    skills: ['record.aggregate', 'record.keys', 'loop.forof', 'cond.if-else', ...cctx.skills, ...actx.skills],
  };
}

function callsMethod(e: Expr, method: string): boolean {
  return someNode([e], (n) => n.kind === 'meth' && n.method === method);
}

export const record = defineFamily({
  id: F,
  name: 'objects and records',
  description: 'Field access, record building, spread updates, keys/values of dictionaries, counting and aggregation.',
  skills: recordSkills,
  ladder: LADDER,
  candidate,
});
