// A model's final answer read from its reply, where answers are scored (sandbox/verify.ts): the
// served run's /v1/score, the LLM solver and the benches read replies alike, and none of them needs
// the LLM agents for it (docs/DESIGN.md, "The house").
import type { AnswerKind } from '../core/task.js';

const FENCE = /```([A-Za-z0-9_+-]*)[^\S\n]*\n?([\s\S]*?)```/g;
const TAGGED = /^[ \t>*_#-]*(?:final\s+)?answer[*_ \t]*[:=][*_ \t]*(.*)$/gim;

function unquoteInline(s: string): string {
  const t = s.trim();
  const m = /^`([^`]*)`$/.exec(t);
  return (m ? m[1]! : t).trim();
}

/**
 * The final answer in a model's reply: the last fenced block (for programs, the last one that
 * declares a function), or the last `ANSWER: …` line if it comes later (a bare `ANSWER:` takes the
 * text below it); else the whole reply when it is nothing but a JSON literal (or, for programs, a
 * function); else ''. An empty answer is scored 0 by the verifier.
 */
export function extractAnswer(reply: string, kind: AnswerKind): string {
  let blocks = [...reply.matchAll(FENCE)]
    .map((m) => ({ at: m.index!, body: m[2]!.trim() }))
    .filter((b) => b.body.length > 0);
  if (kind === 'program' && blocks.some((b) => /\bfunction\b|=>/.test(b.body)))
    blocks = blocks.filter((b) => /\bfunction\b|=>/.test(b.body));
  const block = blocks[blocks.length - 1];
  const tagged = [...reply.matchAll(TAGGED)];
  const tag = tagged[tagged.length - 1];
  // Whichever comes last is the final answer.
  if (tag && (!block || tag.index! > block.at)) {
    const rest = unquoteInline(tag[1]!);
    if (rest) return rest;
    const below = reply.slice(tag.index! + tag[0].length).trim();
    if (below || !block) return below;
  }
  if (block) return block.body;
  return bareAnswer(reply, kind);
}

/** A reply that is nothing but the answer (as the natural rendering asks): a JSON literal or a program. */
function bareAnswer(reply: string, kind: AnswerKind): string {
  const t = unquoteInline(reply);
  if (!t) return '';
  if (kind === 'program') return /^(?:function\s+f\s*\(|\(?[\w\s,]*\)?\s*=>)/.test(t) ? t : '';
  try {
    JSON.parse(t);
    return t;
  } catch {
    return '';
  }
}
