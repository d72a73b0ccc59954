// The source text the engine adds to a task's context (it runs inside QuickJS, never in the host).
//
// Parsing is a large share of the cost of a context (QuickJS parses only a few MB/s in WASM), so
// the engine adds as little text as it can: the program gets a one-statement phase marker
//
//   globalThis.__cogen_phase__=1;<program>
//
// (after a leading 'use strict' directive, so the directive still counts), which lets the host tell
// a parse error (no marker) from an exception thrown by the program's top-level code; the engine
// itself knows whether a later exception came from f or from serialising its result. Results that
// are objects are serialised with JSON.stringify and REPLACER, compiled once per context and only
// when a task first returns an object; it admits only null, booleans, finite numbers, strings,
// arrays and plain objects (so undefined, NaN, ±Infinity, functions, symbols, bigints, class
// instances, sparse arrays and the like are 'non-serialisable'; toJSON is honoured as
// JSON.stringify does; -0 prints as 0).
/** Failure codes, [reason, detail]: thrown by REPLACER as '\x01' + code, or used by the engine. */
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

/** The program with its phase marker (set once its top level starts running). */
export function markProgram(program) {
  const m = DIRECTIVE.exec(program);
  return m
    ? m[1] + 'globalThis.__cogen_phase__=1;' + program.slice(m[1].length)
    : 'globalThis.__cogen_phase__=1;' + program;
}

/**
 * The UTF-8 length of a string, as a factory of the builtins it needs (Reflect.apply and
 * String.prototype.charCodeAt, captured before the program ran): what the host would copy out,
 * measured inside the context for a result that might be over the output cap. A lone surrogate
 * counts 3 bytes, as the copy encodes it.
 */
export const UTF8_LENGTH =
  '(function(A,C){return function(s){var n=s.length,i=0,c;for(;i<s.length;i++){c=A(C,s,[i]);' +
  'if(c>=128){n+=c>=2048?2:1;if(c>=55296&&c<56320&&i+1<s.length&&(A(C,s,[i+1])&64512)==56320)i++}}return n}})';
