// Pure properties of the generators (no sandbox): registry, taxonomy, drafts, determinism,
// duplicate rate, complexity by level, hashing, rendering and mutation.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createRng } from '../core/rng.js';
import { argumentLists, CODE_TASK_TYPES, type CodeTask, type Task } from '../core/task.js';
import {
  allSkills,
  applicableOps,
  labelProgram,
  canonicalHash,
  compactProgram,
  drawReference,
  families,
  formatTaxonomy,
  getFamily,
  mutate,
  MUTATION_OPS,
  renderCompact,
  renderNatural,
  taxonomy,
} from '../generators/index.js';
import {
  apply,
  arr,
  bin,
  call,
  cond,
  countNodes,
  evaluate,
  fn,
  for_,
  forOf,
  gen,
  idx,
  if_,
  let_,
  lit,
  meth,
  newCtx,
  obj,
  P,
  prods,
  prop,
  ret,
  sameJson,
  set,
  seti,
  spread,
  un,
  v,
  while_,
  type Prog,
  type Stmt,
} from '../generators/testing.js';
import { describeLevels, ranges } from '../generators/testing.js';

const skillIds = new Set(allSkills().map((s) => s.id));
const skillById = new Map(allSkills().map((s) => [s.id, s]));
const cells = families.flatMap((f) => Array.from({ length: f.levels }, (_, level) => ({ family: f.id, level })));

/** A Task built from a reference draw, for the pure rendering and mutation checks. */
function pseudoTask(family: string, seed: number, level: number, type: (typeof CODE_TASK_TYPES)[number]): Task {
  const { draft, outputs } = drawReference(family, createRng(seed), level, type);
  const base = {
    id: `t${seed}`,
    family,
    level,
    skills: draft.skills,
    program: draft.program,
    hash: canonicalHash(draft.program),
    parent: null,
    proposer: 'generator',
  };
  if (type === 'induction') {
    const pairs = draft.inputs.map((input, i) => ({ input, output: outputs[i]! }));
    return {
      ...base,
      type,
      visible: pairs.slice(0, draft.visibleCount),
      hidden: pairs.slice(draft.visibleCount),
      message: draft.message ?? '',
    };
  }
  return { ...base, type, input: draft.inputs[0]!, output: outputs[0]! };
}

describe('registry', () => {
  it('has at least 12 families with unique ids, at least 5 levels and one knob line per level', () => {
    expect(families.length).toBeGreaterThanOrEqual(12);
    expect(new Set(families.map((f) => f.id)).size).toBe(families.length);
    for (const f of families) {
      expect(f.levels).toBeGreaterThanOrEqual(5);
      expect(f.knobs).toHaveLength(f.levels);
      expect(f.skills.length).toBeGreaterThan(0);
      expect(getFamily(f.id)).toBe(f);
    }
  });
  it('getFamily names the known ids when the id is unknown', () => {
    expect(() => getFamily('nope')).toThrow(/unknown task family 'nope'.*arith.*logic/);
  });
  it('rejects a level that is not a natural number, in one line', () => {
    for (const level of [-1, 1.5, NaN])
      expect(() => getFamily('arith').generate(createRng(1), level, 'deduction')).toThrow(
        /^family 'arith': level \S+ is not a natural number[^\n]*$/,
      );
  });
});

describe('levels', () => {
  it('the knobs text is derived from the level table: params, depth, ops in full then as changes, inputs, other shapes', () => {
    const knobs = describeLevels('arith', [
      { params: { int: [1, 2] }, exprs: { body: { ops: prods('add', 'lt'), depth: 1 } }, inputs: ranges([0, 9]) },
      {
        params: { int: 2, bool: 0 },
        exprs: { body: { ops: prods('add', 'mod'), returns: ['int', 'int', 'bool'], depth: [2, 3] } },
        inputs: ranges([-5, 5]),
        or: [{ shape: 'a loop', params: { 'int[]': 1 }, inputs: ranges([0, 3], [2, 4]) }],
      },
    ]);
    expect(knobs).toEqual([
      '1-2 int params; body of depth 1 over a + b, a < b (logic); ints 0..9',
      '2 int params; body (int or bool) of depth 2-3, adds a % k, drops a < b (logic); ints -5..5 | or: a loop; 1 int[] param; arrays of 2-4 ints 0..3',
    ]);
  });
  it('every family has one knob line per level, naming its parameters', () => {
    for (const f of families) for (const k of f.knobs) expect(k, f.id).toMatch(/\d+ \S+ params?/);
  });
});

