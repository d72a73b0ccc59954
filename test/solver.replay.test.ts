// Self-imitation (src/solver/replay.ts): a rewarded answer is kept per prompt and put into a later
// group of that prompt that finds none, with reward 1 and the current log-probs as old ones; it
// survives a checkpoint; off, nothing changes.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DecodedRow } from '../src/solver/decode.js';
import { createPolicy, type TransformerPolicy } from '../src/solver/index.js';
import { AnswerReplay } from '../src/solver/replay.js';
import { charId, EOS, VOCAB_SIZE } from '../src/solver/tokenizer.js';

const row = (prompt: number[], text: string): DecodedRow => ({
  group: 0, prompt, answer: [...text].map(charId).concat(EOS), oldLogp: new Float32Array(text.length + 1),
  allowed: Array.from({ length: text.length + 1 }, (_, i) => Uint8Array.from({ length: VOCAB_SIZE }, (_, v) => (v === i + 4 ? 1 : 0))), text,
});

describe('AnswerReplay', () => {
  it('keeps the first rewarded answer per prompt and replaces the first row of a later group that found none', () => {
    const r = new AnswerReplay();
    const first = r.apply([row([5, 6], 'a'), row([5, 6], 'b'), row([7], 'c'), row([7], 'd')], [[0, 1], [0, 0]], 2);
    expect(first.replaced).toEqual([]);
    expect(first.rewards).toEqual([[0, 1], [0, 0]]);
    expect(r.size).toBe(1);
    const rows = [row([7], 'e'), row([7], 'f'), row([5, 6], 'g'), row([5, 6], 'h')];
    const second = r.apply(rows, [[0, 0], [0, 0]], 2);
    expect(second.replaced).toEqual([2]);
    expect(second.rewards).toEqual([[0, 0], [1, 0]]);
    expect(rows[2]!.text).toBe('b');
    expect(rows[2]!.answer).toEqual(row([5, 6], 'b').answer);
    // a group that found its own right answer keeps its samples
    const rows3 = [row([5, 6], 'x'), row([5, 6], 'y')];
    expect(r.apply(rows3, [[1, 0]], 2).replaced).toEqual([]);
    expect(rows3[0]!.text).toBe('x');
  });
  it('round-trips through JSON', () => {
    const r = new AnswerReplay();
    r.apply([row([1], 'ab'), row([1], 'cd')], [[0, 1]], 2);
    const back = AnswerReplay.fromJSON(JSON.parse(JSON.stringify(r)));
    const rows = [row([1], 'zz'), row([1], 'yy')];
    back.apply(rows, [[0, 0]], 2);
    expect(rows[0]!.text).toBe('cd');
    expect(rows[0]!.allowed.map((m) => Array.from(m.keys()).filter((i) => m[i]))).toEqual(row([1], 'cd').allowed.map((m) => Array.from(m.keys()).filter((i) => m[i])));
  });
});

describe('policy with selfImitation', () => {
  const prompts = [{ text: 'D:a=>a+1@2', kind: 'literal' as const, shape: 'int' }, { text: 'D:a=>a*3@3', kind: 'literal' as const, shape: 'int' }];
  const make = (selfImitation: boolean) => createPolicy({ backend: 'cpu', selfImitation, model: { dModel: 16, layers: 1, heads: 2, maxPromptLen: 16, maxAnswerLen: 4 } } as never, { seed: 9, log: () => {} });
  const weights = async (p: TransformerPolicy) => [...(await p.weights()).values()].flatMap((w) => Array.from(w.data));

  it('updates on an all-wrong group with the kept answer, and raises its probability', async () => {
    for (const on of [false, true]) {
      const p = await make(on);
      try {
        const g1 = await p.sample(prompts, 4);
        const kept = g1[0]![1]!.text;
        const keptRow = { ...p.lastRollout()!.rows[1]! };
        await p.update([[0, 1, 0, 0], [0, 0, 0, 0]]);
        await p.sample(prompts, 4);
        const ro = p.lastRollout()!;
        // the kept answer's log-probs under the policy as it is before this update
        const sampled = ro.rows[0]!;
        ro.rows[0] = { ...keptRow };
        const before = (await p.recomputeLogProbs()).recomputed;
        ro.rows[0] = sampled;
        const stats = await p.update([[0, 0, 0, 0], [0, 0, 0, 0]]);
        if (!on) {
          expect(stats.groups).toBe(0);
          continue;
        }
        expect(stats.groups).toBe(1);
        expect(ro.rows[0]!.text).toBe(kept);
        // the replaced row's old log-probs are the policy's own (ratio 1), and the step raised them
        const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
        expect(Array.from(ro.rows[0]!.oldLogp)).toEqual(before[0]!.map((x) => expect.closeTo(x, 5)));
        await p.sample(prompts, 4);
        p.lastRollout()!.rows[0] = { ...ro.rows[0]! };
        const after = (await p.recomputeLogProbs()).recomputed;
        expect(sum(after[0]!)).toBeGreaterThan(sum(Array.from(ro.rows[0]!.oldLogp)));
      } finally {
        p.dispose();
      }
    }
  });

  it('keeps its answers across a checkpoint: resumed weights equal the uninterrupted ones', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cogen-replay-'));
    const a = await make(true);
    const b = await make(true);
    try {
      await a.sample(prompts, 4);
      await a.update([[0, 1, 0, 0], [0, 0, 1, 0]]);
      await a.save(dir);
      await b.load(dir);
      for (const p of [a, b]) {
        await p.sample(prompts, 4);
        expect((await p.update([[0, 0, 0, 0], [0, 0, 0, 0]])).groups).toBe(2);
      }
      expect(await weights(b)).toEqual(await weights(a));
    } finally {
      a.dispose();
      b.dispose();
    }
  });
});
