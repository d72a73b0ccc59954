// The environment room: generation and validation of the three kinds, the tool schema, hostile
// actions (each ends its episode with reward 0 and a reason, and leaves the next one alone), and
// determinism (replaying a recorded trajectory gives the same observations and reward).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createRng } from '../core/rng.js';
import { createSandbox, type Sandbox } from '../sandbox/index.js';
import {
  CONSTANT_SUBMISSIONS,
  constantSubmission,
  ENV_KINDS,
  ENV_SKILLS,
  Env,
  envSkills,
  generateEnv,
  playEpisode,
  randomPolicy,
  referencePolicy,
  replay,
  type EnvAction,
  type EnvKind,
  type EnvSpec,
} from '../envs/index.js';
import { allSkills } from '../generators/index.js';

let sb: Sandbox;
const specs = new Map<string, EnvSpec>();
const spec = (kind: EnvKind, family = 'arith', level = 0) => specs.get(`${kind}/${family}/${level}`)!;

beforeAll(async () => {
  sb = await createSandbox({ workers: 1 });
  for (const kind of ENV_KINDS) {
    for (const [family, level] of [
      ['arith', 0],
      ['arith', 1],
      ['str', 0],
      ['array', 1],
    ] as const) {
      specs.set(
        `${kind}/${family}/${level}`,
        await generateEnv(sb, { kind, family, level, rng: createRng(`${kind}/${family}/${level}`) }),
      );
    }
  }
});
afterAll(async () => {
  await sb.close();
});

const call = (name: string, args: unknown): EnvAction => ({ name, arguments: JSON.stringify(args) });

describe('generation', () => {
  it('every kind is made at several families and levels, and its reference policy reaches reward 1', async () => {
    for (const s of specs.values()) {
      const t = await playEpisode(new Env(s, sb), referencePolicy(s), 0);
      expect(t.reward, `${s.kind} ${s.family} ${s.level}`).toBe(1);
      expect(t.steps.length).toBeLessThanOrEqual(s.budgets.turns);
      expect(s.skills[0]).toBe(`env.${s.kind}`);
    }
  });

  it('same rng state, same spec; a seen spec is not made twice', async () => {
    const a = await generateEnv(sb, { kind: 'probe', family: 'arith', level: 0, rng: createRng(42) });
    const b = await generateEnv(sb, { kind: 'probe', family: 'arith', level: 0, rng: createRng(42) });
    expect(b).toEqual(a);
    const seen = new Set([a.id]);
    const c = await generateEnv(sb, { kind: 'probe', family: 'arith', level: 0, rng: createRng(42), seen });
    expect(c.id).not.toBe(a.id);
    expect(seen.has(c.id)).toBe(true);
  });

  it('a repair spec plants a bug that fails a visible and a hidden test, reported in its prompt as run_tests reports it; the buggy program submitted as is scores below 1', async () => {
    for (const level of [0, 1]) {
      const s = spec('repair', 'arith', level);
      if (s.kind !== 'repair') throw new Error('not repair');
      expect(s.buggy).not.toBe(s.program);
      const env = new Env(s, sb);
      const prompt = env.reset(0).text;
      const r = await env.step(call('run_tests', { program: s.buggy }));
      expect(r.observation).toMatch(/FAIL/);
      // the prompt's "but it returns X" lines are run_tests' "got X" on the buggy program, test for test
      const failing = r.observation
        .split('\n')
        .filter((l) => l.includes('FAIL'))
        .map((l) => l.split(', got ')[1]);
      expect(s.got?.filter((g) => g !== null)).toEqual(failing);
      for (const g of failing) expect(prompt).toContain(`, but it returns ${g}`);
      expect((await env.step(call('submit', { program: s.buggy }))).reward).toBeLessThan(1);
    }
  });

  it('level raises the budgets', () => {
    for (const kind of ENV_KINDS)
      expect(spec(kind, 'arith', 1).budgets.calls).toBeGreaterThan(spec(kind, 'arith', 0).budgets.calls);
  });

  it('an unknown kind or family is one clear error', async () => {
    await expect(
      generateEnv(sb, { kind: 'nope' as EnvKind, family: 'arith', level: 0, rng: createRng(1) }),
    ).rejects.toThrow(/unknown environment kind 'nope'/);
    await expect(generateEnv(sb, { kind: 'probe', family: 'nope', level: 0, rng: createRng(1) })).rejects.toThrow(
      /unknown task family 'nope'/,
    );
  });

  it("skills: env skills require code skills that exist; a run keeps its kinds' skills, their prerequisites cut to the skills it has", () => {
    const ids = new Set(allSkills().map((s) => s.id));
    for (const s of ENV_SKILLS) for (const r of s.requires) expect(ids.has(r), `${s.id} requires ${r}`).toBe(true);
    expect(envSkills(['repair', 'search'], new Set(['arith.add'])).map((s) => [s.id, s.requires])).toEqual([
      ['env.repair', ['arith.add']],
      ['env.search', ['arith.add']],
    ]);
  });
});

