// The grammar of a working (core/working.ts; docs/solver-view.md, "The working"): the template's
// text is copied token for token, in the tokens the tokenizer writes it in, and each hole is a
// typed literal (an int as the view writes it, `+07`, or true/false) that ends where the next text
// begins. Only the holes are the solver's choices; the last one is its answer.
import { workParts, type HoleType, type WorkPart } from '../../core/working.js';
import { answerIds, shapeGrammar, tokenMask, type Grammar } from './answer-grammar.js';
import { encode, EOS, tokenText, VOCAB_SIZE } from './tokenizer.js';

interface WState {
  /** The part being written (parts.length once the working is complete). */
  part: number;
  /** Characters of a text part written so far. */
  pos: number;
  /** A hole's literal state. */
  lit: unknown;
}

/** A template compiled: each text part's tokens, and the fewest tokens from each part to the end. */
interface Compiled {
  parts: WorkPart[];
  /** Per text part: its token ids and the character offsets where they end (token boundaries). */
  tokens: { ids: number[]; ends: Set<number> }[];
  /** Fewest tokens that write parts[i…] (an int hole is at least 3: `+07`; a bool 1). */
  minFrom: number[];
}

const MIN_HOLE_TOKENS: Record<HoleType, number> = { int: 3, bool: 1 };

function compile(shape: string): Compiled {
  const parts = workParts(shape);
  const tokens = parts.map((p) => {
    if (typeof p !== 'string') return { ids: [], ends: new Set<number>() };
    const ids = encode(p);
    let at = 0;
    return { ids, ends: new Set(ids.map((id) => (at += tokenText(id).length))) };
  });
  const minFrom = new Array<number>(parts.length + 1).fill(0);
  for (let i = parts.length - 1; i >= 0; i--) {
    const p = parts[i]!;
    minFrom[i] = minFrom[i + 1]! + (typeof p === 'string' ? tokens[i]!.ids.length : MIN_HOLE_TOKENS[p.hole]);
  }
  return { parts, tokens, minFrom };
}

const holeGrammar = (p: WorkPart): Grammar => shapeGrammar((p as { hole: HoleType }).hole);

function workGrammarOf(c: Compiled): Grammar<WState> {
  const at = (part: number, pos = 0): WState => {
    const p = c.parts[part];
    return { part, pos, lit: p !== undefined && typeof p !== 'string' ? holeGrammar(p).start() : null };
  };
  const next = (s: WState, ch: string): WState | null => {
    const p = c.parts[s.part];
    if (p === undefined) return null;
    if (typeof p === 'string') {
      if (p[s.pos] !== ch) return null;
      return s.pos + 1 === p.length ? at(s.part + 1) : { ...s, pos: s.pos + 1 };
    }
    const g = holeGrammar(p);
    const lit = g.next(s.lit, ch);
    if (lit !== null) return { ...s, lit };
    // the hole ends where the next text begins
    return g.canEnd(s.lit) ? next(at(s.part + 1), ch) : null;
  };
  return {
    start: () => at(0),
    next,
    minRemaining: (s) => {
      const p = c.parts[s.part];
      if (p === undefined) return 0;
      if (typeof p === 'string') return c.tokens[s.part]!.ids.length - tokensBefore(c, s) + c.minFrom[s.part + 1]!;
      return holeGrammar(p).minRemaining(s.lit) + c.minFrom[s.part + 1]!;
    },
    canEnd: (s) => {
      const p = c.parts[s.part];
      return (
        p === undefined || (s.part === c.parts.length - 1 && typeof p !== 'string' && holeGrammar(p).canEnd(s.lit))
      );
    },
    key: (s) => {
      const p = c.parts[s.part];
      return p !== undefined && typeof p !== 'string' ? `${s.part}|${holeGrammar(p).key(s.lit)}` : `${s.part}|${s.pos}`;
    },
    // a text part's tokens are its own: no token may end inside one of them
    midWord: (s) => {
      const p = c.parts[s.part];
      if (p === undefined) return false;
      if (typeof p === 'string') return s.pos > 0 && !c.tokens[s.part]!.ends.has(s.pos);
      return holeGrammar(p).midWord?.(s.lit) ?? false;
    },
    charsOnly: () => false,
  };
}

/** Tokens of the text part already written (its characters up to `pos` end on a boundary). */
function tokensBefore(c: Compiled, s: WState): number {
  let n = 0;
  for (const end of c.tokens[s.part]!.ends) if (end <= s.pos) n++;
  return n;
}

