// Self-imitation (answer replay), an opt-in extension of the update (`solver.selfImitation`): the
// policy keeps, per prompt, one answer of its own that earned reward 1, and when a later group for
// that prompt finds no right answer, the kept answer takes the place of the group's first sample,
// with reward 1 and the current policy's log-probs as its old ones (ratio 1 at the first inner
// iteration). The losses stay the published ones; what changes is which answers enter the group,
// as DAPO's dynamic sampling changes which groups enter the batch. Nothing is shown to the policy
// that it did not write and a verifier did not reward. As Oh et al.'s self-imitation learning
// (2018) and RAFT/ReST-style expert iteration, it keeps rare right answers from being lost.
//
// Why (bench:learn, curricula/learn.yaml): from random initialisation a right arithmetic answer is
// found for a task now and then, and without replay the policy rarely finds it again; with a
// reference answer in every group the same model reaches held-out 0.8 on arith level 0
// (bench/answers-shown.ts); with replay, RL from scratch reaches it too (bench:learn).
import { isSolved } from '../../core/rules.js';
import type { DecodedRow } from './decode.js';
import { VOCAB_SIZE } from './tokenizer.js';

interface Kept {
  answer: number[];
  /** the grammar's masks along the answer (read only) */
  allowed: Uint8Array[];
  text: string;
}

/** A kept answer in a checkpoint: its masks as the lists of allowed token ids. */
export interface KeptJson {
  answer: number[];
  allowed: number[][];
  text: string;
}

export class AnswerReplay {
  private readonly kept = new Map<string, Kept>();

  get size(): number {
    return this.kept.size;
  }

  /**
   * Keeps the right answers of this rollout (rows[b][i], rewards[b][i]) and puts kept answers into
   * the groups that found none. Returns the rows and rewards the update should use, and the groups
   * whose first row was replaced (its oldLogp, still the sampled answer's, is the caller's to set).
   * The arguments are left as they are.
   */
  apply(rows: DecodedRow[][], rewards: number[][]): { rows: DecodedRow[][]; rewards: number[][]; replaced: number[] } {
    const outRows = rows.map((g) => g.slice());
    const out = rewards.map((g) => g.slice());
    const replaced: number[] = [];
    for (let b = 0; b < out.length; b++) {
      const key = rows[b]![0]!.prompt.join(',');
      const hit = out[b]!.findIndex(isSolved);
      if (hit >= 0) {
        const row = rows[b]![hit]!;
        if (!this.kept.has(key))
          this.kept.set(key, { answer: row.answer.slice(), allowed: row.allowed, text: row.text });
        continue;
      }
      const k = this.kept.get(key);
      if (!k) continue;
      outRows[b]![0] = { ...rows[b]![0]!, answer: k.answer.slice(), allowed: k.allowed, text: k.text };
      out[b]![0] = 1;
      replaced.push(b);
    }
    return { rows: outRows, rewards: out, replaced };
  }

  toJSON(): [string, KeptJson][] {
    const ids = (m: Uint8Array): number[] => Array.from(m.keys()).filter((i) => m[i]);
    return [...this.kept].map(([k, v]) => [k, { answer: v.answer, allowed: v.allowed.map(ids), text: v.text }]);
  }

  static fromJSON(entries: [string, KeptJson][]): AnswerReplay {
    const r = new AnswerReplay();
    for (const [k, v] of entries) {
      const allowed = v.allowed.map((ids) => {
        const m = new Uint8Array(VOCAB_SIZE);
        for (const i of ids) m[i] = 1;
        return m;
      });
      r.kept.set(k, { answer: v.answer, allowed, text: v.text });
    }
    return r;
  }
}
