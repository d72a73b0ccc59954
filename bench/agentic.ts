// npm run bench:agentic — the environments' own cost and floor (bench/results/agentic.md): for each
// kind (probe, repair, search) at each level asked for, over the same generated environments:
//   make       environments generated and validated per second (generateEnv: a source task drawn and
//              validated in the sandbox, the kind's build, the reference policy played once)
//   reference  episodes per second with the scripted reference policy, and its success rate (1 by
//              construction: validation plays it)
//   random     episodes per second with the random valid-action policy (schema and types hold; it
//              submits when its calls run out), its success rate (reward 1) and mean reward: the
//              floor a trained solver must beat
// Episodes run one after another on a sandbox of one worker (an episode's steps are sequential), so
// the rates are per core. This machine is shared: compare kinds within one run, and repeat runs.
//   trained    the built-in solver at level 0 (bench/agentic-train.ts): success untrained and after
//              multi-turn GRPO, greedy and sampled (--eval-samples episodes per environment), on its
//              training pool and on held-out environments, with the learning curve; and what the
//              longer context costs per update
//   npm run bench:agentic [-- --levels 0,1] [--envs 30] [--random-seeds 3] [--families arith,str,array,loop]
//                         [--train-steps 150 | probe:100,repair:300,search:800] [--pool 16] [--held-out 16] [--group 8] [--envs-per-step 4] [--seed N]
//                         [--optim '{"lr":1e-3}' (over the agentic solver's optimiser settings)] [--eval-samples 8 (0: greedy only)]
//                         [--out DIR (default bench/results)]
// --train-steps 0 leaves the trained section out; the seed is drawn (and printed) unless given.
import { writeFileSync, mkdirSync } from 'node:fs';
import { loadavg, cpus } from 'node:os';
import { join } from 'node:path';
import { createRng } from '../core/rng.js';
import { createSandbox } from '../sandbox/index.js';
import { drawSeeds, median } from './stats.js';
import { compactProgram } from '../generators/index.js';
import { oneTokenEdits } from '../src/run/testing.js';
import { contextCost, solverOf, trainKind, type TrainedRow } from './agentic-train.js';
import {
  ENV_KINDS,
  Env,
  generateEnv,
  playEpisode,
  randomPolicy,
  referencePolicy,
  type EnvKind,
  type EnvSpec,
  type Policy,
  type RepairSpec,
} from '../envs/index.js';
import { mean } from './stats.js';

const arg = (name: string, def: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : def;
};
const levels = arg('levels', '0,1').split(',').map(Number);
const perKind = Number(arg('envs', '30'));
const randomSeeds = Number(arg('random-seeds', '3'));
const families = arg('families', 'arith,str,array,loop').split(',');
// --train-steps N, or per kind: probe:100,repair:300,search:800 (a kind left out trains 0 steps: none)
const stepsArg = arg('train-steps', '150');
const stepsOf = (kind: EnvKind): number =>
  /^\d+$/.test(stepsArg)
    ? Number(stepsArg)
    : Number(
        stepsArg
          .split(',')
          .find((x) => x.startsWith(`${kind}:`))
          ?.split(':')[1] ?? 0,
      );
const train = {
  steps: Math.max(...ENV_KINDS.map(stepsOf)),
  poolSize: Number(arg('pool', '16')),
  heldOut: Number(arg('held-out', '16')),
  group: Number(arg('group', '8')),
  envsPerStep: Number(arg('envs-per-step', '4')),
  seed: Number(arg('seed', String(drawSeeds(1)[0]))),
  families,
  optim: JSON.parse(arg('optim', '{}')) as Record<string, number>,
  evalSamples: Number(arg('eval-samples', '8')),
};
const solver = solverOf(train);

