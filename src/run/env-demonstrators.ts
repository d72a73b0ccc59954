// Tool-using demonstrators (docs/agentic.md, "The cloned ceiling"): for each environment kind a
// scripted policy that solves from what the environment shows alone, written in the solver's
// action language (env-training.ts), so that its episodes can train the solver by cloning (each
// turn's action given the transcript before it, turnContext). The reference policy
// (envs/policies.ts) reads the hidden program and could not be imitated; these read a ShownView
// (what solverPrompt shows: never probe's hidden tests or program, search's answer, repair's fix
// or hidden tests) and the compact results of their own earlier actions, and may compute with them
// in the sandbox, as an agent with an interpreter would.
//   search: calls a fixed, type-driven sweep of argument lists and submits the first that gives the target.
//   repair: runs the one-token edits on the visible tests itself, run_tests the first that passes them all, submits it.
//   probe:  calls fixed inputs, then submits the shortest program of the family and level consistent with every result.
import { createRng } from '../../core/rng.js';
import { valueType, type Example, type Json } from '../../core/task.js';
import { Env, resultText, runAll, type EnvBudgets, type EnvSpec, type Trajectory } from '../../envs/index.js';
import { canonicalHash, compactProgram, getFamily, tokenize } from '../../generators/index.js';
import { deepEqual, normaliseProgram, type RunResult, type Sandbox } from '../../sandbox/index.js';
import { answerInView, parseAction, type Turn } from '../solver/index.js';
import { oneTokenEdits, solverObservation, toEnvAction } from './env-training.js';

interface ViewBase {
  argTypes: string[];
  budgets: EnvBudgets;
  /** The sandbox's metering of one call (how the environment runs programs; says nothing of the answer). */
  stepBudget: number;
}
export type ProbeView = ViewBase & { kind: 'probe'; family: string; level: number; example: Example };
export type SearchView = ViewBase & { kind: 'search'; program: string; target: Json };
export type RepairView = ViewBase & { kind: 'repair'; buggy: string; visible: Example[]; got: (string | null)[] };
/** What an episode's first prompt shows of a spec (probe's example picked by the seed, as solverPrompt picks it). */
export type ShownView = ProbeView | SearchView | RepairView;

export function shownView(spec: EnvSpec, seed: number): ShownView {
  const base = { argTypes: [...spec.argTypes], budgets: { ...spec.budgets }, stepBudget: spec.stepBudget };
  switch (spec.kind) {
    case 'probe': {
      const example = spec.tests[Math.abs(Math.trunc(seed)) % spec.tests.length]!;
      return { ...base, kind: 'probe', family: spec.family, level: spec.level, example };
    }
    case 'search':
      return { ...base, kind: 'search', program: spec.program, target: spec.target };
    case 'repair':
      return { ...base, kind: 'repair', buggy: spec.buggy, visible: spec.visible, got: spec.got ?? [] };
  }
}

export interface DemonstratorOptions {
  /** probe: drafts of the family and level drawn for the candidate programs (default 3000) */
  candidates?: number;
}
/** The next action (solver action text) after the turns so far; plans are memoised across turns. */
export type Demonstrator = (turns: readonly Turn[]) => Promise<string>;

/** Tool calls (submit aside) the solver may make: solverTools offers submit alone after these. */
const callable = (v: ShownView): number => Math.min(v.budgets.calls, v.budgets.turns - 1);
const shape = (v: ShownView): string => `[${v.argTypes.join(',')}]`;
const write = (v: ShownView, tool: string, json: string): string => `${tool}(${answerInView(shape(v), json)})`;
/** A result as a call's observation shows it (`=y`, `=error (…)`). */
const shown = (r: RunResult): string => solverObservation(`f() = ${resultText(r)}`);
const same = (a: string | undefined, b: string): boolean =>
  a === b || (a !== undefined && a.startsWith('=error') && b.startsWith('=error'));
const memo = <T>(make: () => Promise<T>): (() => Promise<T>) => {
  let p: Promise<T> | undefined;
  return () => (p ??= make());
};
const runOn = async (sandbox: Sandbox, program: string, inputs: Json[][], budget: number) => {
  const n = normaliseProgram(program);
  return n.ok ? runAll(sandbox, n.program, inputs, budget * Math.max(1, inputs.length)) : null;
};

