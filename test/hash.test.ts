// The canonical hash and the minified forms on acorn: programs with regex and template literals,
// comments, escapes and automatic semicolons (the kind an LLM writes), and the mutation operators
// that read the same tokens.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parse } from 'acorn';
import { createRng } from '../core/rng.js';
import type { Task } from '../core/task.js';
import { canonicalForm, canonicalHash, compactProgram, minify, mutate } from '../generators/index.js';

// ---- A small program generator: atoms joined by separators, variables in slots ----

/** A token or an indivisible run of text; `{ v }` is variable slot v; `SEMI` ends a statement. */
type Atom = string | { v: number } | typeof SEMI;
const SEMI = Symbol('semicolon');

const REGEXES = [
  '/a\\/b/g',
  '/[/*]/',
  '/"/g',
  "/'/",
  '/\\`/',
  '/=>/',
  '/\\d+(?:px)?/i',
  '/\\/\\//',
  '/[\\]/]/',
  '/x{2}/',
];
const TEXTS = ['', 'a b', '// x', '/* y */', '"q"', "'", '\\`', '$', '{}', '}', '\\${x}', 'line\\nbreak'];
const STRINGS = ['"// not a comment"', "'/* nor this */'", '"a\\"b"', "'it\\'s'", '"\\\\"', '"`"', "'${x}'", '"/"'];

interface Literals {
  regex: number;
  text: number;
  text2: number;
  str: number;
}

/** A string-valued expression over the string variable `v`, built from the literals of its slot. */
const EXPRESSIONS: ((v: Atom, l: Literals) => Atom[])[] = [
  (v, l) => [v, '.', 'replace', '(', REGEXES[l.regex]!, ',', STRINGS[l.str]!, ')'],
  (v, l) => ['`' + TEXTS[l.text]! + '${', v, '}' + TEXTS[l.text2]! + '`'],
  (v, l) => ['`' + TEXTS[l.text]! + '${', '`${', v, '}' + TEXTS[l.text2]! + '`', '}`'],
  (v, l) => [
    REGEXES[l.regex]!,
    '.',
    'test',
    '(',
    v,
    ')',
    '?',
    STRINGS[l.str]!,
    ':',
    'String',
    '(',
    v,
    '.',
    'length',
    '/',
    '2',
    '/',
    '3',
    ')',
  ],
  (v, l) => ['String', '(', '(', v, '+', STRINGS[l.str]!, ')', '.', 'length', '/', '2', ')'],
  (v, l) => [
    '{',
    'len',
    ':',
    v,
    ',',
    'tag',
    ':',
    STRINGS[l.str]!,
    '}',
    '.',
    'len',
    '+',
    REGEXES[l.regex]!,
    '.',
    'source',
  ],
];

interface Spec {
  kinds: number[];
  literals: Literals[];
}

const literalsArb = fc.record({
  regex: fc.nat(REGEXES.length - 1),
  text: fc.nat(TEXTS.length - 1),
  text2: fc.nat(TEXTS.length - 1),
  str: fc.nat(STRINGS.length - 1),
});
const specArb: fc.Arbitrary<Spec> = fc.record({
  kinds: fc.array(fc.nat(EXPRESSIONS.length - 1), { minLength: 4, maxLength: 4 }),
  literals: fc.array(literalsArb, { minLength: 4, maxLength: 4 }),
});

/** function v0(v1, v2) { const v3 = E; let v4 = E; v4 = v4 + E; return E; } */
function atoms(spec: Spec): Atom[] {
  const e = (i: number, v: number): Atom[] => EXPRESSIONS[spec.kinds[i]!]!({ v }, spec.literals[i]!);
  return [
    'function',
    { v: 0 },
    '(',
    { v: 1 },
    ',',
    { v: 2 },
    ')',
    '{',
    'const',
    { v: 3 },
    '=',
    ...e(0, 1),
    SEMI,
    'let',
    { v: 4 },
    '=',
    ...e(1, 2),
    SEMI,
    { v: 4 },
    '=',
    { v: 4 },
    '+',
    ...e(2, 3),
    SEMI,
    'return',
    ...e(3, 4),
    SEMI,
    '}',
  ];
}

// Every separator starts with whitespace, so that no comment can start from the token before it.
const SEPARATORS = [' ', '  ', '\t', '\n', '\n\n  ', ' /* c */ ', ' /* "\'` */ ', ' // c\n', ' /*\n*/ '];

interface Style {
  names: string[];
  separators: number[];
  dropSemicolons: boolean[];
}

