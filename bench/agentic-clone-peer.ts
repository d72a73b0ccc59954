// bench:agentic-clone's peer (bench/agentic-clone.ts): the PyTorch nanoGPT of bench/ceiling_torch.py
// kept alive through a run, trained on the same batches as the solver and, between its steps,
// playing held-out environments as an Actor: its process decodes each context free, or the bench
// masks its next-token log-probs with the context's action grammar and picks the token itself.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRng, type Rng } from '../core/rng.js';
import type { Actor } from '../src/run/testing.js';
import {
  actionGrammar,
  decode,
  encode,
  EOS,
  stepToken,
  tokenMask,
  tokenText,
  type Grammar,
} from '../src/solver/testing.js';
import { Peer } from './decode-peer.js';

/** Starts the peer's process on a job (ceiling_torch.py's, with `serve`); the folder holding the job is the caller's to remove. */
export function startPeer(python: string, job: object): { peer: Peer; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'cogen-clone-'));
  writeFileSync(join(dir, 'job.json'), JSON.stringify(job));
  return { peer: new Peer('peer', python, ['bench/ceiling_torch.py', join(dir, 'job.json')]), dir };
}

/**
 * The peer as an actor: each context's ids (cut from the left as the solver cuts them) decoded by
 * its process, free (`free`: an action outside the language ends the episode as malformed) or, as
 * the solver decodes, under each context's action grammar: the bench masks the peer's next-token
 * log-probs with the grammar's allowed tokens and picks the argmax (or samples at temperature 1).
 */
export function peerActor(
  peer: Peer,
  maxPromptLen: number,
  maxAnswerLen: number,
  mode: 'grammar' | 'free',
  seed: number,
): Actor {
  const rng = createRng(`peer-sampling/${seed}`);
  return {
    decodeActions: async (prompts, greedy) => {
      const ids = prompts.map((p) => encode(p.text).slice(-maxPromptLen));
      const texts =
        mode === 'free'
          ? (await peer.ask<{ answers: string[] }>(JSON.stringify({ prompts: ids, sample: !greedy }))).answers
          : await maskedDecode(
              peer,
              ids,
              prompts.map((p) => actionGrammar(p.tools)),
              maxAnswerLen,
              greedy ? null : rng,
            );
      return texts.map((text) => ({ text, prompt: [], answer: [], oldLogp: new Float32Array(0), allowed: [] }));
    },
  };
}

async function maskedDecode(
  peer: Peer,
  ids: number[][],
  grammars: Grammar[],
  maxAnswerLen: number,
  rng: Rng | null,
): Promise<string[]> {
  const states = grammars.map((g) => g.start());
  const out: number[][] = ids.map(() => []);
  const live = new Set(ids.keys());
  for (let k = 0; k <= maxAnswerLen && live.size > 0; k++) {
    const rows = [...live];
    const { logprobs } = await peer.ask<{ logprobs: number[][] }>(
      JSON.stringify({ next: rows.map((i) => [ids[i], out[i]]) }),
    );
    rows.forEach((i, r) => {
      const allowed = tokenMask(grammars[i]!, states[i], maxAnswerLen - k);
      const lp = logprobs[r]!.map((x, t) => (allowed[t] ? x : -Infinity));
      const id = rng ? sampleFrom(lp, rng) : lp.indexOf(Math.max(...lp));
      if (id === EOS || !allowed[id]) live.delete(i);
      else {
        out[i]!.push(id);
        states[i] = stepToken(grammars[i]!, states[i], tokenText(id));
      }
    });
  }
  return out.map((o) => decode(o));
}

function sampleFrom(lp: number[], rng: Rng): number {
  const m = Math.max(...lp);
  const p = lp.map((x) => Math.exp(x - m));
  let u = rng.next() * p.reduce((a, b) => a + b, 0);
  for (let t = 0; t < p.length; t++) if ((u -= p[t]!) <= 0 && p[t]! > 0) return t;
  return lp.indexOf(m);
}