export function demonstrator(view: ShownView, sandbox: Sandbox, o: DemonstratorOptions = {}): Demonstrator {
  switch (view.kind) {
    case 'search': {
      const plan = searchPlan(view);
      return (turns) => Promise.resolve(searchAction(view, plan, turns));
    }
    case 'repair': {
      const plan = memo(() => repairPlan(view, sandbox));
      return async (turns) => repairAction(view, await plan(), turns);
    }
    case 'probe': {
      const pool = memo(() => probePool(view, sandbox, o.candidates ?? 3000));
      return async (turns) => probeAction(view, sandbox, await pool(), turns);
    }
  }
}

export interface Demonstration {
  turns: Turn[];
  actions: string[];
  reward: number;
  trajectory: Trajectory;
}

/** Plays one episode of `spec` from reset(seed) with its demonstrator. */
export async function demonstrate(
  spec: EnvSpec,
  sandbox: Sandbox,
  o: DemonstratorOptions & { seed: number },
): Promise<Demonstration> {
  const next = demonstrator(shownView(spec, o.seed), sandbox, o);
  const env = new Env(spec, sandbox);
  env.reset(o.seed);
  const turns: Turn[] = [];
  while (!env.done && turns.length < spec.budgets.turns) {
    const action = await next(turns);
    const r = await env.step(toEnvAction(spec, action));
    turns.push({ action, observation: solverObservation(r.observation) });
  }
  const trajectory = env.trajectory();
  return { turns, actions: turns.map((t) => t.action), reward: trajectory.reward, trajectory };
}

// ---------------------------------------------------------------- search
/** 0, 1, −1, 2, −2, … (n of them) */
const integers = (n: number): number[] =>
  Array.from({ length: n }, (_, k) => (k === 0 ? 0 : k % 2 ? (k + 1) / 2 : -k / 2));
const literals = (program: string, kind: 'num' | 'str'): string[] =>
  tokenize(compactProgram(program))
    .filter((t) => t.kind === kind)
    .map((t) => t.text);

/** What a program with these integer literals could have turned into n: n, its neighbours and negative, n ∓ k, k − n, n / k (k also 2), √n. */
const undoers = (ks: number[]): ((n: number) => number)[] => [
  (n) => n,
  (n) => n - 1,
  (n) => n + 1,
  (n) => -n,
  ...[...ks, 2].flatMap((k) => [
    (n: number) => n - k,
    (n: number) => n + k,
    (n: number) => k - n,
    (n: number) => n / k,
  ]),
  (n) => Math.sqrt(n),
];
const isInt = (x: Json): x is number => Number.isInteger(x);
const STRINGS = ['', 'a', 'b', 'c', 'aa', 'ab', 'ac', 'ba', 'bb', 'bc', 'ca', 'cb', 'cc', 'abc', 'aaa'];

/**
 * Each argument's values: integers 0, then the target undone by each of undoers (for an array
 * target elementwise), the program's integers and their negatives, then 1, −1, 2, −2, …; strings
 * '', the target with a program string cut from either end, its first half, in lower case, then
 * short strings over a, b, c; arrays [], the undone targets, then one-element arrays of the integers.
 */
function sweepValues(v: SearchView, type: string): Json[] {
  const t = v.target;
  const ks = literals(v.program, 'num').map(Number).filter(Number.isInteger);
  const undo = undoers(ks);
  const ints = [0, ...(isInt(t) ? undo.map((u) => u(t)) : []), ...ks.flatMap((k) => [k, -k]), ...integers(25)];
  const strs = literals(v.program, 'str').map((x) => x.slice(1, -1));
  const pieces =
    typeof t === 'string'
      ? [
          t,
          ...strs.flatMap((x) => [
            t.startsWith(x) ? t.slice(x.length) : t,
            t.endsWith(x) ? t.slice(0, t.length - x.length) : t,
          ]),
          t.slice(0, t.length / 2),
          t.toLowerCase(),
        ]
      : [];
  const arrays = Array.isArray(t) && t.every(isInt) ? undo.map((u) => t.map((x) => u(x as number))) : [];
  const byType: Record<string, Json[]> = {
    int: ints.filter(isInt),
    num: ints.filter(isInt),
    bool: [false, true],
    str: ['', ...pieces, ...STRINGS],
    arr: [
      [],
      ...arrays.filter((a) => a.every(isInt)),
      ...ints
        .filter(isInt)
        .slice(0, 9)
        .map((n) => [n]),
      [1, 2],
      [1, 2, 3],
    ],
  };
  const values = byType[type] ?? [null];
  return values.filter((x, i) => values.findIndex((y) => deepEqual(x, y)) === i).slice(0, 24);
}

