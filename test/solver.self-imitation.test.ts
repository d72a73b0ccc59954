// Self-imitation (src/solver/self-imitation.ts): a rewarded answer is kept per prompt and put into a later
// group of that prompt that finds none, with reward 1 and the current log-probs as old ones; it
// survives a checkpoint; off, nothing changes.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  AnswerReplay,
  charId,
  type RolloutRow,
  EOS,
  policyWeights,
  recomputeLogProbs,
  VOCAB_SIZE,
  withKeptAnswers,
} from '../src/solver/testing.js';
import { createPolicy, type TrainablePolicy } from '../src/solver/index.js';

const row = (prompt: number[], text: string): RolloutRow => ({
  prompt,
  answer: [...text].map(charId).concat(EOS),
  oldLogp: new Float32Array(text.length + 1),
  allowed: Array.from({ length: text.length + 1 }, (_, i) =>
    Uint8Array.from({ length: VOCAB_SIZE }, (_, v) => (v === i + 4 ? 1 : 0)),
  ),
  text,
});
const ids = (m: Uint8Array) => Array.from(m.keys()).filter((i) => m[i]);

describe('AnswerReplay', () => {
  it('keeps the first rewarded answer per prompt and replaces the first row of a later group that found none', () => {
    const r = new AnswerReplay();
    const first = r.apply(
      [
        [row([5, 6], 'a'), row([5, 6], 'b')],
        [row([7], 'c'), row([7], 'd')],
      ],
      [
        [0, 1],
        [0, 0],
      ],
    );
    expect(first.replaced).toEqual([]);
    expect(first.rewards).toEqual([
      [0, 1],
      [0, 0],
    ]);
    expect(r.size).toBe(1);
    const rows = [
      [row([7], 'e'), row([7], 'f')],
      [row([5, 6], 'g'), row([5, 6], 'h')],
    ];
    const rewards = [
      [0, 0],
      [0, 0],
    ];
    const second = r.apply(rows, rewards);
    expect(second.replaced).toEqual([1]);
    expect(second.rewards).toEqual([
      [0, 0],
      [1, 0],
    ]);
    expect(second.rows.map((g) => g.map((x) => x.text))).toEqual([
      ['e', 'f'],
      ['b', 'h'],
    ]);
    expect(second.rows[1]![0]!.answer).toEqual(row([5, 6], 'b').answer);
    // what it was given is left as it was
    expect(rows[1]![0]!.text).toBe('g');
    expect(rewards).toEqual([
      [0, 0],
      [0, 0],
    ]);
    // a group that found its own right answer keeps its samples
    const third = r.apply([[row([5, 6], 'x'), row([5, 6], 'y')]], [[1, 0]]);
    expect(third.replaced).toEqual([]);
    expect(third.rows[0]!.map((x) => x.text)).toEqual(['x', 'y']);
  });
  it('round-trips through JSON', () => {
    const r = new AnswerReplay();
    r.apply([[row([1], 'ab'), row([1], 'cd')]], [[0, 1]]);
    const back = AnswerReplay.fromJSON(JSON.parse(JSON.stringify(r)));
    const out = back.apply([[row([1], 'zz'), row([1], 'yy')]], [[0, 0]]);
    expect(out.rows[0]![0]!.text).toBe('cd');
    expect(out.rows[0]![0]!.allowed.map(ids)).toEqual(row([1], 'cd').allowed.map(ids));
  });
});

describe('policy with selfImitation', () => {
  const prompts = [
    { text: 'D:a=>a+1@2', kind: 'literal' as const, shape: 'int' },
    { text: 'D:a=>a*3@3', kind: 'literal' as const, shape: 'int' },
  ];
  const make = (selfImitation: boolean) =>
    createPolicy(
      {
        backend: 'cpu',
        selfImitation,
        model: { dModel: 16, layers: 1, heads: 2, maxPromptLen: 16, maxAnswerLen: 4 },
      } as never,
      { seed: 9, totalSteps: 5000, log: () => {} },
    );
  const weights = async (p: TrainablePolicy) =>
    [...(await policyWeights(p)).values()].flatMap((w) => Array.from(w.data));

  it('updates on an all-wrong group with the kept answer, and raises its probability', async () => {
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    for (const on of [false, true]) {
      const p = await make(on);
      try {
        const first = await p.sample(prompts, 4);
        const keptRow = first.rows[0]![1]!;
        await p.update(first, [
          [0, 1, 0, 0],
          [0, 0, 0, 0],
        ]);
        const ro = await p.sample(prompts, 4);
        const zeros = [
          [0, 0, 0, 0],
          [0, 0, 0, 0],
        ];
        // the kept answer in place of the first of group 0, as sampled rows hold it
        const withKept = { ...ro, rows: [[{ ...keptRow }, ...ro.rows[0]!.slice(1)], ro.rows[1]!] };
        const before = (await recomputeLogProbs(p, withKept)).recomputed[0]![0]!;
        if (on) {
          // the rows the update trains on: the kept answer, with the policy's own log-probs as old ones (ratio 1)
          const trained = await withKeptAnswers(p, ro, zeros);
          expect(trained.rewards).toEqual([
            [1, 0, 0, 0],
            [0, 0, 0, 0],
          ]);
          expect(trained.rows[0]![0]!.text).toBe(keptRow.text);
          expect(Array.from(trained.rows[0]![0]!.oldLogp)).toEqual(before.map((x) => expect.closeTo(x, 5)));
          expect(ro.rows[0]![0]!.text).toBe(ro.answers[0]![0]);
        }
        const stats = await p.update(ro, zeros);
        if (!on) {
          expect(stats.groups).toBe(0);
          continue;
        }
        expect(stats.groups).toBe(1);
        // the step raised the kept answer's log-probs
        const after = (await recomputeLogProbs(p, withKept)).recomputed[0]![0]!;
        expect(sum(after)).toBeGreaterThan(sum(before));
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
      await a.update(await a.sample(prompts, 4), [
        [0, 1, 0, 0],
        [0, 0, 1, 0],
      ]);
      await a.save(dir);
      await b.load(dir);
      for (const p of [a, b]) {
        expect(
          (
            await p.update(await p.sample(prompts, 4), [
              [0, 0, 0, 0],
              [0, 0, 0, 0],
            ])
          ).groups,
        ).toBe(2);
      }
      expect(await weights(b)).toEqual(await weights(a));
    } finally {
      a.dispose();
      b.dispose();
    }
  });
});
