// Answers as text: JSON-like literals for deduction and abduction, program text for induction.
//
// parseLiteral accepts JSON (RFC 8259) with two tolerances: surrounding whitespace, and strings in
// single quotes (with the same escapes). Numbers must be finite; -0 reads as 0. It never throws:
// bad input gives {ok: false, reason}. formatLiteral writes the canonical text (JSON.stringify).
import type { Json } from '../core/task.js';

export type ParseResult = { ok: true; value: Json } | { ok: false; reason: string };

const MAX_DEPTH = 1000;

class ParseError extends Error {}

export function parseLiteral(text: string): ParseResult {
  if (typeof text !== 'string') return { ok: false, reason: 'answer is not text' };
  const p = new Parser(text);
  try {
    p.ws();
    if (p.i >= text.length) return { ok: false, reason: 'empty answer' };
    const value = p.value(0);
    p.ws();
    if (p.i < text.length) p.fail('unexpected text after the literal');
    return { ok: true, value };
  } catch (e) {
    if (e instanceof ParseError) return { ok: false, reason: e.message };
    return { ok: false, reason: `unparseable literal: ${(e as Error)?.message ?? String(e)}` };
  }
}

/** Canonical text of a JSON value. */
export function formatLiteral(value: Json): string {
  return JSON.stringify(value);
}

/** Structural equality of JSON values (object key order ignored; 0 and -0 equal). */
export function deepEqual(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  const aa = Array.isArray(a);
  if (aa !== Array.isArray(b)) return false;
  if (aa) {
    const bb = b as Json[];
    if (a.length !== bb.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i]!, bb[i]!)) return false;
    return true;
  }
  const ao = a as { [k: string]: Json };
  const bo = b as { [k: string]: Json };
  const ka = Object.keys(ao);
  if (ka.length !== Object.keys(bo).length) return false;
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(bo, k)) return false;
    if (!deepEqual(ao[k]!, bo[k]!)) return false;
  }
  return true;
}

class Parser {
  i = 0;
  constructor(private readonly s: string) {}

  fail(msg: string): never {
    const near = this.s.slice(this.i, this.i + 12);
    throw new ParseError(`${msg} at position ${this.i}${near ? ` near ${JSON.stringify(near)}` : ''}`);
  }

  ws(): void {
    const s = this.s;
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i);
      if (c === 32 || c === 9 || c === 10 || c === 13) this.i++;
      else break;
    }
  }

  value(depth: number): Json {
    if (depth > MAX_DEPTH) this.fail(`nested deeper than ${MAX_DEPTH}`);
    const c = this.s[this.i];
    switch (c) {
      case '{':
        return this.object(depth);
      case '[':
        return this.array(depth);
      case '"':
      case "'":
        return this.string(c);
      case 't':
        return this.word('true', true);
      case 'f':
        return this.word('false', false);
      case 'n':
        return this.word('null', null);
      case undefined:
        return this.fail('unexpected end of answer');
      default:
        if (c === '-' || (c >= '0' && c <= '9')) return this.number();
        return this.fail('unexpected character');
    }
  }

  word<T extends Json>(w: string, v: T): T {
    if (this.s.startsWith(w, this.i)) {
      this.i += w.length;
      return v;
    }
    return this.fail('unknown word');
  }

  number(): number {
    const s = this.s;
    const start = this.i;
    if (s[this.i] === '-') this.i++;
    if (s[this.i] === '0') this.i++;
    else if (s[this.i]! >= '1' && s[this.i]! <= '9') while (s[this.i]! >= '0' && s[this.i]! <= '9') this.i++;
    else this.fail('malformed number');
    if (s[this.i] === '.') {
      this.i++;
      if (!(s[this.i]! >= '0' && s[this.i]! <= '9')) this.fail('malformed number');
      while (s[this.i]! >= '0' && s[this.i]! <= '9') this.i++;
    }
    if (s[this.i] === 'e' || s[this.i] === 'E') {
      this.i++;
      if (s[this.i] === '+' || s[this.i] === '-') this.i++;
      if (!(s[this.i]! >= '0' && s[this.i]! <= '9')) this.fail('malformed number');
      while (s[this.i]! >= '0' && s[this.i]! <= '9') this.i++;
    }
    const n = Number(s.slice(start, this.i));
    if (!Number.isFinite(n)) {
      this.i = start;
      this.fail('number out of range');
    }
    return n === 0 ? 0 : n;
  }

  string(q: string): string {
    const s = this.s;
    this.i++;
    let out = '';
    let run = this.i;
    for (;;) {
      if (this.i >= s.length) this.fail('unterminated string');
      const c = s.charCodeAt(this.i);
      if (s[this.i] === q) {
        out += s.slice(run, this.i);
        this.i++;
        return out;
      }
      if (c < 0x20) this.fail('control character in string');
      if (c !== 92 /* \ */) {
        this.i++;
        continue;
      }
      out += s.slice(run, this.i);
      const e = s[this.i + 1];
      this.i += 2;
      switch (e) {
        case '"':
          out += '"';
          break;
        case "'":
          out += "'";
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          const hex = s.slice(this.i, this.i + 4);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) {
            this.i -= 2;
            this.fail('bad \\u escape');
          }
          out += String.fromCharCode(parseInt(hex, 16));
          this.i += 4;
          break;
        }
        default:
          this.i -= 2;
          this.fail('bad escape');
      }
      run = this.i;
    }
  }

  array(depth: number): Json[] {
    this.i++;
    const out: Json[] = [];
    this.ws();
    if (this.s[this.i] === ']') {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      out.push(this.value(depth + 1));
      this.ws();
      const c = this.s[this.i];
      if (c === ',') this.i++;
      else if (c === ']') {
        this.i++;
        return out;
      } else this.fail("expected ',' or ']'");
    }
  }

  object(depth: number): { [k: string]: Json } {
    this.i++;
    const out: { [k: string]: Json } = {};
    this.ws();
    if (this.s[this.i] === '}') {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      const q = this.s[this.i];
      if (q !== '"' && q !== "'") this.fail('expected a string key');
      const k = this.string(q);
      this.ws();
      if (this.s[this.i] !== ':') this.fail("expected ':'");
      this.i++;
      this.ws();
      const v = this.value(depth + 1);
      // '__proto__' must become an own data property, never the prototype.
      Object.defineProperty(out, k, { value: v, writable: true, enumerable: true, configurable: true });
      this.ws();
      const c = this.s[this.i];
      if (c === ',') this.i++;
      else if (c === '}') {
        this.i++;
        return out;
      } else this.fail("expected ',' or '}'");
    }
  }
}
