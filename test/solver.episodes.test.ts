// The built-in solver playing environments (docs/DESIGN.md, "Environments"): the action language,
// sampling log-probs on multi-turn transcripts, the loss masked to the agent's own tokens, and a
// deterministic run.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRng } from '../core/rng.js';
import { createSandbox, type Sandbox } from '../sandbox/index.js';
import { Env, generateEnv, type EnvKind, type EnvSpec, type RepairSpec, type SearchSpec } from '../envs/index.js';
import { compactProgram } from '../generators/index.js';
import {
  answerInView,
  createPolicy,
  parseAction,
  solverConfigSchema,
  turnContext,
  type ActionTool,
  type EpisodeRows,
  type SolverConfigInput,
  type Turn,
} from '../src/solver/index.js';
import {
  actionGrammar,
  actionTokens,
  decode,
  encode,
  EOS,
  episodesLoss,
  memoryChunks,
  policyWeights,
  superviseActions,
  type TrainRow,
  turnLogProbs,
} from '../src/solver/testing.js';
import {
  evaluateSolver,
  oneTokenEdits,
  playSolver,
  solverObservation,
  solverPrompt,
  solverTools,
  toEnvAction,
  trainAgentic,
  type SolverEpisode,
} from '../src/run/testing.js';

const tiny = (over: Partial<SolverConfigInput> = {}) =>
  solverConfigSchema.parse({
    backend: 'cpu',
    workers: 1,
    model: { dModel: 16, layers: 1, heads: 2, maxPromptLen: 96, maxAnswerLen: 16 },
    optim: { lr: 1e-2, warmupSteps: 0 },
    ...over,
  });
const quiet = { log: () => {}, totalSteps: 10 };

let sb: Sandbox;
const specs: Partial<Record<EnvKind, EnvSpec>> = {};
beforeAll(async () => {
  sb = await createSandbox({ workers: 1 });
  for (const kind of ['search', 'probe', 'repair'] as const)
    specs[kind] = await generateEnv(sb, { kind, family: 'arith', level: 0, rng: createRng(`episodes-test/${kind}`) });
});
afterAll(async () => {
  await sb?.close();
});

/** An argument list as the solver writes it: its numbers signed, two digits wide (src/solver/answer-view.ts). */
const written = (json: string): string => answerInView('literal', json);