interface Row {
  kind: EnvKind;
  level: number;
  envs: number;
  makePerSec: number;
  reference: { episodes: number; perSec: number; success: number; meanTurns: number };
  random: {
    episodes: number;
    perSec: number;
    success: number;
    meanReward: number;
    meanTurns: number;
    endings: Record<string, number>;
  };
  /** Families that made no environment of this kind in 30 tries. */
  skipped?: string[];
  /**
   * Repair: the share of environments whose fix is one of the one-token edits the built-in solver
   * writes (src/run/env-training.ts oneTokenEdits), and the median count of those edits: what bounds its
   * success with a budget of a few test runs.
   */
  oneEdit?: { share: number; medianEdits: number };
}

const sb = await createSandbox({ workers: 1 });
const rows: Row[] = [];
// Warm-up (the worker's first programs, JIT): one environment of each kind, untimed.
for (const kind of ENV_KINDS) {
  const s = await generateEnv(sb, { kind, family: 'arith', level: 0, rng: createRng(`warm/${kind}`) });
  await playEpisode(new Env(s, sb), referencePolicy(s), 0);
}

async function play(specs: EnvSpec[], policyOf: (s: EnvSpec, k: number) => Policy, rounds: number) {
  const rewards: number[] = [];
  const turns: number[] = [];
  const endings: Record<string, number> = {};
  const t0 = performance.now();
  for (let k = 0; k < rounds; k++) {
    for (const s of specs) {
      const t = await playEpisode(new Env(s, sb), policyOf(s, k), k);
      rewards.push(t.reward);
      turns.push(t.steps.length);
      const end = t.reward === 1 ? 'solved' : (t.reason ?? 'wrong').split(':')[0]!;
      endings[end] = (endings[end] ?? 0) + 1;
    }
  }
  const secs = (performance.now() - t0) / 1000;
  return {
    episodes: rewards.length,
    perSec: rewards.length / secs,
    success: rewards.filter((r) => r === 1).length / rewards.length,
    meanReward: mean(rewards),
    meanTurns: mean(turns),
    endings,
  };
}