describe('tools and observations', () => {
  it('tools are in the OpenAI function-calling shape with JSON Schema parameters', () => {
    for (const kind of ENV_KINDS) {
      const obs = new Env(spec(kind), sb).reset(0);
      expect(obs.text.length).toBeGreaterThan(20);
      for (const t of obs.tools) {
        expect(t.type).toBe('function');
        expect(t.function.name).toMatch(/^[a-z_]+$/);
        expect(t.function.parameters).toMatchObject({
          type: 'object',
          required: expect.any(Array),
          properties: expect.any(Object),
        });
      }
      expect(obs.tools.map((t) => t.function.name)).toContain('submit');
    }
  });

  it('probe: call returns f(args) and spends the call budget; submit ends with the share of tests passed', async () => {
    const s = spec('probe');
    if (s.kind !== 'probe') throw new Error('not probe');
    const env = new Env(s, sb);
    env.reset(0);
    const r = await env.step(call('call', { args: s.tests[0]!.input }));
    expect(r).toMatchObject({ done: false, reward: 0, info: { turn: 1, callsLeft: s.budgets.calls - 1 } });
    expect(r.observation).toContain(`= ${JSON.stringify(s.tests[0]!.output)}`);
    const end = await env.step(
      call('submit', { program: `function f(...a) { return ${JSON.stringify(s.tests[0]!.output)}; }` }),
    );
    expect(end.done).toBe(true);
    expect(end.reward).toBeGreaterThan(0);
    expect(end.reward).toBeLessThan(1);
    expect(end.info.reason).toMatch(/wrong/);
    expect((await env.step(call('call', { args: s.tests[0]!.input }))).observation).toBe('the episode is over');
  });

  it("a constant submission ends the episode at once, the same whatever is shown; search's k-th submits the k-th constant of each type", async () => {
    for (const kind of ENV_KINDS)
      for (let k = 0; k < CONSTANT_SUBMISSIONS; k++) {
        const env = new Env(spec(kind), sb);
        env.reset(0);
        const r = await env.step(constantSubmission(spec(kind), k));
        expect(r.done).toBe(true);
        expect(r.info.reason ?? '').not.toMatch(/^(malformed|budget|hostile)/);
      }
    const s = spec('search');
    if (s.kind !== 'search') throw new Error('not search');
    const zeroHits: EnvSpec = {
      ...s,
      argTypes: ['int'],
      program: 'function f(a) {\n  return a * 2;\n}',
      target: 0,
      answer: [0],
    };
    const solved = async (k: number) => {
      const env = new Env(zeroHits, sb);
      env.reset(0);
      return (await env.step(constantSubmission(zeroHits, k))).reward;
    };
    expect(await solved(0)).toBe(1);
    expect(await solved(1)).toBe(0);
  });
  it('search: a wrong x ends with reward 0', async () => {
    const s = spec('search');
    if (s.kind !== 'search') throw new Error('not search');
    const env = new Env(s, sb);
    env.reset(0);
    const wrong = s.argTypes.map(() => 123456);
    const r = await env.step(call('submit', { x: wrong }));
    expect(r).toMatchObject({ done: true });
    if (r.reward === 0) expect(r.info.reason).toMatch(/wrong/);
  });
});

