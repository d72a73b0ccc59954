// The code that runs first in every fresh QuickJS context (as source text, not in the host).
//
// It is called as PRELUDE(programSource, argsJson, maxOutputBytes) and returns one string:
//   'v' + JSON text of the result, or 'e' + reason + '\n' + detail.
// It captures the builtins it needs before the program runs (a program that tampers with them
// can only spoil its own result), makes the environment deterministic (seeded Math.random, a
// fixed Date in UTC, a silent console), evaluates the program in global scope, calls f, and
// serialises the result strictly: only null, booleans, finite numbers (-0 becomes 0), strings,
// dense arrays and plain objects are JSON values; anything else is 'non-serialisable'.
export const PRELUDE = String.raw`(function (src, argsJson, maxOut) {
  'use strict';
  var g = globalThis, ev = g.eval, jparse = JSON.parse, jstr = JSON.stringify;
  var isArr = Array.isArray, keys = Object.keys, gpo = Object.getPrototypeOf, defProp = Object.defineProperty;
  var OP = Object.prototype, Err = Error, SynErr = SyntaxError, IntErr = g.InternalError, RangeErr = RangeError;
  var NONSER = {}, BIG = {};
  var why = '';

  // Determinism: Math.random is a fixed-seed generator (mulberry32), Date is frozen at
  // 2025-01-01T00:00:00Z and reads local time as UTC, console prints nothing.
  var seed = 0x2545f491;
  defProp(Math, 'random', { value: function random() {
    seed = (seed + 0x6d2b79f5) | 0;
    var t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }, writable: true, configurable: true });
  var RealDate = g.Date, FixedDate;
  if (RealDate) defProp(g, 'Date', { configurable: true, enumerable: false,
    get: function () {
      if (!FixedDate) {
        var NOW = 1735689600000;
        FixedDate = function Date(a, b, c, d, e, f2, ms) {
          if (!new.target) return new RealDate(NOW).toISOString();
          var n = arguments.length;
          if (n === 0) return Reflect.construct(RealDate, [NOW], new.target);
          if (n === 1) return Reflect.construct(RealDate, [a], new.target);
          return Reflect.construct(RealDate, [RealDate.UTC.apply(null, arguments)], new.target);
        };
        var P = RealDate.prototype;
        FixedDate.prototype = P;
        defProp(P, 'constructor', { value: FixedDate, writable: true, configurable: true });
        FixedDate.now = function now() { return NOW; };
        FixedDate.UTC = RealDate.UTC;
        FixedDate.parse = RealDate.parse;
        var L = ['FullYear', 'Month', 'Date', 'Day', 'Hours', 'Minutes', 'Seconds', 'Milliseconds'];
        for (var i = 0; i < L.length; i++) {
          defProp(P, 'get' + L[i], { value: P['getUTC' + L[i]], writable: true, configurable: true });
          if (L[i] !== 'Day') defProp(P, 'set' + L[i], { value: P['setUTC' + L[i]], writable: true, configurable: true });
        }
        defProp(P, 'getTimezoneOffset', { value: function getTimezoneOffset() { return 0; }, writable: true, configurable: true });
        defProp(P, 'toString', { value: P.toISOString, writable: true, configurable: true });
      }
      return FixedDate;
    },
    set: function (v) { defProp(g, 'Date', { value: v, writable: true, configurable: true }); } });
  var noop = function () {};
  g.console = { log: noop, info: noop, warn: noop, error: noop, debug: noop };

  // Strict JSON serialisation with a size cap, run inside the sandbox (and so under its limits).
  var out = '', depth = 0, stack = [];
  function put(s) {
    if (out.length + s.length > maxOut) throw BIG;
    out += s;
  }
  function ser(v) {
    switch (typeof v) {
      case 'string': put(jstr(v)); return;
      case 'number':
        if (v !== v || v === 1 / 0 || v === -1 / 0) { why = 'non-finite number ' + v; throw NONSER; }
        put(v === 0 ? '0' : '' + v); return;
      case 'boolean': put(v ? 'true' : 'false'); return;
      case 'object':
        if (v === null) { put('null'); return; }
        for (var s = 0; s < depth; s++) if (stack[s] === v) { why = 'cyclic structure'; throw NONSER; }
        if (depth >= 1000) { why = 'nested deeper than 1000'; throw NONSER; }
        stack[depth++] = v;
        if (isArr(v)) {
          var n = v.length;
          put('[');
          for (var i = 0; i < n; i++) {
            if (i) put(',');
            if (!(i in v)) { why = 'sparse array'; throw NONSER; }
            ser(v[i]);
          }
          put(']');
        } else {
          var p = gpo(v);
          if (p !== OP && p !== null) { why = 'not a plain object'; throw NONSER; }
          var ks = keys(v);
          put('{');
          for (var j = 0; j < ks.length; j++) {
            if (j) put(',');
            put(jstr(ks[j]));
            put(':');
            ser(v[ks[j]]);
          }
          put('}');
        }
        depth--;
        return;
      default:
        why = typeof v; throw NONSER;
    }
  }
  function describe(e) {
    try {
      if (e instanceof Err) return '' + e.name + ': ' + e.message;
      if (typeof e === 'object' && e !== null) return 'non-Error object thrown';
      if (typeof e === 'function') return 'function thrown';
      return 'thrown: ' + String(e);
    } catch (_) {
      return 'unprintable exception';
    }
  }
  function classify(e) {
    if (e instanceof Err) {
      var m = '' + e.message;
      if (m === 'out of memory' || m === 'string too long') return 'memory';
      if (m === 'stack overflow' || m === 'Maximum call stack size exceeded') return 'stack';
      if (m.slice(0, 10) === 'forbidden:') return 'forbidden';
    }
    return 'runtime-error';
  }

  var stage = 'parse';
  try {
    var args = jparse(argsJson);
    g.__cogen_parsed__ = 0;
    g.__cogen_f__ = undefined;
    // Mark the start (after a 'use strict' directive, if any) so that a SyntaxError thrown by
    // the program's own top-level code is not mistaken for a parse error, and capture f at the
    // end (a strict program's declarations stay inside its eval scope).
    var m = /^(\s*(['"])use strict\2\s*;?)/.exec(src);
    var code = (m ? m[1] + '__cogen_parsed__=1;' + src.slice(m[1].length) : '__cogen_parsed__=1;' + src) +
      '\n;__cogen_f__ = typeof f === "function" ? f : void 0;';
    stage = 'eval';
    (0, ev)(code);
    var fn = g.__cogen_f__;
    if (typeof fn !== 'function') return 'eno-function\nthe program does not define a function f';
    stage = 'call';
    var r = fn.apply(undefined, args);
    stage = 'serialise';
    ser(r);
    return 'v' + out;
  } catch (e) {
    if (e === BIG) return 'eoutput-too-large\nresult exceeds ' + maxOut + ' bytes';
    if (e === NONSER) return 'enon-serialisable\n' + why;
    if (stage === 'eval' && e instanceof SynErr && g.__cogen_parsed__ !== 1) return 'esyntax\n' + describe(e);
    var c = classify(e);
    if (stage === 'serialise' && c === 'runtime-error') return 'enon-serialisable\nexception during serialisation: ' + describe(e);
    return 'e' + c + '\n' + describe(e);
  }
})`;