for (const level of levels) {
  for (const kind of ENV_KINDS) {
    const seen = new Set<string>();
    const specs: EnvSpec[] = [];
    const skipped = new Set<string>();
    const t0 = performance.now();
    for (let i = 0; specs.length < perKind && skipped.size < families.length; i++) {
      const family = families[i % families.length]!;
      if (skipped.has(family)) continue;
      try {
        specs.push(await generateEnv(sb, { kind, family, level, rng: createRng(`bench/${kind}/${level}/${i}`), seen }));
      } catch (e) {
        // A family whose programs rarely make this kind (repair needs an operator or literal to break).
        skipped.add(family);
        console.log(
          `  ${kind} L${level}: ${family} skipped (${(e as Error).message.split('(')[1]?.split(';')[0] ?? 'no environment'})`,
        );
      }
    }
    const makePerSec = specs.length / ((performance.now() - t0) / 1000);
    const ref = await play(specs, (s) => referencePolicy(s), 3);
    const rnd = await play(specs, (s, k) => randomPolicy(s, createRng(`random/${s.id}/${k}`)), randomSeeds);
    const row: Row = {
      kind,
      level,
      envs: specs.length,
      makePerSec,
      reference: { episodes: ref.episodes, perSec: ref.perSec, success: ref.success, meanTurns: ref.meanTurns },
      random: {
        episodes: rnd.episodes,
        perSec: rnd.perSec,
        success: rnd.success,
        meanReward: rnd.meanReward,
        meanTurns: rnd.meanTurns,
        endings: rnd.endings,
      },
    };
    if (skipped.size) row.skipped = [...skipped];
    if (kind === 'repair') {
      const edits = specs.map((s) => oneTokenEdits(compactProgram((s as RepairSpec).buggy)));
      const fixed = specs.filter((s, i) => edits[i]!.includes(compactProgram(s.program))).length;
      row.oneEdit = { share: fixed / specs.length, medianEdits: median(edits.map((e) => e.length)) };
      console.log(
        `  repair L${level}: the fix is a one-token edit in ${fixed} of ${specs.length} environments (median ${row.oneEdit.medianEdits} edits, budget ${specs[0]?.budgets.calls} test runs)`,
      );
    }
    rows.push(row);
    console.log(
      `${kind.padEnd(7)} L${level}  make ${makePerSec.toFixed(1).padStart(6)}/s  reference ${ref.perSec.toFixed(1).padStart(6)} ep/s success ${ref.success.toFixed(2)}  random ${rnd.perSec.toFixed(1).padStart(6)} ep/s success ${rnd.success.toFixed(2)} mean reward ${rnd.meanReward.toFixed(2)} (${Object.entries(
        rnd.endings,
      )
        .map(([k, n]) => `${k} ${n}`)
        .join(', ')})`,
    );
  }
}
const trained: TrainedRow[] = [];
let cost: Awaited<ReturnType<typeof contextCost>> = [];
if (train.steps > 0) {
  console.log(
    `trained section: seed ${train.seed}, steps ${ENV_KINDS.map((k) => `${k} ${stepsOf(k)}`).join(', ')}, pool ${train.poolSize}, held-out ${train.heldOut}, ${train.envsPerStep} environments x ${train.group} episodes a step`,
  );
  for (const kind of ENV_KINDS) {
    if (stepsOf(kind) === 0) continue;
    const r = await trainKind(sb, kind, { ...train, steps: stepsOf(kind) }, console.log);
    trained.push(r);
    const s = (x?: number) => (x === undefined ? '' : ` (sampled ${x.toFixed(2)})`);
    console.log(
      `${kind.padEnd(7)} L0  untrained pool ${r.untrained.pool.toFixed(2)} held-out ${r.untrained.heldOut.toFixed(2)}${s(r.untrained.heldOutSampled)}  trained pool ${r.trained.pool.toFixed(2)}${s(r.trained.poolSampled)} held-out ${r.trained.heldOut.toFixed(2)}${s(r.trained.heldOutSampled)} (${r.seconds.toFixed(0)} s)`,
    );
  }
  cost = await contextCost(sb, train);
  for (const c of cost)
    console.log(
      `context ${c.maxPromptLen}+${c.maxAnswerLen}: ${c.msPerUpdate.toFixed(0)} ms per update (mean prompt ${c.promptChars.toFixed(0)} chars)`,
    );
}
await sb.close();

const meta = {
  date: new Date().toISOString(),
  node: process.version,
  cpus: cpus().length,
  loadavg: loadavg().map((x) => Number(x.toFixed(2))),
  levels,
  envsPerKind: perKind,
  randomSeeds,
  families,
  sandboxWorkers: 1,
  train: train.steps > 0 ? { ...train, solver } : null,
};
const dir = arg('out', join(import.meta.dirname, 'results'));
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, 'agentic.json'), JSON.stringify({ meta, rows, trained, contextCost: cost }, null, 2) + '\n');
const f = (x: number, d = 1) => x.toFixed(d);
const md = [
  '# bench:agentic',
  '',
  `Generated by \`npm run bench:agentic\` on ${meta.date.slice(0, 10)}: ${perKind} environments per kind and level (families ${families.join(', ')}), the reference policy 3 times over them, the random valid-action policy ${randomSeeds} times (seeded). One sandbox worker, episodes one after another; ${meta.cpus} cores, load ${meta.loadavg.join(' / ')} (shared machine: compare within the table).`,
  '',
  '| kind | level | make env/s | reference ep/s | reference success | random ep/s | random success | random mean reward | random endings |',
  '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  ...rows.map(
    (r) =>
      `| ${r.kind} | ${r.level} | ${f(r.makePerSec)} | ${f(r.reference.perSec)} | ${f(r.reference.success, 2)} | ${f(r.random.perSec)} | ${f(r.random.success, 2)} | ${f(r.random.meanReward, 2)} | ${Object.entries(
        r.random.endings,
      )
        .map(([k, n]) => `${k} ${n}`)
        .join(', ')}${r.skipped ? ` (families skipped: ${r.skipped.join(', ')})` : ''} |`,
  ),
  '',
  ...rows
    .filter((r) => r.oneEdit)
    .map(
      (r) =>
        `Repair level ${r.level}: the fix is one of the one-token edits the built-in solver writes in ${f(100 * r.oneEdit!.share, 0)} % of the environments (median ${r.oneEdit!.medianEdits} edits to choose from).`,
    ),
  '',
  ...trainedSection(),
].join('\n');
writeFileSync(join(dir, 'agentic.md'), md);
console.log(`wrote ${join(dir, 'agentic.json')} and agentic.md`);