describe('hostile actions end the episode with reward 0 and a reason; the next episode is unaffected', () => {
  const LOOP = 'function f(a) { while (true) {} }';
  const FLOOD = 'function f(a) { return "x".repeat(5000000); }';
  const POLLUTE =
    'Array.prototype.map = () => [7]; Object.prototype.x = 1; JSON.stringify = () => "1"; function f() { return 1; }';
  const cases: [string, EnvKind, (s: EnvSpec) => EnvAction, RegExp][] = [
    ['a submitted program that loops', 'probe', () => call('submit', { program: LOOP }), /^hostile: .*timeout/],
    [
      'a submitted program that floods output',
      'probe',
      () => call('submit', { program: FLOOD }),
      /^hostile: .*(output-too-large|memory)/,
    ],
    ['a tested program that loops', 'repair', () => call('run_tests', { program: LOOP }), /^hostile: .*timeout/],
    [
      'a tested program that floods output',
      'repair',
      () => call('run_tests', { program: FLOOD }),
      /^hostile: .*(output-too-large|memory)/,
    ],
    [
      'arguments that are not JSON',
      'probe',
      () => ({ name: 'call', arguments: '{"args": [1,' }),
      /^malformed: arguments are not JSON/,
    ],
    ['an unknown tool', 'search', () => call('rm_rf', {}), /^malformed: unknown tool "rm_rf"/],
    ['a missing argument', 'repair', () => call('submit', {}), /^malformed: submit\.program/],
    [
      'wrong argument types',
      'search',
      (s) => call('call', { x: s.argTypes.map(() => ({ no: 1 })) }),
      /^malformed: call: argument 1 must be of type/,
    ],
    [
      'the wrong number of arguments',
      'probe',
      (s) => call('call', { args: [...s.argTypes.map(() => 1), 1, 1] }),
      /^malformed: call: f takes/,
    ],
    [
      'a name that is not text',
      'probe',
      () => ({ name: 42 as unknown as string, arguments: '{}' }),
      /^malformed: unknown tool/,
    ],
  ];
  for (const [what, kind, act, reason] of cases) {
    it(what, async () => {
      const s = spec(kind);
      const env = new Env(s, sb);
      env.reset(0);
      const r = await env.step(act(s));
      expect(r.done).toBe(true);
      expect(r.reward).toBe(0);
      expect(r.info.reason).toMatch(reason);
      expect(r.observation.length).toBeLessThan(1000);
      // The next episode, on the same environment and sandbox, plays as if nothing happened.
      const t = await playEpisode(env, referencePolicy(s), 0);
      expect(t.reward).toBe(1);
      expect(t.steps).toHaveLength(2);
    });
  }

  it('more calls than the budget', async () => {
    for (const kind of ['probe', 'repair', 'search'] as const) {
      const s = spec(kind);
      const env = new Env(s, sb);
      env.reset(0);
      const a = (await referencePolicy(s)(env.reset(0), []))!;
      expect(a.name).not.toBe('submit');
      let last;
      for (let i = 0; i <= s.budgets.calls; i++) last = await env.step(a);
      expect(last).toMatchObject({
        done: true,
        reward: 0,
        info: { reason: `budget: more than ${s.budgets.calls} calls` },
      });
      expect((await playEpisode(env, referencePolicy(s), 0)).reward).toBe(1);
    }
  });

  it('a submitted program that pollutes builtins does not reach the next episode', async () => {
    const s = spec('probe');
    const env = new Env(s, sb);
    env.reset(0);
    expect((await env.step(call('submit', { program: POLLUTE }))).done).toBe(true);
    expect((await playEpisode(new Env(s, sb), referencePolicy(s), 0)).reward).toBe(1);
  });

  it('a step before reset is a clear error', async () => {
    await expect(new Env(spec('probe'), sb).step(call('submit', { program: 'x' }))).rejects.toThrow(/reset/);
  });
});