/** Tuples of indices into `lens` lists whose sum is `sum`, lexicographic. */
function* withSum(lens: number[], sum: number): Generator<number[]> {
  if (lens.length === 0) {
    if (sum === 0) yield [];
    return;
  }
  for (let k = 0; k <= Math.min(sum, lens[0]! - 1); k++)
    for (const rest of withSum(lens.slice(1), sum - k)) yield [k, ...rest];
}

/** The sweep: argument lists by the sum of their values' places (a diagonal over the arguments), valid actions only. */
function searchPlan(v: SearchView): string[] {
  const seqs = v.argTypes.map((t) => sweepValues(v, t));
  const lens = seqs.map((s) => s.length);
  const out: string[] = [];
  for (let sum = 0; out.length < 64 && sum <= lens.reduce((a, n) => a + n, 0); sum++)
    for (const ix of withSum(lens, sum)) {
      const json = JSON.stringify(ix.map((k, i) => seqs[i]![k]!));
      if (parseAction([{ name: 'call', arg: shape(v) }], write(v, 'call', json))) out.push(json);
    }
  return out.slice(0, 64);
}

function searchAction(v: SearchView, plan: string[], turns: readonly Turn[]): string {
  const last = turns.at(-1);
  if (last && last.observation === shown({ ok: true, value: v.target }))
    return `submit${last.action.slice('call'.length)}`;
  const next = plan.find((c) => !turns.some((t) => t.action === write(v, 'call', c)));
  return next === undefined || turns.length >= callable(v)
    ? write(v, 'submit', next ?? plan[0]!)
    : write(v, 'call', next);
}

// ---------------------------------------------------------------- repair
/** The one-token edits by how many visible tests each passes when run here (most first, then sorted); limit hits left out. */
async function repairPlan(v: RepairView, sandbox: Sandbox): Promise<{ program: string; passed: number }[]> {
  const inputs = v.visible.map((e) => e.input);
  const scored = await Promise.all(
    oneTokenEdits(compactProgram(v.buggy)).map(async (program) => {
      const rs = await runOn(sandbox, program, inputs, v.stepBudget);
      if (!rs || rs.some((r) => !r.ok && /^(timeout|memory|stack|output-too-large)/.test(r.reason))) return null;
      return { program, passed: rs.filter((r, i) => r.ok && deepEqual(r.value, v.visible[i]!.output)).length };
    }),
  );
  return scored.filter((s) => s !== null).sort((a, b) => b.passed - a.passed);
}

function repairAction(v: RepairView, plan: { program: string; passed: number }[], turns: readonly Turn[]): string {
  const runs = turns.map((t) => ({
    program: t.action.slice('run_tests('.length, -1),
    passed: t.observation.split(';').filter((m) => m === '+').length,
  }));
  const best = runs.reduce<(typeof runs)[number] | undefined>((b, r) => (b && b.passed >= r.passed ? b : r), undefined);
  const fallback = best?.program ?? plan[0]?.program ?? oneTokenEdits(compactProgram(v.buggy))[0];
  const next = plan.find((c) => !runs.some((r) => r.program === c.program));
  if (best?.passed === v.visible.length || turns.length >= callable(v) || !next) return `submit(${fallback})`;
  return `run_tests(${next.program})`;
}