describe('taxonomy', () => {
  const skills = allSkills();
  it('skill ids are unique, prefixed by their family, and prerequisites exist', () => {
    expect(new Set(skills.map((s) => s.id)).size).toBe(skills.length);
    for (const s of skills) {
      expect(s.id.startsWith(`${s.family}.`)).toBe(true);
      for (const r of s.requires) expect(skillIds.has(r), `${s.id} requires ${r}`).toBe(true);
    }
  });
  it('the skill graph is acyclic', () => {
    const state = new Map<string, 1 | 2>();
    const visit = (id: string, path: string[]): void => {
      if (state.get(id) === 2) return;
      if (state.get(id) === 1) throw new Error(`cycle: ${[...path, id].join(' -> ')}`);
      state.set(id, 1);
      for (const r of skillById.get(id)!.requires) visit(r, [...path, id]);
      state.set(id, 2);
    };
    for (const s of skills) visit(s.id, []);
  });
  it('every skill is reachable from a root', () => {
    const roots = skills.filter((s) => s.requires.length === 0).map((s) => s.id);
    expect(roots.length).toBeGreaterThan(0);
    const reached = new Set(roots);
    let grew = true;
    while (grew) {
      grew = false;
      for (const s of skills) {
        if (!reached.has(s.id) && s.requires.every((r) => reached.has(r))) {
          reached.add(s.id);
          grew = true;
        }
      }
    }
    expect(skills.filter((s) => !reached.has(s.id)).map((s) => s.id)).toEqual([]);
  });
  it('formats as a table, JSON and dot', () => {
    const t = taxonomy();
    expect(JSON.parse(formatTaxonomy('json'))).toEqual(JSON.parse(JSON.stringify(t)));
    const table = formatTaxonomy('table');
    for (const f of families) expect(table).toContain(f.id);
    const dot = formatTaxonomy('dot');
    expect(dot.startsWith('digraph skills {')).toBe(true);
    expect(dot).toContain('"arith.mod" -> "arith.div"');
  });
});

describe('drafts', () => {
  it.each(cells)('$family level $level: well-formed, skills known, deterministic by seed', ({ family, level }) => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 }), fc.constantFrom(...CODE_TASK_TYPES), (seed, type) => {
        const a = getFamily(family).generate(createRng(seed), level, type);
        const b = getFamily(family).generate(createRng(seed), level, type);
        expect(b).toEqual(a);
        expect(a).toMatchObject({ family, level, type, proposer: 'generator', parent: null });
        expect(a.program).toMatch(/^function f\(/);
        expect(a.skills.length).toBeGreaterThan(0);
        for (const s of a.skills) {
          expect(skillIds.has(s), s).toBe(true);
          const sk = skillById.get(s)!;
          if (sk.family === family) expect(sk.level, s).toBeLessThanOrEqual(level);
        }
        if (type === 'induction') {
          expect(a.visibleCount).toBeGreaterThanOrEqual(2);
          expect(a.inputs.length).toBeGreaterThan(a.visibleCount!);
          expect(new Set(a.inputs.map((i) => JSON.stringify(i))).size).toBe(a.inputs.length);
          expect(a.message).toMatch(/\S/);
        } else expect(a.inputs).toHaveLength(1);
      }),
      { numRuns: 8 },
    );
  });

  it('different seeds give mostly different tasks: duplicate rate < 5% over 1,000 draws from level 2 up', () => {
    const report: string[] = [];
    for (const { family, level } of cells.filter((c) => c.level >= 2)) {
      const rng = createRng(`dup/${family}/${level}`);
      const keys = new Set<string>();
      const n = 1000;
      for (let i = 0; i < n; i++) {
        const d = getFamily(family).generate(rng, level, 'deduction');
        keys.add(`${canonicalHash(d.program)}|${JSON.stringify(d.inputs)}`);
      }
      const rate = 1 - keys.size / n;
      if (rate >= 0.05) report.push(`${family} L${level}: ${(rate * 100).toFixed(1)}%`);
    }
    expect(report).toEqual([]);
    // 36,000 drafts (some grammars redraw often at level 3-4): seconds on an idle machine, more when shared.
  }, 300_000);

  it('level is monotone in complexity (AST nodes + answer length) on average', () => {
    const bad: string[] = [];
    for (const f of families) {
      const means: number[] = [];
      for (let level = 0; level < f.levels; level++) {
        const rng = createRng(`cx/${f.id}/${level}`);
        let total = 0;
        const n = 80;
        for (let i = 0; i < n; i++) {
          const d = drawReference(f.id, rng, level, 'deduction');
          total += d.size + JSON.stringify(d.outputs[0]).length;
        }
        means.push(total / n);
      }
      for (let l = 1; l < means.length; l++)
        if (means[l]! < means[l - 1]!) bad.push(`${f.id}: ${means.map((m) => m.toFixed(1)).join(' ')}`);
    }
    expect(bad).toEqual([]);
  });
});

