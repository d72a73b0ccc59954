// bench:curriculum's report (bench/curriculum.ts runs the controllers): per-controller aggregates,
// paired statistics against uniform, the verdict on the controller under test, and
// bench/results/curriculum.{json,md,svg}.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ControllerName } from '../curricula/index.js';
import { simMarkdown, simSection } from './curriculum-sim.js';
import { bootstrapMean, formatInterval, pairedDifference, type Interval, type Paired } from './stats.js';
import { mean } from '../core/stats.js';

/** What the report says of the benchmark's settings (bench/curriculum.ts's arguments). */
export interface ReportSetup {
  out: string;
  steps: number;
  seeds: number[];
  controllers: ControllerName[];
  families: string[];
  types: string[];
  maxLevel: number;
  batch: string;
  group: string;
  probeEvery: string;
  probePerArm: string;
  heldoutPerArm: string;
}

export interface RunRecord {
  controller: ControllerName;
  seed: number;
  wallMs: number;
  backend: string;
  /** [step, held-out probe accuracy] at each probe. */
  curve: [number, number][];
  /** Normalised area under the held-out accuracy curve (mean accuracy over the run). */
  auc: number;
  finalProbeAccuracy: number;
  /** Greedy accuracy on the shared held-out set, per "family/level" and overall. */
  heldout: Record<string, number>;
  heldoutOverall: number;
  skillsMastered: string[];
  /** Step of the first `learned` event of each skill. */
  stepsToMaster: Record<string, number>;
  meanLevel: number;
}

interface Aggregate {
  controller: ControllerName;
  curve: [number, number][];
  auc: number;
  finalProbeAccuracy: number;
  heldoutOverall: number;
  heldout: Record<string, number>;
  skillsMastered: number;
  stepsToMaster: Record<string, { mean: number; seeds: number }>;
  wallS: number;
  meanLevel: number;
  /** First probe step at which the seed-mean curve reaches uniform's final seed-mean probe accuracy. */
  stepsToUniformFinal: number | null;
}

function aggregate(runs: RunRecord[], uniformFinal: number | null, setup: ReportSetup): Aggregate[] {
  return setup.controllers.map((controller) => {
    const rs = runs.filter((r) => r.controller === controller);
    const steps0 = rs[0]?.curve.map(([s]) => s) ?? [];
    const curve = steps0.map((s, i): [number, number] => [s, mean(rs.map((r) => r.curve[i]?.[1] ?? 0))]);
    const cells = [...new Set(rs.flatMap((r) => Object.keys(r.heldout)))].sort();
    const heldout = Object.fromEntries(cells.map((k) => [k, mean(rs.map((r) => r.heldout[k] ?? 0))]));
    const skills = [...new Set(rs.flatMap((r) => Object.keys(r.stepsToMaster)))].sort();
    const stepsToMaster = Object.fromEntries(
      skills.map((s) => {
        const xs = rs.flatMap((r) => (s in r.stepsToMaster ? [r.stepsToMaster[s]!] : []));
        return [s, { mean: mean(xs), seeds: xs.length }];
      }),
    );
    const reach = uniformFinal === null ? null : (curve.find(([, a]) => a >= uniformFinal && a > 0)?.[0] ?? null);
    return {
      controller,
      curve,
      auc: mean(rs.map((r) => r.auc)),
      finalProbeAccuracy: mean(rs.map((r) => r.finalProbeAccuracy)),
      heldoutOverall: mean(rs.map((r) => r.heldoutOverall)),
      heldout,
      skillsMastered: mean(rs.map((r) => r.skillsMastered.length)),
      stepsToMaster,
      wallS: mean(rs.map((r) => r.wallMs / 1000)),
      meanLevel: mean(rs.map((r) => r.meanLevel)),
      stepsToUniformFinal: reach,
    };
  });
}

const COLOURS = ['#444444', '#d62728', '#ff7f0e', '#1f77b4', '#2ca02c', '#9467bd', '#8c564b'];