function render(spec: Spec, style: Style): string {
  let out = '';
  let k = 0;
  atoms(spec).forEach((a, i, all) => {
    const sep = SEPARATORS[style.separators[k++ % style.separators.length]!]!;
    if (a === SEMI) {
      // A statement's `;` may go when a line break follows (every statement starts with a word).
      out += style.dropSemicolons[i % style.dropSemicolons.length] ? '\n' : ';';
      return;
    }
    out += typeof a === 'string' ? a : style.names[a.v]!;
    // No line break after `return` (it would end the statement).
    if (i < all.length - 1) out += a === 'return' ? ' ' : sep;
  });
  return out;
}

const NAMES = ['f', 'a', 'b', 'c', 'd'];
const plain: Style = { names: NAMES, separators: [0], dropSemicolons: [false] };
const styleArb: fc.Arbitrary<Style> = fc.record({
  names: fc.uniqueArray(fc.constantFrom('g', 'x', 'y', 'acc', 'n1', '_t', '$s', 'value', 'h', 'len', 'tag'), {
    minLength: 5,
    maxLength: 5,
  }),
  separators: fc.array(fc.nat(SEPARATORS.length - 1), { minLength: 1, maxLength: 12 }),
  dropSemicolons: fc.array(fc.boolean(), { minLength: 1, maxLength: 5 }),
});

/** Runs the program's function on two strings (the generated programs are total on strings). */
function run(program: string, name: string): unknown {
  return (new Function(`${program}\nreturn ${name}('ab/c"d', 'x\\'y');`) as () => unknown)();
}

describe('canonical hash on generated JavaScript with regex and template literals', () => {
  it('is invariant under renaming, whitespace, comments and optional semicolons', () => {
    fc.assert(
      fc.property(specArb, styleArb, (spec, style) => {
        const p = render(spec, plain);
        const q = render(spec, style);
        // The two programs are the same program: both parse and compute the same thing.
        expect(() => parse(q, { ecmaVersion: 'latest' })).not.toThrow();
        expect(run(q, style.names[0]!)).toEqual(run(p, 'f'));
        expect(canonicalHash(q)).toBe(canonicalHash(p));
        // The minified text is the same program too.
        expect(run(minify(q), style.names[0]!)).toEqual(run(p, 'f'));
      }),
      { numRuns: 300 },
    );
  });

  it('tells apart programs that differ in one regex, template text or string literal', () => {
    fc.assert(
      fc.property(specArb, fc.nat(3), literalsArb, styleArb, (spec, slot, other, style) => {
        const changed: Spec = { ...spec, literals: spec.literals.map((l, i) => (i === slot ? other : l)) };
        const p = render(spec, style);
        const q = render(changed, style);
        fc.pre(p !== q);
        expect(canonicalHash(q)).not.toBe(canonicalHash(p));
      }),
      { numRuns: 300 },
    );
  });
});

describe('canonical hash: cases the hand-written tokenizer got wrong', () => {
  const same = (p: string, q: string): boolean => canonicalHash(p) === canonicalHash(q);

  it('renames variables inside template substitutions', () => {
    expect(same('function f(a) { return `<${a}>`; }', 'function g(b) { return `<${b}>`; }')).toBe(true);
    expect(same('function f(a) { return `<${a}>`; }', 'function f(a) { return `<${a}]`; }')).toBe(false);
  });

  it('reads a quote or comment opener inside a regex as part of the regex', () => {
    expect(
      same(
        'function f(s) { const t = s.replace(/"/g, ""); return t + s; }',
        'function f(q) { const t = q.replace(/"/g, ""); return t + q; }',
      ),
    ).toBe(true);
    expect(
      same('function f(s) { return /[/*]/.test(s) ? 1 : 2; }', 'function f(s) { return /[/*]/.test(s) ? 1 : 3; }'),
    ).toBe(false);
  });

  it('follows automatic semicolon insertion', () => {
    expect(
      same('function f(a) {\n  const b = a * 2\n  return b\n}', 'function f(a) { const b = a * 2; return b; }'),
    ).toBe(true);
    // `return` then a line break returns undefined.
    expect(same('function f(a) { return\na }', 'function f(a) { return a }')).toBe(false);
    // No semicolon is inserted before `(`: this is one call, not two statements.
    expect(
      same('function f(g, a) { const b = g\n(a)\nreturn b }', 'function f(g, a) { const b = g;\n(a)\nreturn b }'),
    ).toBe(false);
    expect(same('function f(a) { return a; };', 'function f(a) { return a; }')).toBe(true);
  });

  it('keeps the names of globals and of shorthand keys', () => {
    expect(same('function f(s) { return encodeURI(s); }', 'function f(s) { return escape(s); }')).toBe(false);
    expect(same('function f(a) { return {a}; }', 'function f(b) { return {b}; }')).toBe(false);
    expect(same('function f(a) { return {a}; }', 'function f(b) { return {a: b}; }')).toBe(true);
    expect(same('function f({a, b = 2}) { return a + b; }', 'function f({a: x, b: y = 2}) { return x + y; }')).toBe(
      true,
    );
  });

  it('renames labels, catch parameters and inner functions, and no property', () => {
    const p =
      'function f(xs) { outer: for (const x of xs) { try { if (x.k) break outer; } catch (e) { return e.message; } } return xs.map(function h(y) { return y.k; }); }';
    const q =
      'function g(ys) { l: for (const z of ys) { try { if (z.k) break l; } catch (err) { return err.message; } } return ys.map(function i(w) { return w.k; }); }';
    expect(same(p, q)).toBe(true);
    expect(canonicalForm(p)).toContain('. message');
    expect(canonicalForm(p)).toContain('. map');
  });

  it('never throws, even on text that does not parse or lex', () => {
    for (const bad of ['function f( {', "function f(a) { return 'abc", 'function f(a) { return `x${a', '}}}', '']) {
      expect(canonicalHash(bad)).toMatch(/^[0-9a-f]{16}$/);
      expect(typeof compactProgram(bad)).toBe('string');
    }
  });
});

