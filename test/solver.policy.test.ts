// The solver policy: grammar, sampling log-probs, gradients, checkpoints; the policy's tests on the
// cpu backend and on tensorflow (test/solver-backends.ts says when that one runs).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { itOn, named, TENSORFLOW_SKIP, useBackend, type TestBackend } from './solver-backends.js';
import {
  answerFromView,
  createPolicy,
  grammarFor,
  solverConfigSchema,
  type SolverConfigInput,
} from '../src/solver/index.js';
import {
  allowedTokens,
  answerTokens,
  decode,
  decodeSafetensors,
  encode,
  encodeSafetensors,
  EOS,
  isWellFormed,
  lossAndGrads,
  lossOnly,
  optimizerStep,
  policyWeights,
  recomputeLogProbs,
  setWeight,
  stepToken,
  supervise,
  tokenText,
  VIEW,
  VOCAB_SIZE,
} from '../src/solver/testing.js';
import { valueType, type AnswerKind, type Json } from '../core/task.js';
import { workShape } from '../core/working.js';

const quiet = { log: () => {}, totalSteps: 20 };
const tinyOn = (over: Partial<SolverConfigInput> = {}, backend: TestBackend = 'cpu') =>
  solverConfigSchema.parse({
    backend,
    model: { dModel: 16, layers: 1, heads: 2, maxPromptLen: 12, maxAnswerLen: 6 },
    optim: { lr: 1e-2, warmupSteps: 2 },
    ...over,
  });
const prompts: { text: string; kind: AnswerKind; shape?: string }[] = [
  { text: 'f(x)=x+1 x=2', kind: 'literal' as AnswerKind, shape: 'int' },
  { text: 'a much longer prompt than twelve chars', kind: 'program' as AnswerKind },
  { text: 'ok', kind: 'literal' as AnswerKind },
];
const rewardOf = (t: string): number => (t.length % 2 === 0 ? 1 : 0) * 0.7 + (t.includes('1') ? 0.3 : 0);

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('tokenizer and config', () => {
  it('round-trips printable ASCII', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(...Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i))) }),
        (s) => decode(encode(s)) === s,
      ),
    );
  });
  it('parses {} into a working default', () => {
    const c = solverConfigSchema.parse({});
    expect(c.model.dModel % c.model.heads).toBe(0);
    expect(c.loss.type).toBe('grpo');
    expect(c.loss.beta).toBe(0);
    expect(() => solverConfigSchema.parse({ model: { dModel: 30, heads: 4 } })).toThrow(/divisible/);
  });
});