function svgPlot(aggs: Aggregate[], setup: ReportSetup): string {
  const W = 760,
    H = 440,
    L = 60,
    R = 170,
    T = 30,
    B = 50;
  const maxX = setup.steps;
  const maxY = Math.max(0.05, ...aggs.flatMap((a) => a.curve.map(([, y]) => y))) * 1.1;
  const x = (s: number) => L + ((W - L - R) * s) / maxX;
  const y = (v: number) => H - B - ((H - T - B) * v) / maxY;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${L}" y="18" font-size="14">Held-out probe accuracy vs solver steps (mean of ${setup.seeds.length} seeds)</text>`,
    `<line x1="${L}" y1="${H - B}" x2="${W - R}" y2="${H - B}" stroke="black"/>`,
    `<line x1="${L}" y1="${T}" x2="${L}" y2="${H - B}" stroke="black"/>`,
    `<text x="${(L + W - R) / 2}" y="${H - 12}" text-anchor="middle">solver steps</text>`,
    `<text x="16" y="${(T + H - B) / 2}" transform="rotate(-90 16 ${(T + H - B) / 2})" text-anchor="middle">held-out accuracy</text>`,
  ];
  for (let i = 0; i <= 5; i++) {
    const v = (maxY * i) / 5;
    parts.push(
      `<line x1="${L - 4}" y1="${y(v)}" x2="${W - R}" y2="${y(v)}" stroke="#eee"/><text x="${L - 8}" y="${y(v) + 4}" text-anchor="end">${v.toFixed(2)}</text>`,
    );
    const s = Math.round((maxX * i) / 5);
    parts.push(`<text x="${x(s)}" y="${H - B + 16}" text-anchor="middle">${s}</text>`);
  }
  aggs.forEach((a, i) => {
    const c = COLOURS[i % COLOURS.length]!;
    const pts = a.curve.map(([s, v]) => `${x(s).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    const dash = a.controller === 'uniform' || a.controller === 'hardest' ? ' stroke-dasharray="5,3"' : '';
    parts.push(`<polyline points="${pts}" fill="none" stroke="${c}" stroke-width="2"${dash}/>`);
    parts.push(
      `<line x1="${W - R + 12}" y1="${T + 10 + i * 18}" x2="${W - R + 36}" y2="${T + 10 + i * 18}" stroke="${c}" stroke-width="2"${dash}/>`,
    );
    parts.push(`<text x="${W - R + 42}" y="${T + 14 + i * 18}">${a.controller}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n');
}

function markdown(
  aggs: Aggregate[],
  stats: Stats[],
  runs: RunRecord[],
  meta: Record<string, unknown>,
  verdict: string[],
  setup: ReportSetup,
): string {
  const f2 = (v: number) => v.toFixed(3);
  const seedList = (meta.seeds as number[] | undefined) ?? setup.seeds;
  const lines = [
    '# Curriculum benchmark',
    '',
    `Solver steps per run: ${setup.steps}; seeds: ${seedList.join(', ')}${meta.seedsDrawn ? ' (drawn at random by the benchmark)' : ''}; controller under test: ${meta.underTest ? String(meta.underTest) : 'none named (all exploratory)'}; families: ${setup.families.join(', ')}; levels 0–${setup.maxLevel}; types: ${setup.types.join(', ')}; ` +
      `batch ${setup.batch} × group ${setup.group}; probes every ${setup.probeEvery} steps (${setup.probePerArm} per arm); ` +
      `final held-out set: ${setup.heldoutPerArm} tasks per arm, shared by all runs. Backend: ${String(meta.backend)}. Total wall time: ${String(meta.totalWallS)} s.`,
    '',
    "| controller | final probe acc | held-out acc (end) | AUC | steps to uniform's final | skills mastered | mean level | wall s/run |",
    '|---|---|---|---|---|---|---|---|',
    ...aggs.map(
      (a) =>
        `| ${a.controller} | ${f2(a.finalProbeAccuracy)} | ${f2(a.heldoutOverall)} | ${f2(a.auc)} | ${a.stepsToUniformFinal ?? '—'} | ${a.skillsMastered.toFixed(1)} | ${a.meanLevel.toFixed(2)} | ${a.wallS.toFixed(0)} |`,
    ),
    '',
    ...statsMarkdown(stats, runs, seedList, setup),
    '## Held-out accuracy per family and level (end of run, mean over seeds)',
    '',
  ];
  const cells = [...new Set(aggs.flatMap((a) => Object.keys(a.heldout)))].sort();
  lines.push(`| controller | ${cells.join(' | ')} |`, `|---|${cells.map(() => '---').join('|')}|`);
  for (const a of aggs) lines.push(`| ${a.controller} | ${cells.map((c) => f2(a.heldout[c] ?? 0)).join(' | ')} |`);
  lines.push('', '## Steps to master each skill (mean over the seeds that mastered it; seeds in brackets)', '');
  const skills = [...new Set(aggs.flatMap((a) => Object.keys(a.stepsToMaster)))].sort();
  if (skills.length === 0) lines.push('No controller mastered any skill within the budget.');
  else {
    lines.push(`| controller | ${skills.join(' | ')} |`, `|---|${skills.map(() => '---').join('|')}|`);
    for (const a of aggs)
      lines.push(
        `| ${a.controller} | ${skills.map((s) => (a.stepsToMaster[s] ? `${a.stepsToMaster[s].mean.toFixed(0)} (${a.stepsToMaster[s].seeds})` : '—')).join(' | ')} |`,
      );
  }
  lines.push(
    '',
    '## Targets',
    '',
    ...verdict.map((v) => `- ${v}`),
    '',
    '![held-out accuracy vs steps](curriculum.svg)',
    '',
  );
  return lines.join('\n');
}

interface Stats {
  controller: ControllerName;
  auc: Interval;
  finalProbe: Interval;
  heldout: Interval;
  skills: Interval;
  /** Paired with uniform on the seeds both ran (absent for uniform, or without it). */
  vsUniform: { auc: Paired; heldout: Paired; skills: Paired } | null;
}

/** Per controller: means with 95 % bootstrap intervals, and paired differences against uniform. */
function statistics(runs: RunRecord[], seedList: number[], setup: ReportSetup): Stats[] {
  const of = (c: ControllerName) => seedList.map((seed) => runs.find((r) => r.controller === c && r.seed === seed));
  const uni = of('uniform');
  const skills = (r: RunRecord) => r.skillsMastered.length;
  return setup.controllers.map((controller) => {
    const rs = of(controller);
    const done = rs.filter((r): r is RunRecord => r !== undefined);
    const pairs = rs.flatMap((r, i) => (r && uni[i] ? [[r, uni[i]!] as const] : []));
    const paired = (f: (r: RunRecord) => number) =>
      pairedDifference(
        pairs.map(([a]) => f(a)),
        pairs.map(([, b]) => f(b)),
      );
    return {
      controller,
      auc: bootstrapMean(done.map((r) => r.auc)),
      finalProbe: bootstrapMean(done.map((r) => r.finalProbeAccuracy)),
      heldout: bootstrapMean(done.map((r) => r.heldoutOverall)),
      skills: bootstrapMean(done.map(skills)),
      vsUniform:
        controller === 'uniform' || pairs.length === 0
          ? null
          : { auc: paired((r) => r.auc), heldout: paired((r) => r.heldoutOverall), skills: paired(skills) },
    };
  });
}

function statsMarkdown(stats: Stats[], runs: RunRecord[], seedList: number[], setup: ReportSetup): string[] {
  const paired = (x: Paired | undefined) => (x ? `${formatInterval(x)} (p ${x.p.toFixed(3)})` : '—');
  const lines = [
    `## Statistics over ${seedList.length} seeds (mean [95 % bootstrap interval]; against uniform: the paired difference, its interval and a sign-flip p)`,
    '',
    '| controller | held-out AUC | final probe acc | held-out acc (end) | skills mastered | Δ AUC vs uniform | Δ held-out vs uniform | Δ skills vs uniform |',
    '|---|---|---|---|---|---|---|---|',
    ...stats.map(
      (x) =>
        `| ${x.controller} | ${formatInterval(x.auc)} | ${formatInterval(x.finalProbe)} | ${formatInterval(x.heldout)} | ${formatInterval(x.skills, 2)} | ${paired(x.vsUniform?.auc)} | ${paired(x.vsUniform?.heldout)} | ${paired(x.vsUniform?.skills)} |`,
    ),
    '',
    '## Per seed (held-out AUC / skills mastered)',
    '',
    `| seed | ${setup.controllers.join(' | ')} |`,
    `|---|${setup.controllers.map(() => '---').join('|')}|`,
  ];
  for (const seed of seedList) {
    const cell = (c: ControllerName) => {
      const r = runs.find((x) => x.controller === c && x.seed === seed);
      return r ? `${r.auc.toFixed(3)} / ${r.skillsMastered.length}` : '—';
    };
    lines.push(`| ${seed} | ${setup.controllers.map(cell).join(' | ')} |`);
  }
  lines.push('');
  return lines;
}

/** The target (bench/results/curriculum.md), judged on the controller named before the run: its held-out AUC beats uniform's (the paired interval above 0) and it masters ≥ 1.5× uniform's skills on average. */
function verdictLines(stats: Stats[], named: string): string[] {
  const uni = stats.find((x) => x.controller === 'uniform');
  if (!uni) return ['uniform was not run; no comparison.'];
  const out = [`uniform: held-out AUC ${formatInterval(uni.auc)}, skills mastered ${formatInterval(uni.skills, 2)}.`];
  if (!named) return [...out, 'No controller under test was named (--under-test): every comparison is exploratory.'];
  const x = stats.find((s) => s.controller === named);
  if (!x?.vsUniform) return [...out, `${named}: no run paired with uniform.`];
  const auc = x.vsUniform.auc;
  const ratio = uni.skills.mean > 0 ? x.skills.mean / uni.skills.mean : x.skills.mean > 0 ? Infinity : 0;
  out.push(
    `Target, AUC (${named} − uniform, interval above 0): ${formatInterval(auc)}, p ${auc.p.toFixed(3)} — ${auc.lo > 0 ? 'MET' : 'not met'}.`,
    `Target, skills (≥ 1.5× uniform's): ${x.skills.mean.toFixed(2)} vs ${uni.skills.mean.toFixed(2)} (×${Number.isFinite(ratio) ? ratio.toFixed(2) : '∞'}) — ${ratio >= 1.5 && x.skills.mean > 0 ? 'MET' : 'not met'}.`,
    'Other controllers: exploratory.',
  );
  return out;
}

export function writeReports(runs: RunRecord[], meta: Record<string, unknown>, setup: ReportSetup): void {
  const uniRuns = runs.filter((r) => r.controller === 'uniform');
  const uniformFinal = uniRuns.length ? mean(uniRuns.map((r) => r.finalProbeAccuracy)) : null;
  const aggs = aggregate(runs, uniformFinal, setup);
  const seedList = (meta.seeds as number[] | undefined) ?? setup.seeds;
  const stats = statistics(runs, seedList, setup);
  const verdict = verdictLines(stats, String(meta.underTest ?? ''));
  const simulated = simSection();
  writeFileSync(
    join(setup.out, 'curriculum.json'),
    JSON.stringify({ meta, verdict, aggregates: aggs, statistics: stats, simulated, runs }, null, 2) + '\n',
  );
  writeFileSync(
    join(setup.out, 'curriculum.md'),
    markdown(aggs, stats, runs, meta, verdict, setup) + '\n' + simMarkdown(simulated).join('\n'),
  );
  writeFileSync(join(setup.out, 'curriculum.svg'), svgPlot(aggs, setup) + '\n');
  console.log(verdict.join('\n'));
  console.log(`wrote ${setup.out}/curriculum.{json,md,svg} in ${meta.totalWallS} s`);
}
