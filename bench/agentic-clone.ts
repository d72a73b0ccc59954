// bench:agentic-clone: the cloned ceiling of each environment kind (docs/agentic.md, "The cloned
// ceiling"). Before RL, ask whether a plain model learns to act when it is shown how:
//   1. tool-using demonstrators (src/run/env-demonstrators.ts) play a pool of generated environments
//      and held-out ones, using only what each environment shows them;
//   2. the built-in solver is trained with cross-entropy on each turn's action given the episode so
//      far (superviseActions), on the demonstrators' solved episodes; beside it the plain PyTorch peer
//      (bench/ceiling_torch.py) on the same tokens, model, optimiser and batches;
//   3. every --every steps both play the held-out environments greedily (the peer through its
//      process, between its steps, under the same action grammar: the bench masks its log-probs;
//      with --peer-decode free it writes free text, and an action outside the language ends the
//      episode as malformed); at the end also sampled.
// Reported per kind and level: the demonstrator's success, the trivial baseline (the better of the
// random valid-action policy and a constant submission), both learners' held-out success over steps,
// and the gap (solver − peer, the mean over the last 5 evaluations, as bench:ceiling's). Writes
// bench/results/agentic-clone.json (or --out).
//   npm run bench:agentic-clone [-- --kinds search,repair,probe --levels 0 --seeds random:1
//        --pool 1000 --held-out 64 --steps 600 --batch 32 --every 100 --rl-steps 0 --peer-decode grammar|free
//        --no-peer --setup-torch --out DIR]   (bench/results/agentic-clone.md: --steps 2000 --every 250)
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createRng } from '../core/rng.js';
import {
  CONSTANT_SUBMISSIONS,
  constantSolves,
  Env,
  playEpisode,
  randomPolicy,
  type EnvKind,
  type EnvSpec,
} from '../envs/index.js';
import { createSandbox, type Sandbox } from '../sandbox/index.js';
import { createPolicy, solverConfigSchema, turnContext, type TrainablePolicy, type Turn } from '../src/solver/index.js';
import { actionTokens, superviseActions, TOKENS, VOCAB_SIZE } from '../src/solver/testing.js';
import {
  demonstrate,
  evaluateSolver,
  solverPrompt,
  solverTools,
  trainAgentic,
  type SolverEpisode,
} from '../src/run/testing.js';
import { AGENTIC_SOLVER, makeSpecs } from './agentic-train.js';
import { peerActor, startPeer } from './agentic-clone-peer.js';
import { mean, seedsArg } from './stats.js';
import { torchPython } from './torch-venv.js';

const { values: args } = parseArgs({
  options: {
    kinds: { type: 'string', default: 'search,repair,probe' },
    levels: { type: 'string', default: '0' },
    seeds: { type: 'string', default: 'random:1' },
    families: { type: 'string', default: 'arith,str,array,loop' },
    pool: { type: 'string', default: '1000' },
    'held-out': { type: 'string', default: '64' },
    steps: { type: 'string', default: '600' },
    batch: { type: 'string', default: '32' },
    every: { type: 'string', default: '100' },
    /** Sampled episodes per held-out environment at the end (0: greedy only). */
    'eval-samples': { type: 'string', default: '4' },
    /**
     * Multi-turn GRPO steps on the pool after cloning (4 environments × 8 episodes a step), from the
     * cloned weights at the schedule's last learning rate: whether RL goes past the cloned ceiling.
     */
    'rl-steps': { type: 'string', default: '0' },
    /** Solver settings over AGENTIC_SOLVER's (JSON), for both learners. */
    solver: { type: 'string', default: '{}' },
    'no-peer': { type: 'boolean', default: false },
    /** How the peer writes its actions: under the solver's action grammar, or free text (ceiling_torch.py's own decoding). */
    'peer-decode': { type: 'string', default: 'grammar' },
    'setup-torch': { type: 'boolean', default: false },
    out: { type: 'string', default: 'bench/results' },
  },
});
const n = (k: keyof typeof args): number => Number(args[k]);
if (!['grammar', 'free'].includes(args['peer-decode']!)) {
  console.error(`--peer-decode: expected grammar or free, got "${args['peer-decode']}"`);
  process.exit(2);
}
const { seeds, drawn } = seedsArg(args.seeds!);
const families = args.families!.split(',');
const torch = args['no-peer'] ? { error: 'skipped (--no-peer)' } : torchPython(args['setup-torch']);