describe('grammar-constrained decoding', () => {
  /** A random path of tokens through a mask, as decoding takes one: its text and how many tokens it took. */
  const walk = (kind: string, maxLen: number, choices: number[]): { text: string; tokens: number } => {
    const g = grammarFor(kind);
    let s = g.start();
    let text = '';
    for (let k = 0; k <= maxLen; k++) {
      const m = allowedTokens(kind, s, maxLen - k);
      const ids = [...m.keys()].filter((i) => m[i]);
      expect(ids.length).toBeGreaterThan(0);
      const id = ids[choices[k % choices.length]! % ids.length]!;
      if (id === EOS) return { text, tokens: k };
      text += tokenText(id);
      s = stepToken(g, s, tokenText(id))!;
    }
    throw new Error('no <eos> within budget');
  };
  it('every random path through a literal mask is JSON within the budget, read back from how the solver writes numbers', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 24 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 30 }),
        (maxLen, ch) => {
          const { text: written, tokens } = walk('literal', maxLen, ch);
          expect(tokens).toBeLessThanOrEqual(maxLen);
          const t = answerFromView('literal', written);
          expect(() => JSON.parse(t)).not.toThrow();
          expect(isWellFormed('literal', t, 1000)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
  it('every random path through a program mask is balanced within the budget', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 30 }),
        (maxLen, ch) => {
          const { text: t, tokens } = walk('program', maxLen, ch);
          expect(tokens).toBeLessThanOrEqual(maxLen);
          expect(isWellFormed('program', t, 1000)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
  const SHAPES = [
    'int',
    'num',
    'bool',
    'str',
    'null',
    'arr',
    'obj',
    '[]',
    '[int]',
    '[int,int]',
    '[str,bool,arr]',
    '[obj,null]',
  ];
  // a number is at least a sign and two digits (src/solver/answer-view.ts)
  const minLen: Record<string, number> = { int: 3, num: 3, bool: 1, str: 2, null: 1, arr: 2, obj: 2 };
  const shapeMin = (shape: string): number =>
    shape.startsWith('[')
      ? shape === '[]'
        ? 2
        : 1 +
          shape
            .slice(1, -1)
            .split(',')
            .reduce((a, t) => a + minLen[t]! + 1, 0)
      : minLen[shape]!;
  it('every random path through a typed mask is a JSON value of that type, within the budget', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...SHAPES),
        fc.integer({ min: 0, max: 20 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 30 }),
        (shape, extra, ch) => {
          const maxLen = shapeMin(shape) + extra;
          const { text: t, tokens } = walk(shape, maxLen, ch);
          expect(tokens).toBeLessThanOrEqual(maxLen);
          const v = JSON.parse(answerFromView(shape, t)) as Json;
          if (shape.startsWith('[')) {
            const types = shape === '[]' ? [] : shape.slice(1, -1).split(',');
            expect(Array.isArray(v)).toBe(true);
            expect((v as Json[]).map(valueType)).toEqual(types);
          } else if (shape === 'num') expect(typeof v).toBe('number');
          else expect(valueType(v)).toBe(shape);
        },
      ),
      { numRuns: 400 },
    );
  });
  it('a typed grammar accepts every value of its type', () => {
    // compact JSON without escapes, as the literal grammar writes it
    const plain = fc.string({ unit: fc.constantFrom(...'abc xyz019-_'.split('')), maxLength: 6 });
    const value = fc.letrec((tie) => ({
      v: fc.oneof(
        { depthSize: 'small' },
        fc.integer({ min: -999, max: 999 }),
        fc.double({ min: -99, max: 99, noNaN: true }).map((x) => Math.round(x * 100) / 100),
        fc.boolean(),
        plain,
        fc.constant(null),
        fc.array(tie('v'), { maxLength: 3 }),
        fc.dictionary(plain, tie('v'), { maxKeys: 2 }),
      ),
    })).v as fc.Arbitrary<Json>;
    fc.assert(
      fc.property(fc.array(value, { minLength: 1, maxLength: 3 }), (args) => {
        const v = args[0]!;
        expect(isWellFormed(valueType(v), JSON.stringify(v), 200)).toBe(true);
        expect(isWellFormed(`[${args.map(valueType).join(',')}]`, JSON.stringify(args), 200)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
  it('a typed grammar rejects other types, fractions for int, and wrong argument counts', () => {
    for (const [shape, t] of [
      ['int', '1.5'],
      ['int', 'true'],
      ['bool', '1'],
      ['str', '[]'],
      ['null', 'false'],
      ['arr', '{}'],
      ['[int,str]', '[1]'],
      ['[int,str]', '[1,"a",2]'],
      ['[int,str]', '["a",1]'],
      ['[int]', '[]'],
      ['[]', '[1]'],
    ]) {
      expect(isWellFormed(shape!, t!, 24), `${shape} ${t}`).toBe(false);
    }
    for (const [shape, t] of [
      ['int', '-12'],
      ['num', '0.5'],
      ['[int,str]', '[1,"a"]'],
      ['[arr]', '[[1,"x"]]'],
      ['[]', '[]'],
    ])
      expect(isWellFormed(shape!, t!, 24)).toBe(true);
  });
  it('accepts typical answers and rejects malformed ones', () => {
    for (const t of ['-12', '0.5', '"ab c"', 'true', 'null', '[1,[2,"x"]]', '{"a":1,"b":[]}', '[]', '{}'])
      expect(isWellFormed('literal', t, 24)).toBe(true);
    for (const t of ['01', '-', '[1,]', '{"a"}', "'x'", 'tru', '1.'])
      expect(isWellFormed('literal', t, 24)).toBe(false);
    for (const t of ['a=>a*2', '(a,b)=>a+b', 'x=>[x,"(")]'.slice(0, 9) + ']', 's=>s.length'])
      expect(isWellFormed('program', t, 40)).toBe(true);
    for (const t of ['a=>(a', 'a=>a+', '(]', '"abc']) expect(isWellFormed('program', t, 40)).toBe(false);
  });
});

for (const backend of ['cpu', 'tensorflow'] as const)
  describe(`policy on ${backend}`, () => {
    const it = itOn(backend);
    const t = (name: string): string => named(backend, name);
    const tiny = (over: Partial<SolverConfigInput> = {}) => tinyOn(over, backend);
    beforeAll(async () => {
      if (!(backend === 'tensorflow' && TENSORFLOW_SKIP)) await useBackend(backend);
    });

    it(
      t('decodes the plain literal when a typed answer could not fit the budget or has one possible value'),
      async () => {
        const p = await createPolicy(tiny(), { seed: 5, ...quiet });
        // maxAnswerLen 6: `["","",""]` needs 10 tokens, so this shape falls back to 'literal'
        const out = (
          await p.sample(
            [
              { text: 'x', kind: 'literal', shape: '[str,str,str]' },
              { text: 'y', kind: 'literal', shape: 'bool' },
            ],
            3,
          )
        ).answers;
        for (const a of out[0]!) expect(isWellFormed('literal', a, 6)).toBe(true);
        for (const a of out[1]!) expect(['true', 'false']).toContain(a);
        // a shape with one possible answer would give it away: the plain literal is decoded instead
        const free = (
          await p.sample(
            [
              { text: 'z', kind: 'literal', shape: 'null' },
              { text: 'w', kind: 'literal', shape: '[]' },
            ],
            16,
          )
        ).answers;
        for (const g of free) expect(g.some((a) => a !== 'null' && a !== '[]')).toBe(true);
        p.dispose();
      },
    );
    it(t('writes a working in its template and answers its last value, keeping what it wrote'), async () => {
      const p = await createPolicy(tiny({ working: 'names', model: { ...tiny().model, maxAnswerLen: 24 } }), {
        seed: 4,
        ...quiet,
      });
      const work = workShape(['a*b=', { hole: 'int' }, ';$1-a=', { hole: 'int' }]);
      const ro = await p.sample(
        [
          { text: 'D:8,8@(a,b)=>a*b-a', kind: 'literal', shape: 'int', work },
          { text: 'x', kind: 'literal', shape: 'int' },
        ],
        3,
      );
      for (const [i, w] of ro.written![0]!.entries()) {
        expect(w).toMatch(/^a\*b=[+-]\d{2,};\$1-a=[+-]\d{2,}$/);
        expect(ro.answers[0]![i]).toBe(answerFromView(work, w!));
      }
      expect(ro.written![1]).toEqual([undefined, undefined, undefined]);
      p.dispose();
    });
    it(t('samples well-formed answers; training log-probs equal sampling log-probs'), async () => {
      const p = await createPolicy(tiny({ sampling: { temperature: 0.7, topP: 0.9, topK: 20 } }), {
        seed: 3,
        ...quiet,
      });
      const ro = await p.sample(prompts, 4);
      expect(ro.answers.map((g) => g.length)).toEqual([4, 4, 4]);
      expect(ro.rows.map((g) => g.map((r) => r.text))).toEqual(ro.answers);
      ro.answers.forEach((g, b) =>
        g.forEach((a) => {
          expect(isWellFormed(prompts[b]!.shape ?? prompts[b]!.kind, a, 6)).toBe(true);
        }),
      );
      const { sampled, recomputed } = await recomputeLogProbs(p, ro);
      let maxDiff = 0;
      sampled.flat().forEach((row, i) =>
        row.forEach((v, k) => {
          maxDiff = Math.max(maxDiff, Math.abs(v - recomputed.flat()[i]![k]!));
        }),
      );
      expect(maxDiff).toBeLessThan(1e-5);
      const g = await p.greedy(prompts);
      expect(g).toHaveLength(3);
      expect(await p.greedy(prompts)).toEqual(g);
      const st = await p.update(
        ro,
        ro.answers.map((grp) => grp.map(rewardOf)),
      );
      for (const k of ['loss', 'meanAbsAdvantage', 'clipFraction', 'kl', 'entropy', 'tokens', 'groups', 'lr'] as const)
        expect(Number.isFinite(st[k])).toBe(true);
      p.dispose();
    });

    it(t('all-equal rewards: dynamic sampling drops every group, no step'), async () => {
      const p = await createPolicy(tiny(), { seed: 1, ...quiet });
      const ro = await p.sample(prompts, 3);
      const st = await p.update(
        ro,
        ro.answers.map((g) => g.map(() => 1)),
      );
      expect(st.groups).toBe(0);
      expect(optimizerStep(p)).toBe(0);
      p.dispose();
    });

    for (const type of ['grpo', 'gmpo'] as const) {
      it(t(`${type}: gradients match finite differences on a tiny model`), async () => {
        // grpo also carries the entropy bonus, so its gradient is checked too
        const p = await createPolicy(tiny({ loss: { type, beta: 0.1, entropy: type === 'grpo' ? 0.05 : 0 } }), {
          seed: 11,
          ...quiet,
        });
        const ro = await p.sample(prompts, 3);
        // move old log-probs off the current ones, so ratios differ from 1 (some clipped, some not)
        ro.rows.flat().forEach((r, i) =>
          r.oldLogp.forEach((v, k) => {
            r.oldLogp[k] = v + 0.15 * Math.sin(3 * i + k);
          }),
        );
        const rewards = ro.answers.map((g, b) => g.map((_, i) => ((b + i) % 3 === 0 ? 1 : 0)));
        const { grads } = await lossAndGrads(p, ro, rewards);
        const w = await policyWeights(p);
        const checks: [string, number][] = [];
        for (const name of [
          'wte.weight',
          'wpe.weight',
          'h.0.attn.c_attn.weight',
          'h.0.mlp.c_fc.weight',
          'ln_f.weight',
          'h.0.ln_1.bias',
        ]) {
          const g = grads.get(name)!;
          let best = 0;
          for (let i = 0; i < g.length; i++) if (Math.abs(g[i]!) > Math.abs(g[best]!)) best = i;
          checks.push([name, best], [name, (best * 7 + 3) % g.length]);
        }
        const h = 1e-2;
        for (const [name, i] of checks) {
          const x = w.get(name)!.data[i]!;
          setWeight(p, name, i, x + h);
          const up = await lossOnly(p, ro, rewards);
          setWeight(p, name, i, x - h);
          const down = await lossOnly(p, ro, rewards);
          setWeight(p, name, i, x);
          const fd = (up - down) / (2 * h);
          const an = grads.get(name)![i]!;
          expect(Math.abs(fd - an), `${name}[${i}] fd=${fd} analytic=${an}`).toBeLessThan(2e-3 + 0.05 * Math.abs(an));
        }
        p.dispose();
      });
    }

    it(t('resume is exact: 2N steps = N steps + save/load + N steps'), async () => {
      const cfg = tiny({ loss: { type: 'dapo', mu: 2, beta: 0.05 } });
      const run = async (p: Awaited<ReturnType<typeof createPolicy>>, n: number) => {
        for (let s = 0; s < n; s++) {
          const ro = await p.sample(prompts, 4);
          await p.update(
            ro,
            ro.answers.map((g) => g.map(rewardOf)),
          );
        }
      };
      const a = await createPolicy(cfg, { seed: 5, ...quiet });
      await run(a, 4);
      const b = await createPolicy(cfg, { seed: 5, ...quiet });
      await run(b, 2);
      const dir = mkdtempSync(path.join(tmpdir(), 'cogen-solver-'));
      dirs.push(dir);
      await b.save(dir);
      b.dispose();
      const c = await createPolicy(cfg, { seed: 999, ...quiet });
      await c.load(dir);
      await run(c, 2);
      expect(optimizerStep(a)).toBe(8);
      expect(optimizerStep(c)).toBe(8);
      const wa = await policyWeights(a);
      const wc = await policyWeights(c);
      for (const [name, t] of wa) expect(Array.from(wc.get(name)!.data), name).toEqual(Array.from(t.data));
      // the weights file is plain safetensors
      const st = decodeSafetensors(readFileSync(path.join(dir, 'model.safetensors')));
      expect(st.tensors.get('wte.weight')!.shape).toEqual([VOCAB_SIZE, 16]);
      a.dispose();
      c.dispose();
    });
  });

describe("solver.init: another checkpoint's weights as the start", () => {
  it('loadWeights takes the weights and the KL reference, not the optimiser step or the sampling stream', async () => {
    const cfg = tinyOn({ loss: { type: 'grpo', beta: 0.05 } });
    const a = await createPolicy(cfg, { seed: 5, ...quiet });
    for (let s = 0; s < 2; s++) {
      const ro = await a.sample(prompts, 4);
      await a.update(
        ro,
        ro.answers.map((g) => g.map(rewardOf)),
      );
    }
    const dir = mkdtempSync(path.join(tmpdir(), 'cogen-solver-'));
    dirs.push(dir);
    await a.save(dir);
    const b = await createPolicy(cfg, { seed: 999, ...quiet });
    const fresh = await createPolicy(cfg, { seed: 999, ...quiet });
    await b.loadWeights(dir);
    const [wa, wb] = [await policyWeights(a), await policyWeights(b)];
    for (const [name, t] of wa) expect(Array.from(wb.get(name)!.data), name).toEqual(Array.from(t.data));
    expect(optimizerStep(b)).toBe(0);
    // the sampling stream is b's own: the same draws as a fresh policy of b's seed would make, from a's weights
    const ro = await b.sample(prompts, 4);
    await fresh.loadWeights(dir);
    expect((await fresh.sample(prompts, 4)).answers).toEqual(ro.answers);
    // the reference is the loaded weights: the first update's KL starts at 0
    const stats = await b.update(
      ro,
      ro.answers.map((g) => g.map(rewardOf)),
    );
    expect(stats.kl).toBeCloseTo(0, 6);
    for (const p of [a, b, fresh]) p.dispose();
  });

  it('refuses a checkpoint of another model shape, naming the field', async () => {
    const a = await createPolicy(tinyOn(), { seed: 1, ...quiet });
    const dir = mkdtempSync(path.join(tmpdir(), 'cogen-solver-'));
    dirs.push(dir);
    await a.save(dir);
    a.dispose();
    const wide = await createPolicy(
      tinyOn({ model: { dModel: 32, layers: 1, heads: 2, maxPromptLen: 12, maxAnswerLen: 6 } }),
      { seed: 1, ...quiet },
    );
    await expect(wide.loadWeights(dir)).rejects.toThrow(/model\.dModel = 16, this policy has 32/);
    await expect(wide.loadWeights(path.join(dir, 'nowhere'))).rejects.toThrow(/ENOENT/);
    wide.dispose();
  });

  it('refuses a checkpoint made under another solver view (or before views had names), saying so in one line', async () => {
    const a = await createPolicy(tinyOn(), { seed: 1, ...quiet });
    const dir = mkdtempSync(path.join(tmpdir(), 'cogen-solver-'));
    dirs.push(dir);
    await a.save(dir);
    const state = JSON.parse(readFileSync(path.join(dir, 'state.json'), 'utf8')) as Record<string, unknown>;
    expect(state.view).toBe(VIEW);
    for (const old of [
      { ...state, view: 'chars' },
      Object.fromEntries(Object.entries(state).filter(([k]) => k !== 'view')),
    ]) {
      writeFileSync(path.join(dir, 'state.json'), JSON.stringify(old));
      for (const load of [(d: string) => a.load(d), (d: string) => a.loadWeights(d)]) {
        const err = await load(dir).then(
          () => null,
          (e: Error) => e,
        );
        expect(err?.message).toMatch(/trained under the solver view 'chars' and this solver reads 'words-signed'/);
        expect(err?.message).not.toContain('\n');
      }
    }
    a.dispose();
  });

  it("supervise: the cross-entropy of the given answers in their grammar's tokens, and greedy learns them", async () => {
    const p = await createPolicy(tinyOn({ optim: { lr: 3e-2, warmupSteps: 0 } }), { seed: 4, ...quiet });
    const shown = [
      { text: 'D:true@(p)=>!p', kind: 'literal' as AnswerKind, shape: 'bool' },
      { text: 'D:3@a=>a*4', kind: 'literal' as AnswerKind, shape: 'int' },
    ];
    const answers = ['false', '12'];
    // the tokens it trains on: the answer grammar's (one word token for false, a number signed), <eos> last
    expect(answerTokens(p, shown[0]!, 'false').answer.map(tokenText)).toEqual(['false', '']);
    expect(answerTokens(p, shown[1]!, '12').answer).toEqual([...encode('+12'), EOS]);
    expect(() => answerTokens(p, shown[0]!, '12')).toThrow(/not a bool answer/);
    // its loss is the mean negative log-prob of those tokens under the sampling distribution (grammar mask, temperature 1)
    const ro = await p.sample(shown, 1);
    const rows = shown.map((s, i) => ({ ...ro.rows[i]![0]!, answer: answerTokens(p, s, answers[i]!).answer }));
    const lp = await recomputeLogProbs(p, {
      ...ro,
      rows: rows.map((r) => [
        {
          ...r,
          allowed: r.answer.map((_, k) =>
            allowedTokens(
              shown[rows.indexOf(r)]!.shape,
              stateAfter(shown[rows.indexOf(r)]!.shape, r.answer.slice(0, k)),
              6 - k,
            ),
          ),
        },
      ]),
    });
    const nll = -lp.recomputed.flat(2).reduce((a, b) => a + b, 0) / lp.recomputed.flat(2).length;
    const first = await supervise(p, shown, answers);
    expect(first.loss).toBeCloseTo(nll, 4);
    for (let i = 0; i < 60; i++) await supervise(p, shown, answers);
    expect(await p.greedy(shown)).toEqual(answers);
    p.dispose();
  });
});

/** The answer grammar's state after these tokens. */
function stateAfter(shape: string, ids: number[]): unknown {
  const g = grammarFor(shape);
  return ids.reduce((s, id) => stepToken(g, s, tokenText(id))!, g.start());
}

describe('checkpoint format', () => {
  it('safetensors layout: u64 header length, JSON header, aligned F32 data', () => {
    const buf = encodeSafetensors(
      new Map([
        ['x', { shape: [2, 2], data: new Float32Array([1, -2, 3.5, 0]) }],
        ['y', { shape: [1], data: new Float32Array([7]) }],
      ]),
    );
    const hlen = Number(buf.readBigUInt64LE(0));
    expect((8 + hlen) % 8).toBe(0);
    const header = JSON.parse(buf.toString('utf8', 8, 8 + hlen)) as Record<
      string,
      { dtype: string; data_offsets: number[] }
    >;
    expect(header.x).toMatchObject({ dtype: 'F32', shape: [2, 2], data_offsets: [0, 16] });
    expect(header.y!.data_offsets).toEqual([16, 20]);
    expect(buf.readFloatLE(8 + hlen + 8)).toBe(3.5);
    expect(Array.from(decodeSafetensors(buf).tensors.get('x')!.data)).toEqual([1, -2, 3.5, 0]);
  });
});
