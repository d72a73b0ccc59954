// bench:ceiling — the supervised ceiling per arm (docs/solver-view.md): what cogen's solver learns
// when shown every answer, beside a plain PyTorch peer (bench/ceiling_torch.py) on the same data.
//
// For each preset and seed (drawn at random and printed unless given), the run's own split: the
// held-out probes exactly as a run of that preset and seed draws them (src/run/probes.ts: balanced
// against trivial policies), and for each arm of the --levels (0-1 unless given; --max-level widens
// the preset's space) the rest of its task space (or --train-cap tasks of it) to train on. Two
// learners, the same batches of (prompt, reference) pairs:
//   - cogen's solver, supervise(policy): cross-entropy through its own model, tokens, optimiser and
//     backend (the preset's solver settings, --solver over them), decoding in its answer grammar;
//     where it writes its working (solver.working), it is shown the working's values;
//   - the peer: the same model, positions, tokens, optimiser and schedule in PyTorch, with the plain
//     softmax and no grammar (it may write answers the solver's grammar could not), except a
//     working's template: its text is copied and its holes are typed literals, as the solver's, and
//     its loss counts the tokens the solver chooses.
// Every --every steps: greedy exact-match on held-out and on training (its first --train-eval tasks),
// and sampled pass@1 on held-out (one answer each at temperature 1), beside the arm's trivial
// baseline (the best constant-style policy on its probes). Writes bench/results/ceiling.json (every
// arm as it finishes) and ceiling.md.
//
//   npm run bench:ceiling [-- --presets default,learn --seeds random:3 --steps 3000 --every 100]
//        [--arms logic/0,arith/0] [--levels 0-4 --max-level 4] [--backend wasm] [--solver JSON] [--no-peer | --no-solver] [--peer-init K]
//        [--setup-torch] [--out DIR]
//   npx tsx bench/ceiling.ts --merge DIR,DIR,...   (one ceiling.json from several runs' folders)
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createMasteryTracker } from '../curricula/index.js';
import { buildProbes, trivialBaseline } from '../src/run/testing.js';
import { taskSpace, sandboxOf } from '../src/run/testing.js';
import { verifyTasks } from '../src/run/testing.js';
import {
  createPolicy,
  createRng,
  generateTask,
  loadPreset,
  referenceAnswer,
  renderCompact,
  solverConfigSchema,
  type RunConfig,
  type Task,
} from '../src/index.js';
import { taskWorking } from '../generators/index.js';
import { isWorkShape } from '../core/working.js';
import { taskPrompt } from '../src/run/testing.js';
import {
  allowedTokens,
  answerGrammar,
  answerTokens,
  EOS,
  stepToken,
  supervise,
  tokenText,
  TOKENS,
  VIEW,
  VOCAB_SIZE,
  workTemplate,
} from '../src/solver/testing.js';
import { answerFromView, grammarFor, type PolicyPrompt, type TrainablePolicy } from '../src/solver/index.js';
import { ceilingReport, type ArmRun, type Point } from './ceiling-report.js';
import { seedsArg } from './stats.js';
import { torchPython } from './torch-venv.js';
import type { Sandbox } from '../sandbox/index.js';

const { values: args } = parseArgs({
  options: {
    presets: { type: 'string', default: 'default,learn' },
    seeds: { type: 'string', default: 'random:3' },
    steps: { type: 'string', default: '3000' },
    every: { type: 'string', default: '100' },
    batch: { type: 'string', default: '64' },
    arms: { type: 'string' },
    /** The levels whose arms are trained (e.g. 0-4); with --max-level the preset's space reaches them. */
    levels: { type: 'string', default: '0-1' },
    /** The preset's maxLevel, replaced (its space and probes then reach that level). */
    'max-level': { type: 'string' },
    'train-cap': { type: 'string', default: '4000' },
    'train-eval': { type: 'string', default: '256' },
    backend: { type: 'string', default: 'wasm' },
    /** Solver settings over the preset's (JSON, e.g. '{"optim":{"weightDecay":0.01}}'), for both learners. */
    solver: { type: 'string', default: '{}' },
    'no-peer': { type: 'boolean', default: false },
    'no-solver': { type: 'boolean', default: false },
    /** Added to the peer's torch seed (its initial weights): a second peer's run beside the first is the curves' noise floor. */
    'peer-init': { type: 'string', default: '0' },
    'setup-torch': { type: 'boolean', default: false },
    out: { type: 'string', default: 'bench/results' },
    merge: { type: 'string' },
  },
});