describe('action language', () => {
  const tools: ActionTool[] = [
    { name: 'call', arg: '[int,str]' },
    { name: 'submit', arg: 'program' },
  ];
  it('reads back what it writes, a number signed and two digits wide (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e6, max: 1e6 }), fc.stringMatching(/^[a-z0-9]{0,5}$/), (n, s) => {
        const arg = JSON.stringify([n, s]);
        expect(parseAction(tools, `call(${answerInView('[int,str]', arg)})`)).toEqual({ tool: 'call', arg });
      }),
    );
    expect(parseAction(tools, 'call([+07,"a1"])')).toEqual({ tool: 'call', arg: '[7,"a1"]' });
    expect(parseAction(tools, 'submit(a=>(a+1)*2)')).toEqual({ tool: 'submit', arg: 'a=>(a+1)*2' });
  });
  it('refuses text outside the language', () => {
    for (const bad of [
      'call([1])',
      'call([1,"a"])',
      'call(["a",+01])',
      'call([1,"a"]',
      'calls([1,"a"])',
      'submit()',
      'submit(a=>a))',
      'run(a=>a)',
      '',
    ])
      expect(parseAction(tools, bad)).toBeNull();
  });
  it('every prefix the grammar accepts completes to a parsable action (property)', () => {
    const g = actionGrammar(tools);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 1e9 }), { maxLength: 30 }), (picks) => {
        let s = g.start();
        let text = '';
        for (const p of picks) {
          if (g.canEnd(s)) break;
          const opts = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).filter(
            (c) => g.next(s, c) !== null,
          );
          expect(opts.length).toBeGreaterThan(0);
          const c = opts[p % opts.length]!;
          s = g.next(s, c)!;
          text += c;
        }
        if (g.canEnd(s)) expect(parseAction(tools, text)).not.toBeNull();
      }),
    );
  });
  it('an argument in except is never written, and every prefix the grammar allows still completes within its budget (property)', () => {
    const chars = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i));
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -15, max: 15 }), { maxLength: 8 }),
        fc.array(fc.integer({ min: 0, max: 1e9 }), { minLength: 1, maxLength: 20 }),
        (xs, picks) => {
          const except = xs.map((x) => `[${x}]`);
          const tools: ActionTool[] = [
            { name: 'call', arg: '[int]', except },
            { name: 'submit', arg: '[int]' },
          ];
          const g = actionGrammar(tools);
          const budget = 16;
          let s = g.start();
          let text = '';
          for (let i = 0; !g.canEnd(s); i++) {
            const opts = chars.filter((c) => {
              const n = g.next(s, c);
              return n !== null && g.minRemaining(n) <= budget - text.length - 1;
            });
            expect(opts.length).toBeGreaterThan(0);
            const c = opts[picks[i % picks.length]! % opts.length]!;
            s = g.next(s, c)!;
            text += c;
          }
          const a = parseAction(tools, text)!;
          expect(a).not.toBeNull();
          if (a.tool === 'call') expect(except).not.toContain(a.arg);
        },
      ),
    );
    // a prefix whose only completion is refused is itself refused: after `call([+0`, no `0` once [0] (written [+00]) was called
    const g = actionGrammar([{ name: 'call', arg: '[int]', except: ['[0]'] }]);
    const open = [...'call([+0'].reduce((s, c) => g.next(s, c)!, g.start());
    expect(g.minRemaining(g.next(open, '0')!)).toBe(Infinity);
    expect(g.minRemaining(g.next(open, '1')!)).toBe(2);
  });
  it('a oneOf argument is exactly one of its options (property)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.stringMatching(/^[a-z+()=>-]{1,8}$/), { minLength: 1, maxLength: 6 }),
        fc.nat(),
        (options, i) => {
          const t: ActionTool[] = [{ name: 'submit', arg: 'program', oneOf: options }];
          const o = options[i % options.length]!;
          if (options.some((x) => x !== o && (x.startsWith(`${o})`) || o.startsWith(`${x})`)))) return; // `)` would end one inside the other
          expect(parseAction(t, `submit(${o})`)).toEqual({ tool: 'submit', arg: o });
          expect(parseAction(t, `submit(${o}q)`)).toBeNull();
        },
      ),
    );
  });
  it("repair's candidate programs are the shown program with one token changed, the fix among them", () => {
    const s = specs.repair as RepairSpec;
    const edits = oneTokenEdits(compactProgram(s.buggy));
    expect(edits).toContain(compactProgram(s.program));
    expect(edits).not.toContain(compactProgram(s.buggy));
    expect(oneTokenEdits('a=>a+4')).toEqual(expect.arrayContaining(['a=>a-4', 'a=>a*4', 'a=>a+1', 'a=>a+7']));
    expect(oneTokenEdits('a=>a+4')).not.toContain('a=>a+0');
  });
  it("repair's prompt shows each failing visible test with what the buggy program returns", () => {
    const s = {
      ...(specs.repair as RepairSpec),
      visible: [
        { input: [9], output: 1 },
        { input: [0], output: 0 },
      ],
      got: ['72', null],
    };
    expect(solverPrompt(s, 0)).toBe(`R:${compactProgram(s.buggy)}@9>1!72;0>0`);
  });
  it("reads tool results compactly: a call as =y, a test run as a mark per visible test in the prompt's notation", async () => {
    const r = specs.repair as RepairSpec;
    const env = new Env(r, sb);
    env.reset(0);
    const ran = await env.step(toEnvAction(r, `run_tests(${compactProgram(r.program)})`));
    expect(solverObservation(ran.observation)).toBe(r.visible.map(() => '+').join(';'));
    const again = await env.step(
      toEnvAction(
        r,
        `run_tests(${oneTokenEdits(compactProgram(r.buggy)).find((p) => p !== compactProgram(r.program))})`,
      ),
    );
    const marks = solverObservation(again.observation).split(';');
    expect(marks).toHaveLength(r.visible.length);
    for (const [i, l] of again.observation.split('\n').slice(1).entries())
      expect(marks[i]).toBe(l.includes(' pass ') ? '+' : `!${l.split(', got ')[1]}`);
    const s = specs.search as SearchSpec;
    const search = new Env(s, sb);
    search.reset(0);
    expect(
      solverObservation((await search.step(toEnvAction(s, `call(${written(JSON.stringify(s.answer))})`))).observation),
    ).toBe(`=${JSON.stringify(s.target)}`);
    const miss = (await search.step(toEnvAction(s, `call(${written(JSON.stringify(s.argTypes.map(() => 123)))})`)))
      .observation;
    expect(miss).toMatch(/^f\(123\) = /);
    expect(solverObservation(miss)).toBe(`=${miss.slice(miss.indexOf(' = ') + 3)}`);
    expect(solverObservation('unknown tool "x"')).toBe('unknown tool "x"');
  });
  it("turns into the environment's tool calls", () => {
    const s = specs.search as SearchSpec;
    expect(toEnvAction(s, `call(${written(JSON.stringify(s.answer))})`)).toEqual({
      name: 'call',
      arguments: JSON.stringify({ x: s.answer }),
    });
    expect(toEnvAction(specs.probe!, 'submit(a=>a+1)')).toEqual({
      name: 'submit',
      arguments: JSON.stringify({ program: 'a=>a+1' }),
    });
    const fix = compactProgram(specs.repair!.program);
    expect(toEnvAction(specs.repair!, `run_tests(${fix})`)).toEqual({
      name: 'run_tests',
      arguments: JSON.stringify({ program: fix }),
    });
    expect(toEnvAction(specs.repair!, 'run_tests(a=>a)').name).toBe('run_tests(a=>a)'); // not a one-token edit: outside the language, malformed
    expect(solverTools(specs.probe!).map((t) => t.name)).toEqual(['call', 'submit']);
    // an argument list already called is not offered again (its result is in the transcript)
    const three = JSON.stringify(s.argTypes.map(() => 3));
    const four = JSON.stringify(s.argTypes.map(() => 4));
    const after = solverTools(s, [{ action: `call(${written(three)})`, observation: '=9' }]);
    expect(parseAction(after, `call(${written(three)})`)).toBeNull();
    expect(parseAction(after, `call(${written(four)})`)).toEqual({ tool: 'call', arg: four });
    expect(parseAction(after, `submit(${written(three)})`)).toEqual({ tool: 'submit', arg: three });
    // once the calls are spent, or on the last turn, a call would end the episode over budget: submit alone
    const r = specs.repair!;
    const edits = oneTokenEdits(compactProgram((r as RepairSpec).buggy));
    const ran = (n: number): Turn[] => edits.slice(0, n).map((p) => ({ action: `run_tests(${p})`, observation: '+' }));
    expect(solverTools(r, ran(r.budgets.calls - 1)).map((t) => t.name)).toEqual(['run_tests', 'submit']);
    expect(solverTools(r, ran(r.budgets.calls)).map((t) => t.name)).toEqual(['submit']);
    expect(solverTools({ ...r, budgets: { calls: 5, turns: 3 } }, ran(2)).map((t) => t.name)).toEqual(['submit']);
    // a candidate already run is not offered to run again; submit still offers every candidate
    const twice = solverTools(r, ran(2));
    for (const [i, p] of edits.entries()) {
      expect(parseAction(twice, `run_tests(${p})`)).toEqual(i < 2 ? null : { tool: 'run_tests', arg: p });
      expect(parseAction(twice, `submit(${p})`)).toEqual({ tool: 'submit', arg: p });
    }
    // every candidate run: run_tests has no completion left, so the decoder never starts it
    const g = actionGrammar(solverTools({ ...r, budgets: { calls: 99, turns: 100 } }, ran(edits.length)));
    expect(g.minRemaining([...'run_tests('].reduce((st, c) => g.next(st, c)!, g.start()))).toBe(Infinity);
    expect(g.minRemaining(g.start())).toBeLessThan(Infinity);
  });
});

