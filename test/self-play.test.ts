// Self-play (experimental; docs/proposers.md): the solver's transformer writes
// programs under a decoder constrained to the grammar's options. Any seed and any weights give a
// program of the grammar (it parses, the reference interpreter runs it, every choice token was one
// of its point's options); the same weights and seed give the same program; the proposer role's
// loss sees its own choice tokens only (renormalised over the options), and its sampled log-probs
// are what training recomputes.
import { parse } from 'acorn';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRng } from '../core/rng.js';
import { TASK_TYPES } from '../core/task.js';
import { drawReference, families } from '../generators/index.js';
import {
  ModelChooser,
  SelfPlayProposer,
  selfPlayConfigSchema,
  selfPlayPrompt,
  type ChoiceModel,
  type ChoiceRow,
  type ChoiceSession,
} from '../proposers/index.js';
import { createSandbox, type Sandbox } from '../sandbox/index.js';
import { createPolicy, solverConfigSchema, type TrainablePolicy } from '../src/solver/index.js';
import { charId, choiceGrads, encode, VOCAB_SIZE } from '../src/solver/testing.js';

const BASE_TYPES = TASK_TYPES.filter((t) => t === 'deduction' || t === 'abduction' || t === 'induction');
const armArb = fc.constantFrom(
  ...families
    .flatMap((f) =>
      Array.from({ length: f.levels }, (_, level) => BASE_TYPES.map((type) => ({ family: f.id, level, type }))),
    )
    .flat(),
);

/** A model with arbitrary logits: a hash of (seed, candidate, position, token) scaled by `scale` (large: near one-hot). */
function arbitraryModel(seed: number, scale: number): ChoiceModel {
  return {
    open(): ChoiceSession {
      let pos = 0;
      let cand = 0;
      return {
        restart: () => {
          cand++;
          pos = 0;
        },
        scores: (allowed) => [...allowed].map((ch) => scale * (createRng(`${seed}/${cand}/${pos}/${ch}`).next() - 0.5)),
        push: () => {
          pos++;
        },
        close: () => {},
      };
    },
  };
}

/** Draws one program of `arm` with the model's choices; checks it is one of the grammar's. */
function drawChecked(
  model: ChoiceModel,
  seed: number,
  arm: { family: string; level: number; type: (typeof BASE_TYPES)[number] },
  maxChoices = 48,
) {
  const session = model.open(selfPlayPrompt(arm));
  const chooser = new ModelChooser(session, maxChoices, 399);
  try {
    const drawn = drawReference(arm.family, createRng(seed), arm.level, arm.type, chooser);
    expect(() => parse(drawn.draft.program, { ecmaVersion: 'latest' })).not.toThrow();
    expect(drawn.outputs.length).toBeGreaterThan(0); // the reference interpreter ran it on its inputs
    expect(chooser.trace.length).toBeLessThanOrEqual(maxChoices);
    for (const c of [...chooser.trace, ...chooser.refused.flat()]) {
      expect(c.allowed.length).toBeGreaterThanOrEqual(2);
      expect(c.allowed).toContain(c.token);
      expect(c.logp).toBeLessThanOrEqual(0);
      expect(Number.isFinite(c.logp)).toBe(true);
    }
    return { program: drawn.draft.program, tokens: chooser.trace.map((c) => c.token).join(''), trace: chooser.trace };
  } finally {
    session.close();
  }
}

describe('the constrained decoder', () => {
  it('gives a program of the grammar for any seed and any logits (near one-hot included)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.integer(),
        fc.constantFrom(0.1, 3, 80),
        armArb,
        (seed, mseed, scale, arm) => {
          drawChecked(arbitraryModel(mseed, scale), seed, arm);
        },
      ),
      { numRuns: 120 },
    );
  });

  it("takes the fixed weights past maxChoices, and the program is still the grammar's", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 - 1 }), armArb, (seed, arm) => {
        drawChecked(arbitraryModel(seed, 3), seed, arm, 2);
      }),
      { numRuns: 40 },
    );
  });
});