const out = args.out!;
if (args.merge) {
  const runs = args.merge
    .split(',')
    .flatMap((d) => (JSON.parse(readFileSync(join(d, 'ceiling.json'), 'utf8')) as { runs: ArmRun[] }).runs);
  save(runs, { merged: args.merge });
  process.exit(0);
}

const steps = Number(args.steps),
  every = Number(args.every),
  batchSize = Number(args.batch);
const { seeds, drawn } = seedsArg(args.seeds!);
const [lo, hi] = args.levels!.split('-').map(Number) as [number, number?];
const levels = Array.from({ length: (hi ?? lo) - lo + 1 }, (_, i) => lo + i);
const peer = args['no-peer'] ? { error: 'skipped (--no-peer)' } : torchPython(args['setup-torch']);
console.log(
  `bench:ceiling: presets ${args.presets}, seeds${drawn ? ' (drawn at random)' : ''} ${seeds.join(',')}, ${steps} steps of ${batchSize}; peer: ${'python' in peer ? peer.python : peer.error}`,
);

function save(runs: ArmRun[], meta: Record<string, unknown>): void {
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'ceiling.json'), JSON.stringify({ date: new Date().toISOString(), ...meta, runs }, null, 2));
  writeFileSync(join(out, 'ceiling.md'), ceilingReport(runs));
}

/** The arm's training tasks: its space without the run's probes (which `seen` holds), up to the cap. */
async function trainingTasks(
  sandbox: Sandbox,
  arm: { family: string; level: number; type: Task['type'] },
  seed: number,
  seen: Set<string>,
): Promise<Task[]> {
  const rng = createRng(`${seed}/ceiling/${arm.family}/${arm.level}/${arm.type}`);
  const tasks: Task[] = [];
  const own = new Set(seen);
  while (tasks.length < Number(args['train-cap'])) {
    try {
      tasks.push(await generateTask(sandbox, { ...arm, rng, seen: own, attempts: 200 }));
    } catch {
      break; // the arm's space is exhausted
    }
  }
  return tasks;
}

/**
 * A shown answer in the solver's tokens, which of them are its choices (where its grammar allows more
 * than one token: the peer's loss counts those alone), and a working's template in tokens (the peer
 * decodes under it: the text copied, each hole a typed literal) or null.
 */
function shown(policy: TrainablePolicy, p: PolicyPrompt, answer: string) {
  const { prompt, answer: ids } = answerTokens(policy, p, answer);
  const shape = answerGrammar(policy, p);
  const g = grammarFor(shape);
  let state = g.start();
  const free = ids.map((id, k) => {
    const mask = allowedTokens(shape, state, ids.length - k);
    if (id !== EOS) state = stepToken(g, state, tokenText(id))!;
    return mask.reduce((a, b) => a + b, 0) > 1 ? 1 : 0;
  });
  return { prompt, answer: ids, free, template: isWorkShape(shape) ? workTemplate(shape) : null };
}

/** Greedy exact-match (verified, as probes are) of the policy on tasks, or of sampled answers. */
async function accuracy(sandbox: Sandbox, answers: string[], tasks: Task[]): Promise<number> {
  const verdicts = await verifyTasks(
    sandbox,
    tasks.map((task, i) => ({ task, answer: answers[i]! })),
  );
  return verdicts.filter((v) => v.reward >= 1).length / Math.max(1, tasks.length);
}

