// bench:proposer's record and report (bench/proposer.ts runs the parts): the rows each run gives,
// their summaries across seeds (ratios, paired differences with t intervals) and bench/results/proposer.md.
import type { ForkPoint } from './proposer-fork.js';

/** Two-sided 97.5 % quantiles of Student's t for 1…10 degrees of freedom (z beyond). */
const T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228];

export interface Setup {
  preset: string;
  steps: number;
  batch: number;
  group: number;
  maxLevel: number;
  controller: string;
  seeds: number[];
  /** solver.init of every run (--init) */ init?: string;
}

export interface GrammarRow {
  seed: number;
  proposer: 'fixed' | 'learned';
  freshTasks: number;
  learnableShare: number;
  /** the learnable share of the fresh tasks drawn in each third of the run (absent in older records) */
  learnableByThird?: number[];
  distinctPrograms: number;
  mastered: number;
  probeAccuracy: number;
  /** learned rows: the forked measure at the run's checkpoints (absent in older records) */
  forked?: { learned: number; fixed: number; points: ForkPoint[] };
  wallS: number;
}

export interface SelfPlayRow {
  seed: number;
  proposer: 'generators' | 'self-play';
  freshTasks: number;
  /** the learnable share of the fresh tasks drawn in each third of the run */
  learnableByThird: number[];
  learnableShare: number;
  distinctPrograms: number;
  probeAccuracy: number;
  /** self-play only: drafts the sandbox saw, those it found valid (accepted or duplicate), those it accepted */
  drafts?: number;
  valid?: number;
  accepted?: number;
  /** self-play only: candidates decoded, and drafts whose candidates all failed the reference interpreter */
  candidates?: number;
  exhausted?: number;
  /** self-play only: fresh tasks that came from the generators' fallback (no self-play draft passed) */
  fallback?: number;
  wallS: number;
}

export type GrammarRecord = Setup & { rows: GrammarRow[]; summary: ReturnType<typeof summariseGrammar> };

export interface Record_ {
  /** One record per setting (preset, steps, maxLevel, controller); a rerun of a setting replaces its record. */
  grammar?: GrammarRecord[];
  selfPlay?: Setup & { rows: SelfPlayRow[]; summary: ReturnType<typeof summariseSelfPlay> };
}

function paired<R extends { seed: number; proposer: string }>(
  rows: R[],
  seeds: number[],
  a: string,
  b: string,
  metric: (r: R) => number,
) {
  const diffs = seeds.flatMap((s) => {
    const x = rows.find((r) => r.seed === s && r.proposer === a);
    const y = rows.find((r) => r.seed === s && r.proposer === b);
    return x && y ? [metric(y) - metric(x)] : [];
  });
  const n = diffs.length;
  const mean = n ? diffs.reduce((p, q) => p + q, 0) / n : 0;
  if (n < 2) return { mean, lo: NaN, hi: NaN, n };
  const sd = Math.sqrt(diffs.reduce((p, d) => p + (d - mean) ** 2, 0) / (n - 1));
  const half = (T975[n - 2] ?? 1.96) * (sd / Math.sqrt(n));
  return { mean, lo: mean - half, hi: mean + half, n };
}

const meanOf = <R extends { proposer: string }>(rows: R[], p: string, m: (r: R) => number): number => {
  const xs = rows.filter((r) => r.proposer === p).map(m);
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN;
};

export function summariseGrammar(rows: GrammarRow[], seeds: number[]) {
  const of = (p: string, m: (r: GrammarRow) => number) => meanOf(rows, p, m);
  const ratio = of('learned', (r) => r.learnableShare) / of('fixed', (r) => r.learnableShare);
  const distinct = of('learned', (r) => r.distinctPrograms) / of('fixed', (r) => r.distinctPrograms);
  const mastered = paired(rows, seeds, 'fixed', 'learned', (r) => r.mastered);
  const probe = paired(rows, seeds, 'fixed', 'learned', (r) => r.probeAccuracy);
  // over the seeds whose rows have thirds (older records do not)
  const withThirds = rows.filter((r) => r.learnableByThird);
  const last = (p: string) => meanOf(withThirds, p, (r) => r.learnableByThird![2]!);
  return {
    learnableShare: {
      fixed: of('fixed', (r) => r.learnableShare),
      learned: of('learned', (r) => r.learnableShare),
      ratio,
      target: 1.5,
      met: ratio >= 1.5,
    },
    /** The same in the last third of the run, when the learned proposer has learned (not the target's measure). */
    learnableShareLastThird: {
      fixed: last('fixed'),
      learned: last('learned'),
      ratio: last('learned') / last('fixed'),
      n: withThirds.length / 2,
    },
    distinctPrograms: {
      fixed: of('fixed', (r) => r.distinctPrograms),
      learned: of('learned', (r) => r.distinctPrograms),
      ratio: distinct,
      target: 0.9,
      met: distinct >= 0.9,
    },
    // "Not lower beyond the interval": the interval of the paired difference reaches 0 or above.
    mastered: { ...mastered, met: !(mastered.hi < 0) },
    probeAccuracy: { ...probe, met: !(probe.hi < 0) },
    forked: summariseForked(rows),
  };
}