describe('reference interpreter', () => {
  const n = v('n');
  const base: Stmt = if_(bin('<', n, lit(2)), [ret(n)]);
  /** f(n) = n < 2 ? n : f(n - 1) + f(n - 2): exponential when run plainly, memoised by evaluate. */
  const fib: Prog = {
    params: [{ name: 'n', type: 'int' }],
    body: [base, ret(bin('+', call('f', bin('-', n, lit(1))), call('f', bin('-', n, lit(2)))))],
  };

  it('memoises repeated recursive calls but keeps the step and depth limits of plain evaluation', () => {
    expect(evaluate(fib, [15])).toBe(610);
    // fib(25) makes ~243,000 calls when run plainly: past the step limit, memo or not.
    expect(() => evaluate(fib, [25])).toThrow('step limit');
    const deep: Prog = {
      params: [{ name: 'n', type: 'int' }],
      body: [base, ret(bin('+', call('f', bin('-', n, lit(1))), call('f', bin('-', n, lit(1)))))],
    };
    expect(() => evaluate(deep, [1050])).toThrow('recursion depth');
    expect(evaluate(deep, [12])).toBe(2048);
    expect(() => evaluate(deep, [16])).toThrow('step limit');
  });

  it('sameJson agrees with comparing JSON.stringify texts', () => {
    const leaf = fc.oneof(
      fc.integer({ min: -3, max: 3 }),
      fc.constantFrom(0, -0, NaN, Infinity, null, undefined, true, 'k', 'op', '&&'),
    );
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        leaf,
        fc.array(tie('value'), { maxLength: 3 }),
        fc.dictionary(fc.constantFrom('k', 'op', 'a', 'b'), tie('value'), { maxKeys: 3 }),
      ),
    }));
    // Pairs that often print alike: a value and a rebuilt copy with one leaf maybe changed.
    const pair = value.chain((a) =>
      fc.tuple(
        fc.constant(a),
        fc.oneof(fc.constant(structuredClone(a)), value, fc.constant(JSON.parse(JSON.stringify([a]))[0] as unknown)),
      ),
    );
    fc.assert(
      fc.property(pair, ([a, b]) => {
        expect(sameJson(a, b)).toBe(JSON.stringify(a) === JSON.stringify(b));
      }),
      { numRuns: 400 },
    );
  });

  it('children reaches every node: countNodes finds as many nodes as the tree printed as JSON names', () => {
    const nodesIn = (x: unknown): number => (JSON.stringify(x).match(/"kind":/g) ?? []).length;
    const scope = [
      { name: 'a', type: 'int' },
      { name: 'xs', type: 'int[]' },
      { name: 's', type: 'str' },
      { name: 'p', type: 'bool' },
      { name: 'o', type: 'rec' },
    ];
    for (let seed = 0; seed < 300; seed++) {
      const rng = createRng(seed);
      const e = gen(newCtx(rng, Object.values(P), scope), rng.pick(['int', 'bool', 'str', 'int[]']), 4, true);
      expect(countNodes([e], () => true)).toBe(nodesIn(e));
    }
    const body: Stmt[] = [
      let_('t', lit(0)),
      for_('i', lit(0), v('n'), [set('t', '+=', v('i')), set('t', '++')]),
      forOf('x', v('xs'), [seti('xs', lit(0), v('x'))]),
      while_(bin('>', v('t'), lit(9)), [
        if_(
          v('p'),
          [set('t', '-=', lit(1))],
          [
            ret(
              obj([
                [null, v('o')],
                ['k', spread(v('xs'))],
              ]),
            ),
          ],
        ),
      ]),
      ret(apply(fn(['y'], cond(v('p'), un('-', v('y')), idx(v('xs'), prop(v('xs'), 'length')))), v('t'))),
    ];
    expect(countNodes(body, () => true)).toBe(nodesIn(body));
  });

  it('scopes: a block declares its own names, assignment reaches the enclosing one', () => {
    // let t = 0; for (let i = 0; i < n; i++) { let u = i * 2; t += u; } if (t > 5) { let t2 = t + 1; t = t2; } return [t, xs.map(x => x + t)]
    const p: Prog = {
      params: [
        { name: 'n', type: 'int' },
        { name: 'xs', type: 'int[]' },
      ],
      body: [
        let_('t', lit(0)),
        for_('i', lit(0), n, [let_('u', bin('*', v('i'), lit(2))), set('t', '+=', v('u'))]),
        if_(bin('>', v('t'), lit(5)), [let_('t2', bin('+', v('t'), lit(1))), set('t', '=', v('t2'))]),
        ret(arr([v('t'), meth(v('xs'), 'map', fn(['x'], bin('+', v('x'), v('t'))))])),
      ],
    };
    expect(evaluate(p, [4, [1, 2]])).toEqual([13, [14, 15]]);
    expect(evaluate(p, [2, []])).toEqual([2, []]);
    expect(() => evaluate({ ...p, body: [...p.body.slice(0, 2), ret(v('u'))] }, [3, []])).toThrow('unbound u');
  });
});