/** The peer's answers at one evaluation, as it prints them. */
interface PeerAnswers {
  step: number;
  heldOut: string[];
  train: string[];
  sampledHeldOut: string[];
  seconds: number;
}

/** The peer's evaluations, from its process (started at once; it runs beside the solver). */
function runPeer(python: string, job: object): Promise<PeerAnswers[]> {
  const dir = mkdtempSync(join(tmpdir(), 'cogen-ceiling-'));
  writeFileSync(join(dir, 'job.json'), JSON.stringify(job));
  return new Promise((resolve, reject) => {
    const child = spawn(python, ['bench/ceiling_torch.py', join(dir, 'job.json')], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let text = '';
    child.stdout.on('data', (d) => {
      text += d;
    });
    child.on('close', (code) => {
      rmSync(dir, { recursive: true, force: true });
      if (code !== 0) reject(new Error(`peer exited ${code}`));
      else
        resolve(
          text
            .trim()
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as PeerAnswers),
        );
    });
  });
}

async function runArm(
  config: RunConfig,
  preset: string,
  seed: number,
  arm: { family: string; level: number; type: Task['type'] },
  held: Task[],
  train: Task[],
  baseline: number,
  sandbox: Sandbox,
): Promise<ArmRun> {
  const name = `${arm.family}/${arm.level}/${arm.type}`;
  const over = JSON.parse(args.solver!) as Partial<RunConfig['solver']>;
  const solverCfg = solverConfigSchema.parse({
    ...config.solver,
    ...over,
    model: { ...config.solver.model, ...over.model },
    optim: { ...config.solver.optim, ...over.optim },
    backend: args.backend,
  });
  const policy = await createPolicy(solverCfg, { seed, totalSteps: steps, log: (l) => process.stderr.write(`${l}\n`) });
  const rng = createRng(`${seed}/ceiling-batches/${name}`);
  const batches = Array.from({ length: steps }, () =>
    Array.from({ length: batchSize }, () => rng.int(0, train.length - 1)),
  );
  const evalTrain = train.slice(0, Number(args['train-eval']));
  const ask = (t: Task) => taskPrompt(t, renderCompact(t), solverCfg.working);
  // what each task is supervised on: its working's values where the solver writes one, else its answer
  const target = (t: Task): string => {
    const w = solverCfg.working === 'off' ? null : taskWorking(t, solverCfg.working);
    return w && isWorkShape(answerGrammar(policy, ask(t))) ? JSON.stringify(w.values) : referenceAnswer(t);
  };
  const tok = (ts: Task[]) => {
    const rows = ts.map((t) => shown(policy, ask(t), target(t)));
    return {
      prompts: rows.map((r) => r.prompt),
      answers: rows.map((r) => r.answer),
      free: rows.map((r) => r.free),
      templates: rows.map((r) => r.template),
    };
  };
  const peerRun =
    'python' in peer
      ? runPeer(peer.python, {
          seed,
          initSeed: seed + Number(args['peer-init']),
          vocab: VOCAB_SIZE,
          tokens: TOKENS,
          model: solverCfg.model,
          optim: solverCfg.optim,
          steps,
          every,
          batches,
          trainEval: evalTrain.length,
          train: tok(train),
          heldOut: tok(held),
          threads: 1,
        })
      : Promise.resolve(null);
  const curve: Point[] = [];
  const started = Date.now();
  for (let step = 1; step <= (args['no-solver'] ? 0 : steps); step++) {
    const picked = batches[step - 1]!.map((i) => train[i]!);
    await supervise(policy, picked.map(ask), picked.map(target));
    if (step % every !== 0 && step !== steps) continue;
    const point: Point = {
      step,
      heldOut: await accuracy(sandbox, await policy.greedy(held.map(ask)), held),
      train: await accuracy(sandbox, await policy.greedy(evalTrain.map(ask)), evalTrain),
      sampledHeldOut: await accuracy(
        sandbox,
        (await policy.sample(held.map(ask), 1)).answers.map((g) => g[0]!),
        held,
      ),
      seconds: Math.round((Date.now() - started) / 100) / 10,
    };
    curve.push(point);
    process.stderr.write(
      `${preset} seed ${seed} ${name} step ${step}: held-out ${point.heldOut.toFixed(3)} train ${point.train.toFixed(3)} sampled ${point.sampledHeldOut.toFixed(3)}\n`,
    );
  }
  // the grammar each answer is written in (a working's shape, or the answer's type), read back by it below
  const shapes = new Map([...held, ...evalTrain].map((t) => [t, answerGrammar(policy, ask(t))]));
  policy.dispose();
  const peerAnswers = await peerRun.catch((e: Error) => {
    process.stderr.write(`peer: ${e.message}\n`);
    return null;
  });
  // the peer's answers verified as the solver's are, read back from the view as the solver's are
  const read = (texts: string[], tasks: Task[]) => texts.map((t, i) => answerFromView(shapes.get(tasks[i]!)!, t));
  const peerCurve =
    peerAnswers &&
    (await Promise.all(
      peerAnswers.map(async (a): Promise<Point> => ({
        step: a.step,
        seconds: a.seconds,
        heldOut: await accuracy(sandbox, read(a.heldOut, held), held),
        train: await accuracy(sandbox, read(a.train, evalTrain), evalTrain),
        sampledHeldOut: await accuracy(sandbox, read(a.sampledHeldOut, held), held),
      })),
    ));
  return {
    preset,
    seed,
    arm: name,
    backend: policy.backend,
    view: VIEW,
    ...(solverCfg.working === 'off' ? {} : { working: solverCfg.working }),
    trainTasks: train.length,
    heldOut: held.length,
    baseline,
    steps,
    batch: batchSize,
    solver: curve,
    peer: peerCurve,
    ...(Number(args['peer-init']) ? { peerInit: Number(args['peer-init']) } : {}),
    ...(peerCurve ? {} : { peerError: 'python' in peer ? 'the peer failed (its stderr above)' : peer.error }),
  };
}