/** The forked measure over the seeds that have it: means, their ratio, the paired difference, and per arm pooled over seeds and checkpoints. */
function summariseForked(rows: GrammarRow[]) {
  const fs = rows.flatMap((r) => (r.forked ? [r.forked] : []));
  if (fs.length === 0) return undefined;
  const m = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const learned = m(fs.map((f) => f.learned));
  const fixed = m(fs.map((f) => f.fixed));
  const diff = paired(
    fs.flatMap((f, i) => [
      { seed: i, proposer: 'fixed', v: f.fixed },
      { seed: i, proposer: 'learned', v: f.learned },
    ]),
    fs.map((_, i) => i),
    'fixed',
    'learned',
    (r) => r.v,
  );
  const arms = [...new Set(fs.flatMap((f) => f.points.flatMap((p) => Object.keys(p.byArm))))].sort();
  const pooled = (arm: string, k: keyof ForkPoint['byArm'][string]) =>
    m(fs.flatMap((f) => f.points.map((p) => p.byArm[arm]?.[k] ?? NaN)).filter(Number.isFinite));
  const byArm = Object.fromEntries(
    arms.map((a) => [
      a,
      {
        learned: pooled(a, 'learned'),
        fixed: pooled(a, 'fixed'),
        learnedNone: pooled(a, 'learnedNone'),
        fixedNone: pooled(a, 'fixedNone'),
        learnedAll: pooled(a, 'learnedAll'),
        fixedAll: pooled(a, 'fixedAll'),
      },
    ]),
  );
  return { n: fs.length, learned, fixed, ratio: learned / fixed, paired: diff, byArm };
}

/**
 * Candidates the fixed generators decode per draft (the reference interpreter refuses the rest), over
 * the code arms of the setting drawn evenly: the baseline for the self-play decoder's count. (A run's
 * controller weighs arms unevenly, so this is an approximation of the same mix.)
 */

export function summariseSelfPlay(rows: SelfPlayRow[], seeds: number[], generatorCandidates: number) {
  const sp = rows.filter((r) => r.proposer === 'self-play');
  const sum = (m: (r: SelfPlayRow) => number) => sp.reduce((a, r) => a + m(r), 0);
  const validRate =
    sum((r) => r.valid ?? 0) /
    Math.max(
      1,
      sum((r) => r.drafts ?? 0),
    );
  return {
    validRate: { value: validRate, target: 0.9, met: validRate >= 0.9 },
    acceptedRate:
      sum((r) => r.accepted ?? 0) /
      Math.max(
        1,
        sum((r) => r.drafts ?? 0),
      ),
    candidatesPerDraft:
      sum((r) => r.candidates ?? 0) /
      Math.max(
        1,
        sum((r) => (r.drafts ?? 0) + (r.exhausted ?? 0)),
      ),
    /** Share of the programs decoded (candidates) that the reference interpreter and the sandbox found valid. */
    validPerCandidate:
      sum((r) => r.valid ?? 0) /
      Math.max(
        1,
        sum((r) => r.candidates ?? 0),
      ),
    generatorCandidatesPerDraft: generatorCandidates,
    learnableByThird: {
      generators: [0, 1, 2].map((k) => meanOf(rows, 'generators', (r) => r.learnableByThird[k]!)),
      selfPlay: [0, 1, 2].map((k) => meanOf(rows, 'self-play', (r) => r.learnableByThird[k]!)),
    },
    distinctPrograms: {
      generators: meanOf(rows, 'generators', (r) => r.distinctPrograms),
      selfPlay: meanOf(rows, 'self-play', (r) => r.distinctPrograms),
    },
    probeAccuracy: {
      generators: meanOf(rows, 'generators', (r) => r.probeAccuracy),
      selfPlay: meanOf(rows, 'self-play', (r) => r.probeAccuracy),
      paired: paired(rows, seeds, 'generators', 'self-play', (r) => r.probeAccuracy),
    },
  };
}