describe('the transformer as the proposer', () => {
  const policies: TrainablePolicy[] = [];
  const policy = async (seed: number, temperature = 1): Promise<TrainablePolicy> => {
    const p = await createPolicy(
      solverConfigSchema.parse({
        backend: 'cpu',
        workers: 1,
        model: { dModel: 16, layers: 1, heads: 2, maxPromptLen: 48, maxAnswerLen: 8 },
        sampling: { temperature },
      }),
      { seed, totalSteps: 10, log: () => {}, proposalLen: 48 },
    );
    policies.push(p);
    return p;
  };
  const model = (p: TrainablePolicy): ChoiceModel => ({ open: (prompt) => p.openChoices(prompt) });
  afterAll(() => {
    for (const p of policies) p.dispose();
  });

  it('gives a program of the grammar for any seed and any initial weights', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.integer({ min: 0, max: 1000 }),
        armArb,
        async (seed, wseed, arm) => {
          drawChecked(model(await policy(wseed)), seed, arm);
        },
      ),
      { numRuns: 12 },
    );
  });

  it('is deterministic: the same weights and seed write the same program with the same tokens', async () => {
    const a = await policy(7);
    const b = await policy(7);
    for (const seed of [1, 2, 3]) {
      const arm = { family: 'arith', level: 2, type: 'deduction' as const };
      expect(drawChecked(model(b), seed, arm)).toEqual(drawChecked(model(a), seed, arm));
    }
  });

  it('samples at log-probs that training recomputes, and its loss sees its choice tokens only', async () => {
    const p = await policy(11, 0.7);
    const arm = { family: 'arith', level: 2, type: 'deduction' as const };
    const prompt = selfPlayPrompt(arm, { program: 'function f(a) { return a * 3; }' });
    const session = p.openChoices(prompt);
    const chooser = new ModelChooser(session, 48, 399);
    drawReference(arm.family, createRng(5), arm.level, arm.type, chooser);
    session.close();
    expect(chooser.trace.length).toBeGreaterThan(1);
    const row: ChoiceRow = {
      prompt,
      tokens: chooser.trace.map((c) => c.token).join(''),
      allowed: chooser.trace.map((c) => c.allowed),
      logp: chooser.trace.map((c) => c.logp),
      adv: 1,
    };
    // grpo with A = 1 and ratio exp(logp − old): the loss is −1 exactly when training recomputes the sampled log-probs
    const { loss, grads } = await choiceGrads(p, [row]);
    expect(loss).toBeCloseTo(-1, 4);
    // The output side of the tied embedding moves only for tokens that were options at some choice
    // (or are inputs: the prompt and the choices); every other token's row has no gradient.
    const wte = grads.get('wte.weight')!;
    const d = wte.length / VOCAB_SIZE;
    const touched = new Set([...encode(prompt), ...[...row.tokens, ...row.allowed.join('')].map(charId)]);
    const rowNorm = (id: number) => Math.hypot(...wte.subarray(id * d, (id + 1) * d));
    for (let id = 4; id < VOCAB_SIZE; id++) if (!touched.has(id)) expect(rowNorm(id)).toBe(0);
    expect(Math.max(...[...new Set(row.allowed.join(''))].map((ch) => rowNorm(charId(ch))))).toBeGreaterThan(0);
    // A row whose every choice had one option left would carry no gradient: the log-prob of a forced token is 0.
    const forced = await choiceGrads(p, [{ ...row, allowed: [...row.tokens] }]);
    expect(Math.max(...[...forced.grads.values()].map((g) => Math.max(...g.map(Math.abs))))).toBe(0);
  });
});

describe("the proposer role's reward and baselines", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await createSandbox({ workers: 1 });
  });
  afterAll(() => sandbox.close());

  it('scores drafts by learnability, novelty and validity, with one baseline per task type', async () => {
    const sp = new SelfPlayProposer(selfPlayConfigSchema.parse({ enabled: true }));
    const seen = new Set<string>();
    const rng = createRng(3);
    const tasks = [];
    for (const type of ['deduction', 'abduction'] as const) {
      for (let i = 0; i < 4; i++)
        tasks.push(
          await sp.generate(
            sandbox,
            { family: 'arith', level: 1, type },
            rng.fork(`${type}/${i}`),
            seen,
            20,
            arbitraryModel(i, 3),
          ),
        );
    }
    expect(tasks.every((t) => t.proposer === 'self-play@1')).toBe(true);
    // one learnable task per type (p = 1/4), the rest solved always
    const out = sp.learn(tasks.map((t, i) => ({ taskId: t.id, rewards: i % 4 === 0 ? [1, 0, 0, 0] : [1, 1, 1, 1] })))!;
    expect(out.stats.validity).toBeGreaterThan(0);
    for (const type of ['deduction', 'abduction']) {
      // z-scored within the type: some drafts above their type's mean, some below
      const advs = out.rows.filter((r) => r.prompt.includes(type)).map((r) => r.adv);
      expect(Math.max(...advs)).toBeGreaterThan(0);
      expect(Math.min(...advs)).toBeLessThan(0);
    }
    expect(sp.learn([])).toBeNull();
    expect(sp.state()).toEqual({ version: 1, pending: [] });
  });
});