interface Point {
  step: number;
  solver: number;
  peer?: number;
}

interface CloneRow {
  kind: EnvKind;
  level: number;
  seed: number;
  /** How the peer wrote its actions (--peer-decode). */
  peerDecode: string;
  pool: number;
  heldOut: number;
  /** Turns the learners are trained on: every turn of the demonstrators' solved pool episodes. */
  rows: number;
  demonstrator: { pool: number; heldOut: number };
  trivial: { random: number; constant: number };
  curve: Point[];
  /** The last evaluation's (absent with --steps 0, which measures the demonstrators and baselines alone). */
  final: { solver?: number; solverSampled?: number; peer?: number; peerSampled?: number };
  solverEndings: Record<string, number>;
  peerEndings?: Record<string, number>;
  /** The final greedy episodes that failed, by where they first left the demonstrator's actions (failures()). */
  solverFailures: Record<string, number>;
  peerFailures?: Record<string, number>;
  gap?: number;
  /** --rl-steps: held-out success after multi-turn GRPO from the cloned weights. */
  rl?: { steps: number; heldOut: number; heldOutSampled?: number; endings: Record<string, number> };
  seconds: { demonstrate: number; solver: number };
  peerError?: string;
}

/** One training row: a context (the transcript before the turn), its tools, and the action the demonstrator wrote. */
interface Shown {
  context: { text: string; tools: ReturnType<typeof solverTools> };
  action: string;
}

/** The demonstrator's episodes of `specs` (episode i at seedOf(i)): its success, its actions, and the turns of its solved episodes as training rows. */
async function demonstrations(sb: Sandbox, specs: EnvSpec[], seedOf: (i: number) => number) {
  const shown: Shown[] = [];
  const actions: string[][] = [];
  let solved = 0;
  for (const [i, spec] of specs.entries()) {
    const s = seedOf(i);
    const ep = await demonstrate(spec, sb, { seed: s });
    actions.push(ep.actions);
    if (ep.reward !== 1) continue;
    solved++;
    const prompt = solverPrompt(spec, s);
    ep.turns.forEach((t: Turn, k: number) => {
      const before = ep.turns.slice(0, k);
      shown.push({
        context: { text: turnContext(prompt, before), tools: solverTools(spec, before) },
        action: t.action,
      });
    });
  }
  return { shown, actions, success: solved / Math.max(1, specs.length) };
}

/** The trivial baseline's two parts on the held-out environments: the random valid-action policy (3 seeds) and the best constant submission (envs/policies.ts). */
async function trivial(sb: Sandbox, specs: EnvSpec[]): Promise<{ random: number; constant: number }> {
  let random = 0;
  for (let r = 0; r < 3; r++)
    for (const [i, spec] of specs.entries())
      if ((await playEpisode(new Env(spec, sb), randomPolicy(spec, createRng(`clone-random/${r}/${i}`)))).reward === 1)
        random++;
  const solves = await Promise.all(specs.map((spec) => constantSolves(sb, spec)));
  const constant = Array.from({ length: CONSTANT_SUBMISSIONS }, (_, k) => mean(solves.map((c) => c[k]!)));
  return { random: random / (3 * specs.length), constant: Math.max(...constant) };
}

async function fineTune(
  policy: TrainablePolicy,
  sb: Sandbox,
  pool: EnvSpec[],
  held: EnvSpec[],
  seed: number,
): Promise<NonNullable<CloneRow['rl']>> {
  const steps = n('rl-steps');
  await trainAgentic(policy, sb, pool, {
    steps,
    envsPerStep: 4,
    group: 8,
    seed,
    onStep: (s) => {
      if (s.step % 25 === 0) log(`  rl step ${s.step}: sampled success ${s.success.toFixed(2)}`);
    },
  });
  const h = await evaluateSolver(policy, sb, held);
  const sampled =
    n('eval-samples') > 0
      ? (await evaluateSolver(policy, sb, held, { samples: n('eval-samples') })).success
      : undefined;
  log(`  after ${steps} RL steps: held-out ${h.success.toFixed(3)}`);
  return {
    steps,
    heldOut: h.success,
    ...(sampled === undefined ? {} : { heldOutSampled: sampled }),
    endings: h.endings,
  };
}

const toolOf = (action: string): string => action.slice(0, action.indexOf('('));

