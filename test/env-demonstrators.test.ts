// The tool-using demonstrators (src/run/env-demonstrators.ts): every action they write is a valid
// action of the solver at that turn, they read only what an episode shows (hidden fields replaced
// by garbage change no action), and they solve what their sweep or candidates reach.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRng } from '../core/rng.js';
import { createSandbox, type Sandbox } from '../sandbox/index.js';
import { generateEnv, type EnvKind, type EnvSpec, type SearchSpec } from '../envs/index.js';
import { parseAction } from '../src/solver/index.js';
import { demonstrate, solverTools } from '../src/run/testing.js';

const FAMILIES = ['arith', 'str', 'array', 'loop'];
let sb: Sandbox;
/** kind/level → generated specs, families in turn (a family that makes none of a kind is passed over). */
const specs = new Map<string, EnvSpec[]>();
const of = (kind: EnvKind, level: number): EnvSpec[] => specs.get(`${kind}/${level}`)!;

async function make(kind: EnvKind, level: number, n: number, families = FAMILIES): Promise<EnvSpec[]> {
  const out: EnvSpec[] = [];
  const seen = new Set<string>();
  for (let i = 0; out.length < n && i < 3 * n; i++) {
    const family = families[i % families.length]!;
    const rng = createRng(`demonstrators/${kind}/${level}/${i}`);
    out.push(
      ...(await generateEnv(sb, { kind, family, level, rng, seen })
        .then((s) => [s])
        .catch(() => [])),
    );
  }
  return out;
}

beforeAll(async () => {
  sb = await createSandbox({ workers: 1 });
  for (const kind of ['search', 'repair', 'probe'] as const)
    for (const level of [0, 1]) specs.set(`${kind}/${level}`, await make(kind, level, 8));
});
afterAll(async () => {
  await sb?.close();
});

describe('demonstrators', () => {
  it('write only actions the solver may write at that turn (property over specs and seeds)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('search', 'repair', 'probe'),
        fc.constantFrom(0, 1),
        fc.nat(),
        fc.nat({ max: 50 }),
        async (kind, level, pick, seed) => {
          const all = of(kind as EnvKind, level);
          const spec = all[pick % all.length]!;
          const d = await demonstrate(spec, sb, { seed });
          expect(d.turns.length).toBeGreaterThan(0);
          d.turns.forEach((t, k) =>
            expect(parseAction(solverTools(spec, d.turns.slice(0, k)), t.action)).not.toBeNull(),
          );
          // every episode ends with a submit, within the budget
          expect(d.trajectory.done).toBe(true);
          expect(d.actions.at(-1)).toMatch(/^submit\(/);
          expect(d.trajectory.reason ?? '').not.toMatch(/^(malformed|budget)/);
        },
      ),
      { numRuns: 30 },
    );
  });

  it('read no hidden field: garbage in them changes no action', async () => {
    for (const level of [0, 1]) {
      for (const spec of of('search', level)) {
        const garbage = { ...spec, answer: spec.argTypes.map(() => 'garbage') } as EnvSpec;
        expect((await demonstrate(garbage, sb, { seed: 3 })).actions).toEqual(
          (await demonstrate(spec, sb, { seed: 3 })).actions,
        );
      }
      for (const spec of of('repair', level)) {
        if (spec.kind !== 'repair') continue;
        const tests = spec.tests.map((e) => ({ input: e.input, output: 'garbage' }));
        const garbage = { ...spec, program: 'function f() { return 0; }', tests };
        expect((await demonstrate(garbage, sb, { seed: 3 })).actions).toEqual(
          (await demonstrate(spec, sb, { seed: 3 })).actions,
        );
      }
      for (const spec of of('probe', level)) {
        if (spec.kind !== 'probe') continue;
        const seed = 5;
        const at = seed % spec.tests.length;
        const tests = spec.tests.map((e, i) => (i === at ? e : { input: e.input, output: 'garbage' }));
        const garbage = { ...spec, tests };
        const got = await demonstrate(garbage, sb, { seed });
        expect(got.actions).toEqual((await demonstrate(spec, sb, { seed })).actions);
        expect(got.reward).toBeLessThan(1); // the garbage tests were really used by the environment
      }
    }
  });

  it('search: solves an environment whose answer is in its sweep, by calling until the target shows', async () => {
    const base = of('search', 0).find((s) => s.argTypes.join() === 'int') as SearchSpec;
    const spec: SearchSpec = { ...base, program: 'function f(a) {\n  return a + 5;\n}', target: 7, answer: [2] };
    const d = await demonstrate(spec, sb, { seed: 0 });
    expect(d.reward).toBe(1);
    expect(d.actions.at(-1)).toBe('submit([+02])');
    expect(d.turns.at(-2)?.observation).toBe('=7');
  });

  it('repair: solves most level-0 environments from their visible tests', async () => {
    const level0 = await make('repair', 0, 20, ['arith', 'array', 'loop']);
    expect(level0.length).toBe(20);
    let solved = 0;
    for (const spec of level0) solved += (await demonstrate(spec, sb, { seed: 0 })).reward === 1 ? 1 : 0;
    expect(solved).toBeGreaterThanOrEqual(10); // measured 0.82 of 40 at level 0 (arith, array, loop)
  });

  it('probe: writes a program that passes every hidden test of some arith level-0 environments', async () => {
    const arith = await make('probe', 0, 5, ['arith']);
    let solved = 0;
    for (const spec of arith) solved += (await demonstrate(spec, sb, { seed: 1 })).reward === 1 ? 1 : 0;
    expect(solved).toBeGreaterThanOrEqual(1);
  });
});
