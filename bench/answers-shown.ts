// Diagnostic for bench:learn (not a test, not a mode of cogen): what the solver's model learns about
// one family's level-0 deduction (arithmetic by default) when it is shown the answers: a ceiling on
// what RL reaches with as many answers. Every group's first sample is replaced by the reference
// answer with reward 1 (the others are the policy's own, rewarded 0 whatever they say), so the update
// is close to supervised learning through the same GRPO machinery. It separates "the model cannot
// learn or generalise this" from "RL does not find the right answers"; the figures it gave are in
// bench/results/learn.md and mastery.md.
//
//   npx tsx bench/answers-shown.ts [--family arith --steps 800 --tasks 64 --group 2 --lr 3e-3 --wd 0.3 --seed 1]
//                                  [--model '{"dModel":128,"layers":4}' --out FILE]
//
// Held-out: the run's own probes for the family's level 0 (src/run/probes.ts: balanced against trivial
// policies, at least 40, each case type held out only while training keeps more of it), drawn first
// and never trained on; the best trivial policy's accuracy on them is printed, as mastery's margin is
// measured from it.
// Prints greedy exact-match every 50 steps and writes bench/results/answers-shown.json
// (answers-shown-<family>.json for another family; --out another file).
import { mkdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { createSandbox } from '../sandbox/index.js';
import { generateTask, renderCompact } from '../src/index.js';
import { createRng } from '../core/rng.js';
import { createPolicy, grammarFor, solverConfigSchema } from '../src/solver/index.js';
import { allowedTokens, charId, EOS, initBackend, recomputeLogProbs, type RolloutRow } from '../src/solver/testing.js';
import { answerShape, referenceAnswer, type Task } from '../core/task.js';
import { buildProbes, trivialBaseline } from '../src/run/testing.js';
import { allSkills } from '../generators/index.js';
import { masteryConfigSchema } from '../curricula/testing.js';

const { values: args } = parseArgs({
  options: {
    steps: { type: 'string', default: '800' },
    tasks: { type: 'string', default: '64' },
    group: { type: 'string', default: '2' },
    lr: { type: 'string', default: '3e-3' },
    wd: { type: 'string', default: '0.3' },
    seed: { type: 'string', default: '1' },
    family: { type: 'string', default: 'arith' },
    /** The solver's model settings over the default (JSON), to ask whether a larger model learns what the default one does not. */
    model: { type: 'string', default: '{}' },
    out: { type: 'string' },
  },
});
const steps = Number(args.steps),
  perStep = Number(args.tasks),
  G = Number(args.group);
if (G < 2)
  throw new Error('--group must be at least 2: the shown answer needs a wrong sample beside it to get an advantage');

const sandbox = await createSandbox({});
const rng = createRng(`${args.seed}/answers-shown`);
const seen = new Set<string>();
const skills = allSkills().filter((s) => s.family === args.family);
const probes = await buildProbes(
  sandbox,
  [{ family: args.family, level: 0, type: 'deduction' }],
  skills,
  { perArm: 40, mastery: masteryConfigSchema.parse({}) },
  createRng(`${args.seed}/probes`),
  seen,
  renderCompact,
);
const all: Task[] = [];
for (;;) {
  try {
    all.push(
      await generateTask(sandbox, { family: args.family, level: 0, type: 'deduction', rng, seen, attempts: 200 }),
    );
  } catch {
    break; // the level's task space is exhausted
  }
}
const heldOut = probes.map((p) => p.task);
const train = all
  .map((t) => ({ t, k: rng.next() }))
  .sort((a, b) => a.k - b.k)
  .map((x) => x.t);
const baseline = trivialBaseline(probes);

await initBackend('wasm');
const cfg = solverConfigSchema.parse({
  backend: 'wasm',
  optim: { lr: Number(args.lr), weightDecay: Number(args.wd), warmupSteps: 20 },
  loss: { dynamicSampling: false, scale: 'none' },
  model: JSON.parse(args.model!),
});
const policy = await createPolicy(cfg, {
  seed: Number(args.seed),
  totalSteps: steps,
  log: (line) => process.stderr.write(`${line}\n`),
});
const prompt = (t: Task) => ({ text: renderCompact(t), kind: 'literal' as const, shape: answerShape(t) });
const accuracy = async (set: Task[]): Promise<number> => {
  const answers = await policy.greedy(set.map(prompt));
  return answers.filter((a, i) => a === referenceAnswer(set[i]!)).length / set.length;
};

/** Overwrites a sampled row with the reference answer, token by token through the answer grammar. */
function showAnswer(row: RolloutRow, task: Task): void {
  const ref = referenceAnswer(task),
    shape = answerShape(task),
    grammar = grammarFor(shape);
  const maxLen = cfg.model.maxAnswerLen;
  let state = grammar.start();
  row.answer = [];
  row.allowed = [];
  for (let k = 0; k <= ref.length; k++) {
    row.allowed.push(allowedTokens(shape, state, maxLen - k));
    if (k === ref.length) row.answer.push(EOS);
    else {
      row.answer.push(charId(ref[k]!));
      state = grammar.next(state, ref[k]!);
    }
  }
  row.text = ref;
}

const curve: { step: number; seconds: number; heldOut: number; train: number }[] = [];
const started = Date.now();
console.log(
  `${all.length + heldOut.length} tasks: ${heldOut.length} held out (trivial baseline ${baseline.toFixed(3)}); ${perStep} tasks × ${G} a step, lr ${args.lr}, weight decay ${args.wd}, model ${JSON.stringify(cfg.model)}`,
);
console.log('| step | s | held-out | train (80) |');
console.log('| --- | --- | --- | --- |');
for (let step = 1; step <= steps; step++) {
  const batch = Array.from({ length: perStep }, () => train[Math.floor(rng.next() * train.length)]!);
  const rollout = await policy.sample(batch.map(prompt), G);
  batch.forEach((task, g) => showAnswer(rollout.rows[g]![0]!, task));
  // The shown rows' old log-probs are the current policy's (ratio 1), as self-imitation's are.
  const { recomputed } = await recomputeLogProbs(policy, rollout);
  batch.forEach((_, g) => {
    rollout.rows[g]![0]!.oldLogp = Float32Array.from(recomputed[g]![0]!);
  });
  await policy.update(
    rollout,
    batch.map(() => Array.from({ length: G }, (_, i) => (i === 0 ? 1 : 0))),
  );
  if (step % 50 === 0 || step === steps) {
    const point = {
      step,
      seconds: Math.round((Date.now() - started) / 100) / 10,
      heldOut: await accuracy(heldOut),
      train: await accuracy(train.slice(0, 80)),
    };
    curve.push(point);
    console.log(`| ${step} | ${point.seconds} | ${point.heldOut.toFixed(3)} | ${point.train.toFixed(3)} |`);
  }
}
mkdirSync('bench/results', { recursive: true });
const out =
  args.out ??
  (args.family === 'arith' ? 'bench/results/answers-shown.json' : `bench/results/answers-shown-${args.family}.json`);
writeFileSync(
  out,
  JSON.stringify(
    {
      date: new Date().toISOString(),
      args,
      tasks: all.length + heldOut.length,
      heldOut: heldOut.length,
      baseline,
      curve,
    },
    null,
    2,
  ),
);
console.log(`wrote ${out}`);
await sandbox.close();
process.exit(0);