/** Where a failed episode first left the demonstrator's actions on the same environment, and what it wrote there. */
function whyFailed(wrote: string[], demo: string[]): string {
  const k = wrote.findIndex((a, j) => a !== demo[j]);
  if (k < 0) return 'as the demonstrator (which failed too)';
  const [mine, theirs] = [toolOf(wrote[k]!), toolOf(demo[k] ?? 'submit(')];
  if (mine === 'submit')
    return theirs === 'submit' ? 'submitted another answer' : 'submitted where the demonstrator called';
  return theirs === 'submit' ? 'called where the demonstrator submitted' : `another ${mine}`;
}

/** The failed greedy episodes of an evaluation (one per held-out environment, in order), counted by whyFailed. */
function failures(episodes: SolverEpisode[], demo: string[][]): Record<string, number> {
  const out: Record<string, number> = {};
  episodes.forEach((e, i) => {
    if (e.reward === 1) return;
    const why = whyFailed(
      e.turns.map((t) => t.action),
      demo[i]!,
    );
    out[why] = (out[why] ?? 0) + 1;
  });
  return out;
}

async function cloneRun(sb: Sandbox, kind: EnvKind, level: number, seed: number): Promise<CloneRow> {
  const seen = new Set<string>();
  const label = `agentic-clone/${seed}/${kind}/${level}`;
  const pool = await makeSpecs(sb, kind, n('pool'), families, `${label}/pool`, seen, level);
  const held = await makeSpecs(sb, kind, n('held-out'), families, `${label}/held`, seen, level);
  const t0 = performance.now();
  const train = await demonstrations(sb, pool, (i) => seed + i);
  // held out at episode seed 0, the seed the learners' evaluations play (probe's shown example)
  const heldDemo = await demonstrations(sb, held, () => 0);
  const demoSeconds = (performance.now() - t0) / 1000;
  const base = await trivial(sb, held);
  const over = JSON.parse(args.solver!) as Record<string, Record<string, unknown>>;
  const cfg = solverConfigSchema.parse({
    ...AGENTIC_SOLVER,
    ...over,
    model: { ...AGENTIC_SOLVER.model, ...over.model },
    optim: { ...AGENTIC_SOLVER.optim, ...over.optim },
  });
  const steps = n('steps');
  const policy = await createPolicy(cfg, { seed, totalSteps: steps, log: () => {} });
  const rng = createRng(`${label}/batches`);
  const batches = Array.from({ length: steps }, () =>
    Array.from({ length: n('batch') }, () => rng.int(0, train.shown.length - 1)),
  );
  log(
    `${kind}/${level} seed ${seed}: pool ${pool.length}, held-out ${held.length}; demonstrator ${train.success.toFixed(2)} pool / ${heldDemo.success.toFixed(2)} held-out; ${train.shown.length} turns to clone; trivial random ${base.random.toFixed(2)}, constant ${base.constant.toFixed(2)}`,
  );
  const tokens = train.shown.map((r) => actionTokens(policy, r.context, r.action));
  const started =
    'python' in torch && train.shown.length > 0
      ? startPeer(torch.python, {
          seed,
          vocab: VOCAB_SIZE,
          tokens: TOKENS,
          model: cfg.model,
          optim: cfg.optim,
          steps,
          every: n('every'),
          batches,
          trainEval: 0,
          train: { prompts: tokens.map((t) => t.prompt), answers: tokens.map((t) => t.answer) },
          heldOut: { prompts: [], answers: [] },
          threads: 1,
          serve: true,
        })
      : null;
  const actor =
    started &&
    peerActor(
      started.peer,
      cfg.model.maxPromptLen,
      cfg.model.maxAnswerLen,
      args['peer-decode'] as 'grammar' | 'free',
      seed,
    );
  const curve: Point[] = [];
  const final: CloneRow['final'] = {};
  let solverEndings: Record<string, number> = {};
  let solverFailures: Record<string, number> = {};
  let peerEndings: Record<string, number> | undefined;
  let peerFailures: Record<string, number> | undefined;
  let peerError: string | undefined = 'python' in torch ? undefined : torch.error;
  const t1 = performance.now();
  for (let step = 1; step <= (train.shown.length > 0 ? steps : 0); step++) {
    const picked = batches[step - 1]!.map((i) => train.shown[i]!);
    await superviseActions(
      policy,
      picked.map((r) => r.context),
      picked.map((r) => r.action),
    );
    if (step % n('every') !== 0 && step !== steps) continue;
    const s = await evaluateSolver(policy, sb, held);
    solverEndings = s.endings;
    solverFailures = failures(s.episodes, heldDemo.actions);
    const point: Point = { step, solver: s.success };
    if (actor && !peerError) {
      try {
        await started.peer.next(); // the peer reached this step: its evaluation line
        const p = await evaluateSolver(actor, sb, held);
        point.peer = p.success;
        peerEndings = p.endings;
        peerFailures = failures(p.episodes, heldDemo.actions);
        if (step === steps && n('eval-samples') > 0)
          final.peerSampled = (await evaluateSolver(actor, sb, held, { samples: n('eval-samples') })).success;
        started.peer.tell('{"resume":true}');
      } catch (e) {
        peerError = (e as Error).message;
      }
    }
    curve.push(point);
    log(
      `  step ${step}: held-out solver ${point.solver.toFixed(3)}${point.peer === undefined ? '' : ` peer ${point.peer.toFixed(3)}`}`,
    );
  }
  const solverSeconds = (performance.now() - t1) / 1000;
  if (curve.length > 0) {
    final.solver = curve[curve.length - 1]!.solver;
    final.peer = curve[curve.length - 1]!.peer;
    if (n('eval-samples') > 0)
      final.solverSampled = (await evaluateSolver(policy, sb, held, { samples: n('eval-samples') })).success;
  }
  const rl = n('rl-steps') > 0 && curve.length > 0 ? await fineTune(policy, sb, pool, held, seed) : undefined;
  policy.dispose();
  if (started) {
    started.peer.close();
    rmSync(started.dir, { recursive: true, force: true });
  }
  const last = curve.slice(-5).filter((p) => p.peer !== undefined);
  return {
    kind,
    level,
    seed,
    peerDecode: args['peer-decode']!,
    pool: pool.length,
    heldOut: held.length,
    rows: train.shown.length,
    demonstrator: { pool: train.success, heldOut: heldDemo.success },
    trivial: base,
    curve,
    final,
    solverEndings,
    solverFailures,
    ...(peerEndings ? { peerEndings, peerFailures } : {}),
    ...(last.length > 0 ? { gap: mean(last.map((p) => p.solver - p.peer!)) } : {}),
    ...(rl ? { rl } : {}),
    seconds: { demonstrate: demoSeconds, solver: solverSeconds },
    ...(peerError ? { peerError } : {}),
  };
}