const f = (x: number, d = 3) => (Number.isFinite(x) ? x.toFixed(d) : '-');
const pc = (x: number) => (Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : '-');
const setupLine = (s: Setup) =>
  `Preset \`${s.preset}\` (${s.steps} steps × ${s.batch} tasks × ${s.group} answers, maxLevel ${s.maxLevel}, controller ${s.controller}, wasm${s.init ? `, solver from ${s.init}` : ''}), seeds ${s.seeds.join(', ')} (drawn at random; \`--seeds ${s.seeds.join(',')}\` replays them).`;

/** bench/results/proposer.md from the record: both parts' tables and targets. */
export function proposerMarkdown(record: Record_): string {
  const md = [
    '# bench:proposer — proposers that learn against the fixed generators',
    '',
    `Generated by bench/proposer.ts (\`npm run bench:proposer -- --part grammar|self-play\`); ${new Date().toISOString().slice(0, 10)}.`,
    '',
  ];
  for (const g of record.grammar ?? []) {
    const s = g.summary;
    md.push(
      `## Learned grammar proposer against the fixed generators (controller ${g.controller}${g.init ? ', solver started from a checkpoint' : ''})`,
      '',
      setupLine(g),
      '',
      '| seed | proposer | fresh tasks | learnable share | by thirds of the run | distinct programs | mastered | probe accuracy | wall s |',
      '|---|---|---|---|---|---|---|---|---|',
      ...g.rows.map(
        (r) =>
          `| ${r.seed} | ${r.proposer} | ${r.freshTasks} | ${pc(r.learnableShare)} | ${r.learnableByThird?.map(pc).join(' / ') ?? '-'} | ${r.distinctPrograms} | ${r.mastered} | ${pc(r.probeAccuracy)} | ${r.wallS.toFixed(0)} |`,
      ),
      '',
      '| measure | fixed | learned | learned vs fixed | target | met |',
      '|---|---|---|---|---|---|',
      `| learnable share (mean over the run) | ${f(s.learnableShare.fixed)} | ${f(s.learnableShare.learned)} | ×${f(s.learnableShare.ratio, 2)} | ≥ ×1.5 | ${s.learnableShare.met ? 'yes' : 'no'} |`,
      ...(s.learnableShareLastThird
        ? [
            `| learnable share, last third of the run (${s.learnableShareLastThird.n} seeds with thirds; not the target's measure) | ${f(s.learnableShareLastThird.fixed)} | ${f(s.learnableShareLastThird.learned)} | ×${f(s.learnableShareLastThird.ratio, 2)} | | |`,
          ]
        : []),
      `| distinct programs (mean) | ${f(s.distinctPrograms.fixed, 1)} | ${f(s.distinctPrograms.learned, 1)} | ×${f(s.distinctPrograms.ratio, 2)} | ≥ ×0.9 | ${s.distinctPrograms.met ? 'yes' : 'no'} |`,
      `| skills mastered, paired difference | | | ${f(s.mastered.mean, 2)} [${f(s.mastered.lo, 2)}, ${f(s.mastered.hi, 2)}] | interval reaches ≥ 0 | ${s.mastered.met ? 'yes' : 'no'} |`,
      `| probe accuracy, paired difference | | | ${f(s.probeAccuracy.mean)} [${f(s.probeAccuracy.lo)}, ${f(s.probeAccuracy.hi)}] | interval reaches ≥ 0 | ${s.probeAccuracy.met ? 'yes' : 'no'} |`,
      '',
      ...forkedLines(g),
    );
  }
  const sp = record.selfPlay;
  if (sp) {
    const s = sp.summary;
    md.push(
      "## Self-play (experimental): the solver's network proposes, against a generators-only run",
      '',
      setupLine(sp),
      '',
      '| seed | proposer | fresh tasks | learnable share, thirds of the run | distinct programs | probe accuracy | drafts valid / sent | accepted (new) | candidates decoded | fresh tasks from the fallback | wall s |',
      '|---|---|---|---|---|---|---|---|---|---|---|',
      ...sp.rows.map(
        (r) =>
          `| ${r.seed} | ${r.proposer} | ${r.freshTasks} | ${r.learnableByThird.map(pc).join(' / ')} | ${r.distinctPrograms} | ${pc(r.probeAccuracy)} | ${r.drafts === undefined ? '' : `${r.valid} / ${r.drafts}`} | ${r.accepted ?? ''} | ${r.candidates ?? ''} | ${r.fallback ?? ''} | ${r.wallS.toFixed(0)} |`,
      ),
      '',
      '| measure | generators | self-play | target | met |',
      '|---|---|---|---|---|',
      `| valid-proposal rate (sandbox: runs, deterministic, in limits; duplicates count as valid) | | ${pc(s.validRate.value)} | ≥ 90% | ${s.validRate.met ? 'yes' : 'no'} |`,
      `| accepted as new tasks (no duplicate) / drafts sent | | ${pc(s.acceptedRate)} | | |`,
      `| candidates decoded per draft (the rest refused by the reference interpreter; generators: drawn evenly over the arms) | ${f(s.generatorCandidatesPerDraft, 2)} | ${f(s.candidatesPerDraft, 2)} | | |`,
      `| valid programs / programs decoded (candidate level: the interpreter's refusals count as invalid; generators: drafts / candidates) | ${pc(1 / s.generatorCandidatesPerDraft)} | ${pc(s.validPerCandidate)} | ≥ 90% | ${s.validPerCandidate >= 0.9 ? 'yes' : 'no'} |`,
      ...[0, 1, 2].map(
        (k) =>
          `| learnable share, third ${k + 1} of the run (mean) | ${pc(s.learnableByThird.generators[k]!)} | ${pc(s.learnableByThird.selfPlay[k]!)} | | |`,
      ),
      `| distinct programs among fresh tasks (mean) | ${f(s.distinctPrograms.generators, 1)} | ${f(s.distinctPrograms.selfPlay, 1)} | | |`,
      `| held-out probe accuracy (mean) | ${pc(s.probeAccuracy.generators)} | ${pc(s.probeAccuracy.selfPlay)} | | |`,
      `| probe accuracy, paired difference self-play − generators | | ${f(s.probeAccuracy.paired.mean)} [${f(s.probeAccuracy.paired.lo)}, ${f(s.probeAccuracy.paired.hi)}] | reported | |`,
      '',
    );
  }
  return md.join('\n');
}