describe('determinism', () => {
  // Actions: random valid ones from the random policy, mixed with malformed ones.
  const garbage: EnvAction[] = [
    { name: 'call', arguments: '[' },
    { name: 'nope', arguments: '{}' },
    { name: 'submit', arguments: '{"program": "function f(a) { while (true) {} }"}' },
    { name: 'submit', arguments: '{"x": 1}' },
  ];
  it('replaying a recorded trajectory gives the same observations and reward (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ENV_KINDS),
        fc.constantFrom('arith/0', 'str/0', 'array/1'),
        fc.integer({ min: 0, max: 1e6 }),
        fc.integer({ min: 0, max: 1000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        async (kind, fl, policySeed, envSeed, garbageRate) => {
          const [family, level] = fl.split('/');
          const s = spec(kind, family, Number(level));
          const rng = createRng(policySeed);
          const random = randomPolicy(s, rng);
          const recorded = await playEpisode(
            new Env(s, sb),
            (o, h) => (rng.next() < garbageRate * 0.3 ? rng.pick(garbage) : random(o, h)),
            envSeed,
          );
          expect(recorded.done).toBe(true);
          const again = await replay(new Env(s, sb), recorded);
          expect(again).toEqual(recorded);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('a plain-data spec survives JSON (stored, exported) and plays the same', async () => {
    const s = spec('repair', 'array', 1);
    const copy = JSON.parse(JSON.stringify(s)) as EnvSpec;
    const a = await playEpisode(new Env(s, sb), randomPolicy(s, 5), 9);
    const b = await playEpisode(new Env(copy, sb), randomPolicy(copy, 5), 9);
    expect(b).toEqual(a);
  });
});

describe('properties', () => {
  it('generation: any kind, family, level and seed gives a valid spec (reference reaches 1, plain data, same seed same spec)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ENV_KINDS),
        fc.constantFrom('arith', 'array', 'loop', 'bits'),
        fc.integer({ min: 0, max: 2 }),
        fc.integer({ min: 0, max: 1e6 }),
        async (kind, family, level, seed) => {
          const s = await generateEnv(sb, { kind, family, level, rng: createRng(seed) });
          expect(s).toMatchObject({ kind, family, level });
          expect(JSON.parse(JSON.stringify(s))).toEqual(s);
          expect((await playEpisode(new Env(s, sb), referencePolicy(s), seed)).reward).toBe(1);
          expect((await generateEnv(sb, { kind, family, level, rng: createRng(seed) })).id).toBe(s.id);
        },
      ),
      { numRuns: 15 },
    );
  });

  it('any action at all (arbitrary names and arguments) never throws: the episode goes on with reward 0, or ends with a reward in [0, 1] and a reason below 1', async () => {
    const anyAction = fc.record({
      name: fc.oneof(fc.constantFrom('call', 'submit', 'run_tests'), fc.string({ maxLength: 20 })),
      arguments: fc.oneof(
        fc.string({ maxLength: 60 }),
        fc.json().map((j) => j),
        fc.dictionary(fc.constantFrom('args', 'x', 'program'), fc.jsonValue()),
      ),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ENV_KINDS),
        fc.array(anyAction, { minLength: 1, maxLength: 6 }),
        async (kind, actions) => {
          const env = new Env(spec(kind), sb);
          env.reset(0);
          for (const a of actions) {
            const r = await env.step(a as EnvAction);
            expect(r.reward).toBeGreaterThanOrEqual(0);
            expect(r.reward).toBeLessThanOrEqual(1);
            if (!r.done) expect(r.reward).toBe(0);
            if (r.done && r.reward < 1) expect(r.info.reason).toEqual(expect.any(String));
            if (r.done) break;
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