describe('multi-turn episodes', () => {
  it('sampling log-probs equal training log-probs on multi-turn transcripts, past the context cut too', async () => {
    for (const maxPromptLen of [96, 24]) {
      const p = await createPolicy(
        tiny({ model: { dModel: 16, layers: 1, heads: 2, maxPromptLen, maxAnswerLen: 16 } }),
        { seed: 3, ...quiet },
      );
      const groups = await playSolver(p, sb, [specs.search!, specs.probe!], 8, { greedy: false });
      const rows = groups.flat().flatMap((e) => e.rows);
      expect(groups.flat().some((e) => e.turns.length >= 2)).toBe(true);
      const re = await turnLogProbs(p, rows, p.cfg.sampling.temperature);
      let maxDiff = 0;
      rows.forEach((r, i) =>
        r.oldLogp.forEach((v, k) => {
          maxDiff = Math.max(maxDiff, Math.abs(v - re[i]![k]!));
        }),
      );
      expect(maxDiff).toBeLessThan(1e-5);
      p.dispose();
    }
  });

  it("the loss is masked to the agent's tokens: each is a target once, the environment's never", async () => {
    const p = await createPolicy(tiny(), { seed: 5, ...quiet });
    const played = [specs.search!, specs.repair!];
    const groups = await playSolver(p, sb, played, 3, { greedy: false });
    groups.forEach((g, s) =>
      g.forEach((e) => {
        const prompt = solverPrompt(played[s]!, 0);
        // the rows' targets, in order, are exactly the agent-written tokens of the whole transcript:
        // each turn's action, then <eos>
        expect(e.rows.map((r) => r.answer.at(-1))).toEqual(e.turns.map(() => EOS));
        expect(e.rows.map((r) => decode(r.answer))).toEqual(e.turns.map((t) => t.action));
        // each turn's context is the transcript before it, cut from the left to maxPromptLen: the
        // environment's text is only ever read, never predicted
        e.rows.forEach((r, k) => expect(r.prompt).toEqual(encode(turnContext(prompt, e.turns.slice(0, k))).slice(-96)));
      }),
    );
    p.dispose();
  });

  it('gradient: changing what the environment wrote after the last action leaves the loss as it is; changing an agent token does not', async () => {
    const p = await createPolicy(tiny(), { seed: 7, ...quiet });
    const groups = await playSolver(p, sb, [specs.search!], 4, { greedy: false });
    const asRows = (gs: SolverEpisode[][]): EpisodeRows[][] =>
      gs.map((g) => g.map((e, i) => ({ rows: e.rows, reward: i % 2 })));
    const base = await episodesLoss(p, asRows(groups), 1);
    // the final observation: tokens only the environment wrote, nothing reads them
    const otherObs = groups.map((g) =>
      g.map((e) => ({
        ...e,
        turns: e.turns.map((t, k) =>
          k === e.turns.length - 1 ? { ...t, observation: 'passed 0 of 99 hidden tests' } : t,
        ),
      })),
    );
    expect(await episodesLoss(p, asRows(otherObs), 1)).toBe(base);
    // one agent token changed (the first action's first character): the loss moves
    const flipped = groups.map((g) =>
      g.map((e, i) =>
        i > 0
          ? e
          : {
              ...e,
              rows: e.rows.map((r, k) =>
                k > 0
                  ? r
                  : { ...r, answer: [r.answer[0] === EOS ? r.answer[0]! : r.answer[0]! ^ 1, ...r.answer.slice(1)] },
              ),
            },
      ),
    );
    expect(await episodesLoss(p, asRows(flipped), 1)).not.toBe(base);
    p.dispose();
  });

  it("an update trains on environment episodes beside the rollout (a run's environment arms): with flat task groups, as updateEpisodes alone", async () => {
    const make = () => createPolicy(tiny(), { seed: 13, ...quiet });
    const [a, b] = [await make(), await make()];
    const groups = await playSolver(a, sb, [specs.search!], 4, { greedy: false });
    const episodes: EpisodeRows[][] = groups.map((g) => g.map((e, i) => ({ rows: e.rows, reward: i % 2 })));
    const prompts = [{ text: 'D:a=>a+1@[1]', kind: 'literal' as const, shape: 'int' as const }];
    // the rollout's all-equal rewards carry no gradient
    const ra = await a.sample(prompts, 2);
    const sa = await a.update(ra, [[1, 1]], { episodes });
    const sb2 = await b.updateEpisodes(episodes, b.cfg.sampling.temperature);
    expect(sa.groups).toBe(sb2.groups);
    expect(sa.groups).toBeGreaterThan(0);
    const [wa, wb] = [await policyWeights(a), await policyWeights(b)];
    for (const [n, t] of wa) expect(Array.from(t.data)).toEqual(Array.from(wb.get(n)!.data));
    // and they moved: the episodes carried the gradient
    const c = await make();
    const wc = await policyWeights(c);
    expect([...wa].some(([n, t]) => t.data.some((v, i) => v !== wc.get(n)!.data[i]))).toBe(true);
    // a rollout group with a gradient beside the episodes: two batches of different group sizes in one step
    const rc = await c.sample(prompts, 2);
    const both = await c.update(rc, [[1, 0]], { episodes });
    expect(both.groups).toBe(sa.groups + 1);
    expect(Number.isFinite(both.loss)).toBe(true);
    for (const p of [a, b, c]) p.dispose();
  });

  it("an untrained policy's sampled episodes never run over a budget: it writes valid actions only", async () => {
    const p = await createPolicy(
      tiny({ model: { dModel: 16, layers: 1, heads: 2, maxPromptLen: 96, maxAnswerLen: 40 } }),
      { seed: 5, ...quiet },
    );
    const tight = (s: EnvSpec): EnvSpec => ({ ...s, budgets: { calls: 1, turns: 3 } }); // a second call would be over budget
    const eps = (
      await playSolver(p, sb, [specs.search!, specs.repair!, specs.probe!].map(tight), 32, { greedy: false })
    ).flat();
    expect(eps.some((e) => e.turns.length > 1)).toBe(true); // some episodes did call before submitting
    for (const e of eps) expect(e.trajectory.reason ?? '').not.toMatch(/^budget/);
    // nor runs a repair candidate twice (a repeated call is refused by the grammar: 'turns into the environment's tool calls')
    const repairs = (
      await playSolver(p, sb, [{ ...specs.repair!, budgets: { calls: 6, turns: 7 } }], 32, { greedy: false })
    ).flat();
    p.dispose();
    expect(repairs.some((e) => e.turns.length > 2)).toBe(true);
    for (const e of repairs) {
      const runs = e.turns.map((t) => t.action).filter((a) => a.startsWith('run_tests('));
      expect(new Set(runs).size).toBe(runs.length);
    }
  });
  it('evaluation: the greedy policy one episode per environment, the sampled policy `samples` each', async () => {
    const p = await createPolicy(tiny(), { seed: 3, ...quiet });
    const envs = [specs.search!, specs.repair!, specs.probe!];
    const count = (e: Record<string, number>) => Object.values(e).reduce((a, n) => a + n, 0);
    const greedy = await evaluateSolver(p, sb, envs);
    const sampled = await evaluateSolver(p, sb, envs, { samples: 4 });
    p.dispose();
    expect(count(greedy.endings)).toBe(3);
    expect(count(sampled.endings)).toBe(12);
    expect(sampled.success).toBe((sampled.endings.solved ?? 0) / 12);
  });
  it("cloning: supervised actions train on the action grammar's tokens given the transcript, and greedy decoding learns them", async () => {
    const p = await createPolicy(tiny({ optim: { lr: 3e-2, warmupSteps: 0 } }), { seed: 4, ...quiet });
    const spec = specs.search as SearchSpec;
    const x = answerInView(`[${spec.argTypes.join(',')}]`, JSON.stringify(spec.answer));
    const prompt = solverPrompt(spec, 0);
    const turn0 = { text: prompt, tools: solverTools(spec, []) };
    const turns: Turn[] = [{ action: `call(${x})`, observation: `=${JSON.stringify(spec.target)}` }];
    const turn1 = { text: turnContext(prompt, turns), tools: solverTools(spec, turns) };
    const shown = [turn0, turn1];
    const actions = [`call(${x})`, `submit(${x})`];
    // an action written as decoding writes it: the action grammar's tokens, <eos> last
    expect(decode(actionTokens(p, turn1, actions[1]!).answer.slice(0, -1))).toBe(actions[1]);
    // a call already made is refused by the second turn's grammar, so it cannot be a target there
    expect(() => actionTokens(p, turn1, actions[0]!)).toThrow(/not an action of these tools/);
    for (let i = 0; i < 80; i++) await superviseActions(p, shown, actions);
    const greedy = await p.decodeActions(shown, true);
    p.dispose();
    expect(greedy.map((r) => r.text)).toEqual(actions);
  });
  it('a training run with a fixed seed gives the same result twice', async () => {
    const run = async () => {
      const p = await createPolicy(tiny(), { seed: 11, ...quiet });
      const curve: number[] = [];
      let updated = 0;
      await trainAgentic(p, sb, [specs.search!, specs.probe!], {
        steps: 3,
        envsPerStep: 2,
        group: 4,
        seed: 2,
        onStep: (s) => {
          curve.push(s.reward, s.loss);
          updated += s.groups;
        },
      });
      expect(updated).toBeGreaterThan(0); // some group had a gradient: the run did learn something
      const w = await policyWeights(p);
      p.dispose();
      return { curve, w: [...w].map(([n, t]) => [n, Array.from(t.data)]) };
    };
    const a = await run();
    const b = await run();
    expect(b.curve).toEqual(a.curve);
    expect(b.w).toEqual(a.w);
  });
});