/** The forked measure's tables: per seed and checkpoint, and per arm pooled (band, no answer right, all right). */
function forkedLines(g: GrammarRecord): string[] {
  const s = g.summary.forked;
  if (!s) return [];
  const rows = g.rows.filter((r) => r.forked);
  return [
    `Forked measure (${s.n} seeds): at checkpoints of each learned run, 32 fresh tasks per arm from each proposer (the learned one in its state at that step), answered by that run's solver at that step (${g.group} samples each).`,
    '',
    '| seed | learnable share at each checkpoint, learned / fixed | mean learned | mean fixed |',
    '|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.seed} | ${r.forked!.points.map((p) => `${p.step}: ${pc(p.learned)} / ${pc(p.fixed)}`).join(', ')} | ${pc(r.forked!.learned)} | ${pc(r.forked!.fixed)} |`,
    ),
    '',
    '| arm (pooled over seeds and checkpoints) | learnable, learned / fixed | none right, learned / fixed | all right, learned / fixed |',
    '|---|---|---|---|',
    ...Object.entries(s.byArm).map(
      ([a, v]) =>
        `| ${a} | ${pc(v.learned)} / ${pc(v.fixed)} | ${pc(v.learnedNone)} / ${pc(v.fixedNone)} | ${pc(v.learnedAll)} / ${pc(v.fixedAll)} |`,
    ),
    '',
    '| measure | fixed | learned | learned vs fixed | paired difference (95 %) |',
    '|---|---|---|---|---|',
    `| forked learnable share (mean over checkpoints and seeds) | ${f(s.fixed)} | ${f(s.learned)} | ×${f(s.ratio, 2)} | ${f(s.paired.mean)} [${f(s.paired.lo)}, ${f(s.paired.hi)}] |`,
    '',
  ];
}