// ---------------------------------------------------------------- probe
const CALLS: Record<string, Json[]> = {
  int: [0, 1, 2, -1, 5, 3, 10, -3, 7, 4, 6, -2],
  str: ['', 'a', 'ab', 'abc', 'ba', 'hello', 'xyz', 'aab', 'b', 'abcde', 'cab', 'zz'],
  arr: [[], [1], [1, 2], [3, 1, 2], [0, 5, 5], [2, -1], [4], [1, 2, 3, 4], [7, 0], [5, 5, 5], [9, 8], [6]],
  bool: [false, true],
};
CALLS.num = CALLS.int!;

/** The fixed inputs: argument j of input i is its type's (i + j)-th value; one more than the calls, for when the example is one. */
function probeInputs(v: ProbeView): Json[][] {
  const out: Json[][] = [];
  for (let i = 0; out.length < callable(v) + 1 && i < 48; i++) {
    const args = v.argTypes.map((t, j) => CALLS[t]?.[(i + j) % CALLS[t]!.length] ?? null);
    if (!out.some((a) => deepEqual(a, args))) out.push(args);
  }
  return out;
}

/**
 * Program text as the solver's grammar lets it be written: it refuses an operator before a closing
 * bracket (src/solver/answer-grammar.ts), so a loop's `i++)` is written `i+=1)` (the same update).
 */
const writable = (text: string): string => text.replace(/\+\+\)/g, '+=1)').replace(/--\)/g, '-=1)');

interface Candidate {
  /** the program as submitted (run as it is written) */
  text: string;
  /** what each of probeInputs shows when this program is f */
  shown: string[];
}
const pools = new Map<string, Promise<Candidate[]>>();

/** Programs of the view's family and level with its argument types, drawn once per key, shortest compact text first. */
function probePool(v: ProbeView, sandbox: Sandbox, draws: number): Promise<Candidate[]> {
  const inputs = probeInputs(v);
  const key = JSON.stringify([v.family, v.level, v.argTypes, v.stepBudget, draws, inputs]);
  let pool = pools.get(key);
  if (!pool) pools.set(key, (pool = drawPool(v, sandbox, draws, inputs)));
  return pool;
}

async function drawPool(v: ProbeView, sandbox: Sandbox, draws: number, inputs: Json[][]): Promise<Candidate[]> {
  const rng = createRng(`demonstrator/${v.family}/${v.level}`);
  const family = getFamily(v.family);
  const drafts = new Map<string, string>();
  for (let i = 0; i < draws; i++) {
    const d = family.generate(rng, v.level, 'induction');
    const text = writable(compactProgram(d.program));
    const types = (d.inputs[0] as Json[]).map(valueType);
    if (JSON.stringify(types) !== JSON.stringify(v.argTypes) || drafts.has(canonicalHash(d.program))) continue;
    if (parseAction([{ name: 'submit', arg: 'program' }], `submit(${text})`))
      drafts.set(canonicalHash(d.program), text);
  }
  const pool = await Promise.all(
    [...drafts.values()].map(async (text) => ({
      text,
      shown: (await runOn(sandbox, text, inputs, v.stepBudget))?.map(shown) ?? [],
    })),
  );
  return pool.sort((a, b) => a.text.length - b.text.length || (a.text < b.text ? -1 : 1));
}

async function probeAction(v: ProbeView, sandbox: Sandbox, pool: Candidate[], turns: readonly Turn[]): Promise<string> {
  const inputs = probeInputs(v).filter((a) => !deepEqual(a, v.example.input));
  if (turns.length < callable(v) && turns.length < inputs.length)
    return write(v, 'call', JSON.stringify(inputs[turns.length]));
  const all = probeInputs(v);
  const seen = turns.map((t) => ({
    at: all.findIndex((a) => write(v, 'call', JSON.stringify(a)) === t.action),
    obs: t.observation,
  }));
  const fits = pool.filter((c) => seen.every((s) => s.at < 0 || same(c.shown[s.at], s.obs)));
  for (const c of fits) {
    const [r] = (await runOn(sandbox, c.text, [v.example.input], v.stepBudget)) ?? [];
    if (r?.ok && deepEqual(r.value, v.example.output)) return `submit(${c.text})`;
  }
  const params = v.argTypes.map((_, i) => String.fromCharCode(97 + i)).join(',');
  return `submit(${pool[0]?.text ?? `(${params})=>0`})`;
}