const runs: ArmRun[] = [];
for (const preset of args.presets!.split(',')) {
  for (const seed of seeds) {
    const config = loadPreset(preset, { seed, ...(args['max-level'] ? { maxLevel: Number(args['max-level']) } : {}) });
    const { arms, skills } = taskSpace(config);
    const sandbox = await sandboxOf(config);
    const seen = new Set<string>();
    const mastery = createMasteryTracker(config.curriculum.mastery);
    // the probes exactly as the run draws them (src/run/loop.ts): same arms, seed stream and options
    const probes = await buildProbes(
      sandbox,
      arms,
      skills,
      { perArm: config.probes.perArm, mastery: mastery.opts },
      createRng(`${config.seed}/probes`),
      seen,
      renderCompact,
    );
    for (const arm of arms.filter((a) => levels.includes(a.level))) {
      const name = `${arm.family}/${arm.level}`;
      if (args.arms && !args.arms.split(',').some((a) => name === a || `${name}/${arm.type}` === a)) continue;
      const mine = probes.filter(
        (p) => p.task.family === arm.family && p.task.level === arm.level && p.task.type === arm.type,
      );
      const train = await trainingTasks(sandbox, arm, seed, seen);
      console.log(
        `${preset} seed ${seed} ${name}/${arm.type}: ${train.length} training tasks, ${mine.length} held out (trivial baseline ${trivialBaseline(mine).toFixed(3)})`,
      );
      runs.push(
        await runArm(
          config,
          preset,
          seed,
          arm,
          mine.map((p) => p.task),
          train,
          trivialBaseline(mine),
          sandbox,
        ),
      );
      save(runs, { seeds, seedsDrawn: drawn, args });
    }
    await sandbox.close();
  }
}
console.log(ceilingReport(runs));
process.exit(0);