describe('a training batch in memory-bounded chunks', () => {
  const row = (p: number, a: number): TrainRow => ({
    prompt: Array<number>(p).fill(5),
    answer: Array<number>(a).fill(6),
    oldLogp: new Float32Array(a),
    allowed: [],
    adv: 1,
  });
  const m = { layers: 2, heads: 4 };
  it('keeps every group, whole and in order; a single-turn batch is one chunk; long multi-turn batches are split (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 600 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 8, max: 336 }),
        fc.integer({ min: 2, max: 80 }),
        (n, g, p, a) => {
          const groups = Array.from({ length: n }, (_, i) =>
            Array.from({ length: g }, () => row(1 + ((p * (i + 1)) % p), a)),
          );
          const chunks = memoryChunks(groups, m);
          expect(chunks.flat()).toEqual(groups);
          expect(chunks.every((c) => c.length > 0)).toBe(true);
        },
      ),
      { numRuns: 60 },
    );
    // the learn preset's batch: 64 prompts of 128 characters, 4 answers of 40
    expect(
      memoryChunks(
        Array.from({ length: 64 }, () => Array.from({ length: 4 }, () => row(128, 41))),
        m,
      ),
    ).toHaveLength(1);
    // 400 agent turns at a 256-character context
    expect(
      memoryChunks(
        Array.from({ length: 400 }, () => [row(256, 80)]),
        m,
      ).length,
    ).toBeGreaterThan(2);
  });

  it('an update in chunks, each normalised by the whole batch, lands where the one-batch update does', async () => {
    const make = (batchFloats?: number) =>
      createPolicy(tiny(), { seed: 17, ...quiet, ...(batchFloats ? { batchFloats } : {}) });
    const [whole, chunked] = [await make(), await make(1)];
    const groups = await playSolver(whole, sb, [specs.search!, specs.repair!], 4, { greedy: false });
    const episodes: EpisodeRows[][] = groups.map((g) => g.map((e, i) => ({ rows: e.rows, reward: i % 2 })));
    const a = await whole.updateEpisodes(episodes, 1);
    const b = await chunked.updateEpisodes(episodes, 1);
    expect(b.groups).toBe(a.groups);
    expect(b.loss).toBeCloseTo(a.loss, 5);
    const [wa, wb] = [await policyWeights(whole), await policyWeights(chunked)];
    let maxDiff = 0;
    for (const [n, t] of wa)
      t.data.forEach((v, i) => {
        maxDiff = Math.max(maxDiff, Math.abs(v - wb.get(n)!.data[i]!));
      });
    expect(maxDiff).toBeLessThan(1e-5);
    whole.dispose();
    chunked.dispose();
  });
});