const compiled = new Map<string, { c: Compiled; g: Grammar<WState> }>();

function entry(shape: string): { c: Compiled; g: Grammar<WState> } {
  let e = compiled.get(shape);
  if (!e) {
    const c = compile(shape);
    e = { c, g: workGrammarOf(c) };
    if (compiled.size > 50_000) compiled.clear();
    compiled.set(shape, e);
  }
  return e;
}

/** The grammar of a working's shape. */
export const workGrammar = (shape: string): Grammar => entry(shape).g as Grammar;

const oneHot = new Map<number, Uint8Array>();
const holeMasks = new Map<string, Uint8Array>();

/**
 * The tokens allowed in a working (tokenMask's answer, without its scan of the vocabulary): in a
 * text part, its next token; in a hole, what its literal allows within the tokens left after the
 * rest of the template, and the next text's first token (or <eos> after the last hole) once the
 * literal can end.
 */
export function workTokens(shape: string, state: unknown, tokensLeft: number): Uint8Array {
  const { c } = entry(shape);
  const s = state as WState;
  const p = c.parts[s.part];
  if (p === undefined) return single(EOS);
  if (typeof p === 'string') return single(c.tokens[s.part]!.ids[tokensBefore(c, s)]!);
  const after = c.minFrom[s.part + 1]!;
  const hg = holeGrammar(p);
  const end = s.part + 1 < c.parts.length ? c.tokens[s.part + 1]!.ids[0]! : EOS;
  const key = `${p.hole}|${hg.key(s.lit)}|${tokensLeft - after}|${end}`;
  let m = holeMasks.get(key);
  if (!m) {
    m = tokenMask(hg, s.lit, tokensLeft - after);
    m[EOS] = 0;
    if (hg.canEnd(s.lit) && tokensLeft >= after) m[end] = 1;
    if (holeMasks.size > 100_000) holeMasks.clear();
    holeMasks.set(key, m);
  }
  return m;
}

function single(id: number): Uint8Array {
  let m = oneHot.get(id);
  if (!m) {
    m = new Uint8Array(VOCAB_SIZE);
    m[id] = 1;
    oneHot.set(id, m);
  }
  return m;
}

/** The holes' texts of a written working, in order (the last is the answer), or null where it does not follow its template. */
export function workHoles(shape: string, written: string): string[] | null {
  const { c, g } = entry(shape);
  const holes: string[] = [];
  let s: WState | null = g.start();
  let from = 0;
  for (let i = 0; i < written.length && s; i++) {
    const before: WState = s;
    s = g.next(s, written[i]!);
    if (s && s.part !== before.part && typeof c.parts[before.part] !== 'string') {
      holes.push(written.slice(from, i));
    }
    if (s && s.part !== before.part && typeof c.parts[s.part] !== 'string') from = i + 1;
  }
  if (!s || !g.canEnd(s)) return null;
  if (s.part === c.parts.length - 1) holes.push(written.slice(from));
  return holes;
}

/**
 * The tokens a working is written in, <eos> last, from its holes' texts as the view writes them:
 * each text part in its own tokens and each hole in its literal's, so that no token spans a text
 * and a hole (`-` then `-03` is two tokens, never `--`), as decoding writes it. Null where a hole's
 * text is not a literal of its type or the count of holes is wrong.
 */
export function workIds(shape: string, holeTexts: readonly string[]): number[] | null {
  const { c } = entry(shape);
  const ids: number[] = [];
  let k = 0;
  for (const [i, p] of c.parts.entries()) {
    if (typeof p === 'string') {
      ids.push(...c.tokens[i]!.ids);
      continue;
    }
    const hole = holeTexts[k++];
    const own = hole === undefined ? null : answerIds(shapeGrammar(p.hole), hole);
    if (!own) return null;
    ids.push(...own.slice(0, -1));
  }
  return k === holeTexts.length ? [...ids, EOS] : null;
}

/** A working's template in tokens: each text part's token ids, each hole's type (a peer that decodes under it: bench/ceiling_torch.py). */
export function workTemplate(shape: string): ({ text: number[] } | { hole: HoleType })[] {
  const { c } = entry(shape);
  return c.parts.map((p, i) => (typeof p === 'string' ? { text: c.tokens[i]!.ids } : { hole: p.hole }));
}