describe('minified and compact forms', () => {
  it('keep inserted semicolons and template text, and the spaces that keep tokens apart', () => {
    expect(compactProgram('function f(n) {\n  const m = n + 1\n  return m * 2\n}')).toBe('n=>{const m=n+1;return m*2}');
    expect(compactProgram('function f(a) { return `${a} and ${`b ${a}`}`; }')).toBe('a=>`${a} and ${`b ${a}`}`');
    expect(compactProgram('function f(a) { const s = `{${a}}`; return s + s; }')).toBe(
      'a=>{const s=`{${a}}`;return s+s}',
    );
    expect(compactProgram('function f(a, b) { return a < !--b; }')).toBe('(a,b)=>a< !--b');
    expect(compactProgram('function f(n) { return 1 .toString() + n; }')).toBe('n=>1 .toString()+n');
    expect(compactProgram('function f(o) { return /a/ in o; }')).toBe('o=>/a/ in o');
    expect(minify('function f(s) {\n  // a comment\n  return s.replace(/\\/\\//g, "/* x */") // another\n}')).toBe(
      'function f(s){return s.replace(/\\/\\//g,"/* x */")}',
    );
  });

  it('recursion (a call of the variable f, not a property f) keeps the declaration', () => {
    expect(compactProgram('function f(n) { return n <= 0 ? 0 : f(n - 1) + n; }')).toBe(
      'function f(n){return n<=0?0:f(n-1)+n}',
    );
    expect(compactProgram('function f(o) { return o.f + 1; }')).toBe('o=>o.f+1');
  });
});

describe('mutation operators on parsed programs', () => {
  const task = (program: string): Task => ({
    id: 't',
    type: 'deduction',
    family: 'arith',
    level: 0,
    skills: ['arith.add'],
    program,
    hash: canonicalHash(program),
    parent: null,
    proposer: 'llm',
    input: [3],
    output: 0,
  });
  const results = (program: string, op: 'swap-operator' | 'perturb-constant' | 'wrap'): string[] =>
    Array.from({ length: 40 }, (_, seed) => mutate(createRng(seed), task(program), op).program);

  it('swap-operator swaps binary operators only (never a unary minus after case or typeof)', () => {
    const p = 'function f(n) { switch (n) { case -1: return typeof -n; default: return n - 1; } }';
    for (const q of results(p, 'swap-operator')) {
      expect(() => parse(q, { ecmaVersion: 'latest' })).not.toThrow();
      expect(q).toContain('case -1: return typeof -n;');
      expect(q).not.toContain('n - 1');
    }
  });

  it('perturb-constant leaves regex quantifiers alone', () => {
    for (const q of results('function f(s) { return /a{2}/.test(s) ? 1 : 5; }', 'perturb-constant'))
      expect(q).toContain('/a{2}/');
  });

  it('wrap renames the variable f, not the property f, and keeps multi-line template text', () => {
    const p = 'function f(o) {\n  const s = `x\n${o.f}\ny`;\n  return o.f > 0 ? s : f({ f: o.f + 1 });\n}';
    for (const q of results(p, 'wrap')) {
      expect(q).toContain('function g(o) {');
      expect(q).toContain('`x\n${o.f}\ny`');
      expect(q).toContain(': g({ f: o.f + 1 })');
    }
  });
});
