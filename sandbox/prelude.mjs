// The source text wrapped around every program (it runs inside QuickJS, never in the host).
//
// Parsing is a large share of the cost of a call (QuickJS parses a few MB/s in WASM), so the code
// added per call is kept to one short line. A call's script is
//
//   globalThis.__cogen_phase__=1;<program>
//   ;(SUFFIX)(globalThis, argsJson, maxOutputBytes)
//
// (the marker goes after a leading 'use strict' directive so the directive still counts). The
// phase marker lets the host tell a parse error (no marker) from an exception thrown by the
// program's top-level code (1), by f (2) or during serialisation (3). The suffix checks that f is
// a function, calls it on the parsed arguments and serialises the result with JSON.stringify and a
// replacer that admits only null, booleans, finite numbers, strings, arrays and plain objects (so
// undefined, NaN, ±Infinity, functions, symbols, bigints, class instances, sparse arrays and the
// like are 'non-serialisable'; toJSON is honoured as JSON.stringify does; -0 prints as 0).
// Failures the suffix detects itself are thrown as short codes, strings starting with U+0001
// (see SUFFIX_CODES); the host turns them into reasons.
export const SUFFIX =
  "(function(g,a,M){g.__cogen_phase__=2;if(typeof f!='function')throw'\\x01f';" +
  'var r=f.apply(void 0,JSON.parse(a)),P=Object.getPrototypeOf,O=Object.prototype,A=Array.isArray;g.__cogen_phase__=3;' +
  "var s=JSON.stringify(r,function(k,v){var t=typeof v;if(t=='object'){if(v&&!A(v)&&(t=P(v),t!==O&&t!==null))throw'\\x01o'}" +
  "else if(t=='number'){if(v-v!==0)throw'\\x01n'}else if(t!='string'&&t!='boolean')throw'\\x01'+(v===void 0?'u':t);return v});" +
  "if(s.length>M)throw'\\x01b';return s})";

/** What each code thrown by SUFFIX means: [reason, detail]. */
export const SUFFIX_CODES = {
  f: ['no-function', 'the program does not define a function f'],
  o: ['non-serialisable', 'the result contains an object that is neither a plain object nor an array'],
  n: ['non-serialisable', 'the result contains NaN or an infinite number'],
  u: ['non-serialisable', 'the result is or contains undefined (or a hole in an array)'],
  function: ['non-serialisable', 'the result contains a function'],
  symbol: ['non-serialisable', 'the result contains a symbol'],
  bigint: ['non-serialisable', 'the result contains a bigint'],
  b: ['output-too-large', 'the result exceeds the output cap'],
};

/**
 * The result-rule replacer for JSON.stringify, as a factory of the builtins it needs (captured by
 * the host before the program ran): it admits null, booleans, finite numbers, strings, arrays and
 * plain objects, and throws a code of SUFFIX_CODES for anything else. It looks up no global, so a
 * program that replaces builtins cannot change it.
 */
export const REPLACER =
  '(function(A,G,O){return function(k,v){var t=typeof v;' +
  "if(t=='object'){if(v&&!A(v)&&(t=G(v),t!==O&&t!==null))throw'\\x01o'}" +
  "else if(t=='number'){if(v-v!==0)throw'\\x01n'}else if(t!='string'&&t!='boolean')throw'\\x01'+(v===void 0?'u':t);return v}})";

const DIRECTIVE = /^(\s*(['"])use strict\2\s*;?)/;

/** The whole script for one call of f(...args). */
export function callScript(program, argsJson, maxOutputBytes) {
  const m = DIRECTIVE.exec(program);
  const marked = m
    ? m[1] + 'globalThis.__cogen_phase__=1;' + program.slice(m[1].length)
    : 'globalThis.__cogen_phase__=1;' + program;
  return marked + '\n;' + SUFFIX + '(globalThis,' + JSON.stringify(argsJson) + ',' + maxOutputBytes + ')';
}

/** The program with its phase marker (set once its top level starts running). */
export function markProgram(program) {
  const m = DIRECTIVE.exec(program);
  return m ? m[1] + 'globalThis.__cogen_phase__=1;' + program.slice(m[1].length) : 'globalThis.__cogen_phase__=1;' + program;
}