describe('canonical hash', () => {
  it('ignores whitespace and identifier names, not structure', () => {
    const p = 'function f(a, b) {\n  let s = a;\n  return s + b * 2;\n}';
    const q = 'function   g(x,y){let acc=x; return acc+y*2}';
    expect(canonicalHash(p)).toBe(canonicalHash(q));
    expect(canonicalHash(p)).not.toBe(canonicalHash(p.replace('* 2', '* 3')));
    expect(canonicalHash(p)).not.toBe(canonicalHash(p.replace('+', '-')));
    // Properties and object keys are not identifiers to rename.
    expect(canonicalHash('function f(o) { return o.x; }')).not.toBe(canonicalHash('function f(o) { return o.y; }'));
  });
  it('is invariant under a consistent renaming of generated programs', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 31 }),
        fc.constantFrom(...cells.filter((c) => c.family !== 'record')),
        (seed, { family, level }) => {
          const d = getFamily(family).generate(createRng(seed), level, 'deduction');
          const renamed = d.program.replace(/(?<![.\w"])(a|b|c|x|y|s|n)\b/g, (m) => `${m}_1`);
          expect(canonicalHash(renamed.replace(/\n\s*/g, ' '))).toBe(canonicalHash(d.program));
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('rendering', () => {
  it('compactProgram gives arrow forms', () => {
    expect(compactProgram('function f(a) { return a + 1; }')).toBe('a=>a+1');
    expect(compactProgram('function f(a, b) { return a - -b; }')).toBe('(a,b)=>a- -b');
    expect(compactProgram('function f(o) { return { a: o.x }; }')).toBe('o=>({a:o.x})');
    expect(compactProgram('function f(n) {\n  let s = 0;\n  return s + n;\n}')).toBe('n=>{let s=0;return s+n}');
    expect(compactProgram('function f(n) { if (n <= 0) return 0; return f(n - 1) + n; }')).toBe(
      'function f(n){if(n<=0)return 0;return f(n-1)+n}',
    );
  });
  it('compact is printable ASCII and short at low levels; natural states type, program and format', () => {
    const lengths: Record<string, number[]> = {};
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 31 }),
        fc.constantFrom(...cells),
        fc.constantFrom(...CODE_TASK_TYPES),
        (seed, { family, level }, type) => {
          const t = pseudoTask(family, seed, level, type);
          const c = renderCompact(t);
          expect(c).toMatch(/^[DAI]:[\x20-\x7e]*$/);
          const n = renderNatural(t);
          expect(n).toContain(`Task type: ${type}`);
          expect(n).toMatch(/Answer with/);
          if (type !== 'induction') expect(n).toContain(t.program);
          (lengths[`${family}/${level}`] ??= []).push(c.length);
        },
      ),
      { numRuns: 150 },
    );
    for (const family of ['arith', 'logic']) {
      for (const type of CODE_TASK_TYPES) {
        const rng = createRng(`len/${family}/${type}`);
        const ls = Array.from(
          { length: 50 },
          (_, i) => renderCompact(pseudoTask(family, rng.int(0, 1e9) + i, 0, type)).length,
        );
        // Two boolean arguments per pair make logic's induction pairs long: 3 pairs fit in 70.
        const limit = family === 'logic' && type === 'induction' ? 70 : 48;
        const ok = ls.filter((l) => l <= limit).length / ls.length;
        expect(ok, `${family} L0 ${type}: ${ls.join(',')}`).toBeGreaterThanOrEqual(0.9);
      }
      const l2 = Array.from({ length: 50 }, (_, i) => renderCompact(pseudoTask(family, i, 2, 'deduction')).length);
      expect(l2.reduce((a, b) => a + b, 0) / l2.length).toBeLessThanOrEqual(100);
    }
  });
});

describe('mutation', () => {
  it('records parent and operator, and changes what the operator says', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 31 }),
        fc.constantFrom(...cells),
        fc.constantFrom(...CODE_TASK_TYPES),
        (seed, { family, level }, type) => {
          const t = pseudoTask(family, seed, level, type);
          const rng = createRng(seed);
          for (const op of applicableOps(t)) {
            const d = mutate(rng, t as CodeTask, op);
            expect(d.parent).toEqual({ id: t.id, op });
            expect(d.proposer).toBe('mutation');
            const c = t as CodeTask;
            const inputs = argumentLists(c);
            // labelled by its own program where label.ts reads it, else its parent's level
            const label = labelProgram(family, d.program, d.inputs);
            expect(d).toMatchObject({ type, family, level: label.level ?? level });
            if (label.level !== null) expect(d.skills).toEqual(label.skills);
            if (op === 'change-input') {
              expect(d.program).toBe(t.program);
              expect(d.inputs).not.toEqual(inputs);
            } else {
              expect(d.program).not.toBe(t.program);
              expect(d.inputs).toEqual(inputs);
            }
            if (t.type === 'induction') expect(d.visibleCount).toBe(t.visible.length);
          }
          expect(MUTATION_OPS).toContain(mutate(createRng(seed), t).parent!.op);
          expect(mutate(createRng(seed), t)).toEqual(mutate(createRng(seed), t));
        },
      ),
      { numRuns: 60 },
    );
  });
  it('refuses an operator that does not apply', () => {
    const t = pseudoTask('logic', 1, 0, 'deduction');
    if (!applicableOps(t).includes('perturb-constant'))
      expect(() => mutate(createRng(1), t, 'perturb-constant')).toThrow(/does not apply/);
  });
});
