// Objects and records: field access, building records, spread updates, keys and values of
// dictionaries, counting into an object, aggregating over entries.
//
// Knobs per level (shape, expression depth, inputs):
//   0: one field read o.x / o.y / o.name / o.ok, alone or with one operator; record {x, y: 0-9, name: 1-3 letters, ok}
//   1: build a record of 1-2 fields, each a depth-1 expression of the input record's fields; values 0-9
//   2: spread update {...o, field: E} or a keys/values query on a dictionary (Object.keys/values with filter/reduce, array); values 0-20
//   3: counting: an object of counts keyed by a derived key of each word (for-of, loop), or its size; 1-6 words
//   4: aggregate over Object.keys of a dictionary with a guarded, generated update (cond, arith) and a generated result; values -10..20
import { bin, call, cond, fn, forOf, gen, idx, if_, let_, lit, meth, newCtx, obj, prods, prop, ret, set, seti, someNode, substitute, v, type Expr, type Param, type Stmt } from '../grammar/index.js';
import { defineFamily, skill, type Candidate } from '../kit.js';
import { ranges } from '../levels.js';
import type { Rng } from '../../core/rng.js';

const F = 'record';

export const recordSkills = [
  skill(F, 'get', 'field access', 'Reads a field of a record with o.key.', [], 0),
  skill(F, 'build', 'building records', 'Returns a new object literal with computed fields.', ['record.get'], 1),
  skill(F, 'update', 'spread updates', 'Copies a record with {...o} and overrides one field.', ['record.build'], 2),
  skill(F, 'keys', 'keys and values', 'Lists the keys or values of a dictionary (insertion order).', ['record.get', 'array.length'], 2),
  skill(F, 'count', 'counting into an object', 'Builds a frequency table keyed by a derived key.', ['record.build', 'loop.forof'], 3),
  skill(F, 'aggregate', 'aggregating entries', 'Loops over the keys of a dictionary, updating a result under a condition.', ['record.keys', 'cond.if-else'], 4),
];

const RANGES = [
  ranges([0, 9], [1, 4], [1, 3], 'abc'),
  ranges([0, 9], [1, 4], [1, 3], 'abc'),
  ranges([0, 20], [1, 4], [1, 3], 'abc'),
  ranges([0, 9], [1, 6], [1, 3], 'abc'),
  ranges([-10, 20], [1, 5], [1, 3], 'abc'),
];
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
    const ctx = newCtx(rng, prods('add', 'sub', 'mul', 'concat', 'not', 'upper', 'slen'), recScope(), { leaf: 1, ints: [1, 9] });
    const ty = rng.pick(['int', 'int', 'str', 'bool']);
    const e = rng.bool(0.4) ? gen(ctx, ty, 0, false, ['o']) : gen(ctx, ty, 1, true, ['o']);
    return { prog: { params: ps, body: [ret(e)] }, skills: ['record.get', ...ctx.skills] };
  }
  if (level === 1 || (level === 2 && rng.bool())) {
    const ctx = newCtx(rng, prods('add', 'sub', 'mul', 'concat', 'not', 'and', 'slen', 'gt', 'lt', 'upper'), recScope(), { leaf: 0.5, ints: [1, 9] });
    const nf = level === 1 ? rng.int(1, 2) : 1;
    const keys = [...KEYS].sort(() => rng.next() - 0.5).slice(0, nf);
    if (level === 2) {
      const field = rng.pick(['x', 'y', 'name', 'ok']);
      const ty = field === 'name' ? 'str' : field === 'ok' ? 'bool' : 'int';
      const body = obj([[null, o], [field, gen(ctx, ty, 2, true, ['o'])]] as [string | null, Expr][]);
      return { prog: { params: ps, body: [ret(body)] }, skills: ['record.update', 'record.build', 'record.get', ...ctx.skills] };
    }
    const fields = keys.map((k) => [k, gen(ctx, rng.pick(['int', 'str', 'bool']), 1, true, ['o'])] as [string, Expr]);
    return { prog: { params: ps, body: [ret(obj(fields))] }, skills: ['record.build', 'record.get', ...ctx.skills] };
  }
  if (level === 2) {
    const m = v('m');
    const vctx = newCtx(rng, prods('gt', 'lt', 'eq', 'even', 'add'), [{ name: 'x', type: 'int' }], { leaf: 0.5, ints: [1, 12] });
    const predK: Expr = fn(['k'], substitute(gen(vctx, 'bool', 1, true, ['x']), 'x', idx(m, v('k'))));
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
      skills: ['record.keys', 'record.get', ...(callsMethod(body, 'filter') ? ['array.filter', ...vctx.skills] : []), ...(callsMethod(body, 'reduce') ? ['array.reduce'] : [])],
    };
  }
  if (level === 3) {
    const w = v('w');
    const key = rng.pick<Expr>([w, meth(w, 'charAt', lit(0)), meth(w, 'charAt', lit(1)), prop(w, 'length'), meth(w, 'slice', lit(-1)), meth(w, 'toUpperCase'), meth(w, 'slice', lit(0), lit(2))]);
    const inc = rng.pick<Expr>([lit(1), prop(w, 'length'), lit(rng.int(2, 3))]);
    const body: Stmt[] = [
      let_('c', obj([]), true),
      forOf('w', v('ws'), [seti('c', key, bin('+', bin('||', idx(v('c'), key), lit(0)), inc))]),
      ret(rng.bool(0.75) ? v('c') : prop(call('Object.keys', v('c')), 'length')),
    ];
    return { prog: { params: [{ name: 'ws', type: 'str[]' }], body }, skills: ['record.count', 'record.build', 'loop.forof', 'str.index'] };
  }
  // Level 4
  const m = v('m');
  const scope: Param[] = [{ name: 'k', type: 'str' }, { name: 'x', type: 'int' }, { name: 'r', type: 'int' }];
  const cctx = newCtx(rng, prods('gt', 'lt', 'eq', 'even', 'add', 'and', 'or'), scope, { leaf: 0.4, ints: [1, 12] });
  const actx = newCtx(rng, prods('add', 'sub', 'mul', 'max', 'ifInt', 'gt'), scope, { leaf: 0.4, ints: [1, 5] });
  const bodyStmts: Stmt[] = [
    let_('r', lit(0)),
    forOf('k', call('Object.keys', m), [let_('x', idx(m, v('k')), true), if_(gen(cctx, 'bool', 2, true, ['x']), [set('r', '=', gen(actx, 'int', 3, true, ['x', 'r']))])]),
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
  knobs: [
    'one field read of {x, y, name, ok}, alone or with one operator; x, y 0-9; names of 1-3 letters',
    'build a record of 1-2 fields, each a depth-1 expression of the input fields; values 0-9',
    'spread update {...o, field: E} (depth 2), or a keys/values query of a dictionary with filter/reduce (array); values 0-20',
    'frequency table keyed by a derived key of each word (for-of, loop), or its size; 1-6 words',
    'aggregate over Object.keys of a dictionary with a guarded generated update and result (cond, arith); values -10..20',
  ],
  ranges: (level) => RANGES[level]!,
  candidate,
});