/** The trained section of the report: success beside the untrained model and the random policy, curves, context cost. */
function trainedSection(): string[] {
  if (trained.length === 0)
    return ['Not measured in this run: the built-in solver after training (--train-steps 0).', ''];
  const rnd = (k: string) => rows.find((r) => r.kind === k && r.level === 0)?.random.success;
  const opt = (x?: number) => (x === undefined ? '-' : f(x, 2));
  const curveLine = (r: TrainedRow): string => {
    const w = Math.max(1, Math.floor(r.curve.length / 10));
    const pts: string[] = [];
    for (let i = 0; i < r.curve.length; i += w) {
      const win = r.curve.slice(i, i + w);
      pts.push(`${i}-${i + win.length - 1}: ${f(win.reduce((a, c) => a + c.success, 0) / win.length, 2)}`);
    }
    return `- ${r.kind}: ${pts.join(', ')}`;
  };
  const t = trained[0]!;
  return [
    '## The built-in solver after multi-turn GRPO (level 0)',
    '',
    `Seed ${t.seed}; ${trained.map((r) => `${r.kind} ${r.steps}`).join(', ')} steps of ${train.envsPerStep} environments x ${train.group} episodes drawn from a pool of ${t.poolSize} per kind, model ${JSON.stringify(solver.model)}, optimiser ${JSON.stringify(solver.optim)}, loss ${JSON.stringify(solver.loss)}. Success is reward 1 with greedy decoding, one episode per environment, on the training pool and on ${t.heldOut} held-out environments of the kind${train.evalSamples > 0 ? `; sampled: the sampled policy (the one GRPO trains), ${train.evalSamples} episodes per environment` : ''}; the random valid-action policy is the table above's (its own environments, level 0).`,
    '',
    '| kind | steps | untrained pool | untrained held-out | untrained held-out, sampled | trained pool | trained pool, sampled | trained held-out | trained held-out, sampled | random (above) | train s | held-out endings after training |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...trained.map(
      (r) =>
        `| ${r.kind} | ${r.steps} | ${f(r.untrained.pool, 2)} | ${f(r.untrained.heldOut, 2)} | ${opt(r.untrained.heldOutSampled)} | ${f(r.trained.pool, 2)} | ${opt(r.trained.poolSampled)} | ${f(r.trained.heldOut, 2)} | ${opt(r.trained.heldOutSampled)} | ${rnd(r.kind) === undefined ? '-' : f(rnd(r.kind)!, 2)} | ${f(r.seconds, 0)} | ${Object.entries(
          r.trained.heldOutEndings,
        )
          .map(([k, n]) => `${k} ${n}`)
          .join(', ')} |`,
    ),
    '',
    'Learning curves (sampled success of the training batches, mean over windows of steps; every step in agentic.json):',
    '',
    ...trained.map(curveLine),
    '',
    'What the longer context costs: one multi-turn update on the same played search episodes (prompts cut from the left to the context), median of 5:',
    '',
    '| context (prompt + answer chars) | ms per update | mean prompt chars |',
    '| --- | --- | --- |',
    ...cost.map((c) => `| ${c.maxPromptLen} + ${c.maxAnswerLen} | ${f(c.msPerUpdate, 0)} | ${f(c.promptChars, 0)} |`),
    '',
  ];
}