const log = (l: string): void => void process.stderr.write(`${l}\n`);
const f2 = (x: number | undefined): string => (x === undefined ? '—' : x.toFixed(2));

function table(rows: CloneRow[]): string {
  const head = [
    'kind',
    'level',
    'seed',
    'pool',
    'held-out',
    'turns cloned',
    'demonstrator held-out',
    'trivial (random / constant)',
    'solver',
    'solver sampled',
    'peer',
    'peer sampled',
    'gap (last 5)',
  ];
  const lines = rows.map((r) =>
    [
      r.kind,
      r.level,
      r.seed,
      r.pool,
      r.heldOut,
      r.rows,
      f2(r.demonstrator.heldOut),
      `${f2(r.trivial.random)} / ${f2(r.trivial.constant)}`,
      f2(r.final.solver),
      f2(r.final.solverSampled),
      f2(r.final.peer),
      f2(r.final.peerSampled),
      r.gap === undefined ? '—' : (r.gap >= 0 ? '+' : '') + r.gap.toFixed(3),
    ].join(' | '),
  );
  return [`| ${head.join(' | ')} |`, `|${head.map(() => ' --- ').join('|')}|`, ...lines.map((l) => `| ${l} |`)].join(
    '\n',
  );
}

console.log(
  `bench:agentic-clone: kinds ${args.kinds}, levels ${args.levels}, seeds${drawn ? ' (drawn at random)' : ''} ${seeds.join(',')}, ${n('steps')} steps of ${n('batch')}; peer: ${'python' in torch ? torch.python : torch.error}`,
);
const sb = await createSandbox({ workers: 1 });
const rows: CloneRow[] = [];
for (const seed of seeds)
  for (const level of args.levels!.split(',').map(Number))
    for (const kind of args.kinds!.split(',') as EnvKind[]) {
      rows.push(await cloneRun(sb, kind, level, seed));
      mkdirSync(args.out!, { recursive: true });
      writeFileSync(
        join(args.out!, 'agentic-clone.json'),
        JSON.stringify({ date: new Date().toISOString(), seeds, seedsDrawn: drawn, args, rows }, null, 1),
      );
    }
await sb.close();
console.log(table(rows));
process.exit(0);
