// Mastery benchmark (bench/results/mastery.md): does `cogen run` (a preset, default: the default
// one) learn skills a trivial policy cannot pass, and keep them? Each seed runs at 1× and 4× the
// preset's steps, the way the CLI would (startRun, wasm backend, the solver's default threads), and
// the same seeds run once more with rehearsal 0 (the peer) at 1×. Prints a table and the medians,
// and writes bench/results/mastery.json (after every run, so a cut-short benchmark keeps what it
// measured) and the generated section of bench/results/mastery.md.
//
//   npm run bench:mastery [-- --seeds 3,17,42 | --n 3] [--quick] [--preset default] [--scales 1,4]
//                         [--peer-scales 1] [--out bench/results]
// --quick: 1× only and no peer (a smoke-sized check of one preset, e.g. a candidate recipe).
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadPreset, startRun, type RunSummary } from '../src/index.js';
import { drawSeeds, median } from './stats.js';

const { values: args } = parseArgs({
  options: {
    seeds: { type: 'string' },
    n: { type: 'string', default: '3' },
    quick: { type: 'boolean', default: false },
    preset: { type: 'string', default: 'default' },
    scales: { type: 'string', default: '1,4' },
    'peer-scales': { type: 'string', default: '1' },
    out: { type: 'string', default: 'bench/results' },
  },
});

const list = (s: string): number[] => (s.trim() === '' ? [] : s.split(',').map(Number));
const seeds = args.seeds ? list(args.seeds) : drawSeeds(Number(args.n));
const scales = args.quick ? [1] : list(args.scales);
const peerScales = args.quick ? [] : list(args['peer-scales']);
const base = loadPreset(args.preset, { solver: { backend: 'wasm' } });
console.log(
  `bench:mastery — preset ${args.preset} (${base.steps} steps), seeds ${seeds.join(',')} (replay with --seeds ${seeds.join(',')})`,
);

interface Row {
  seed: number;
  scale: number;
  /** 'rehearsal <share>' for the preset as it is, 'rehearsal 0' for the peer. */
  arm: string;
  steps: number;
  wallSeconds: number;
  mastered: { skillId: string; accuracy: number; baseline: number; aboveBaseline: number }[];
  everLearned: string[];
  forgotten: string[];
  forgottenShare: number;
  probeAccuracy: number;
}

const rows: Row[] = [];
const runsDir = join(tmpdir(), `cogen-bench-mastery-${process.pid}`);
const started = Date.now();

async function one(seed: number, scale: number, rehearsal: number | undefined): Promise<Row> {
  const config = loadPreset(args.preset, {
    seed,
    steps: base.steps * scale,
    solver: { backend: 'wasm' },
    ...(rehearsal === undefined ? {} : { curriculum: { rehearsal } }),
  });
  const runId = `s${seed}-x${scale}-r${config.curriculum.rehearsal}`;
  const t0 = Date.now();
  const s: RunSummary = await startRun(config, {
    runsDir,
    preset: args.preset,
    runId,
    log: (line) => process.stderr.write(`[${runId}] ${line}\n`),
  });
  rmSync(s.dir, { recursive: true, force: true });
  return {
    seed,
    scale,
    arm: `rehearsal ${config.curriculum.rehearsal}`,
    steps: s.steps,
    wallSeconds: Math.round((Date.now() - t0) / 100) / 10,
    mastered: s.mastery.map((m) => ({ ...m, aboveBaseline: Math.round(100 * (m.accuracy - m.baseline)) / 100 })),
    everLearned: s.skillsEverLearned,
    forgotten: s.forgotten.skills,
    forgottenShare: s.forgotten.share,
    probeAccuracy: s.probeAccuracy,
  };
}

const range = (xs: number[]): string => (xs.length === 0 ? '-' : `${Math.min(...xs)}–${Math.max(...xs)}`);
const fmt = (x: number, d = 2): string => (Number.isFinite(x) ? x.toFixed(d) : '-');

function table(): string[] {
  const out = [
    '| seed | × steps | arm | steps | wall (s) | mastered at end (accuracy − trivial baseline) | ever learned | forgotten at end |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ];
  for (const r of rows) {
    const mastered = r.mastered.map((m) => `${m.skillId} +${fmt(m.aboveBaseline)}`).join(', ') || 'none';
    out.push(
      `| ${r.seed} | ${r.scale}× | ${r.arm} | ${r.steps} | ${r.wallSeconds} | ${r.mastered.length}: ${mastered} | ${r.everLearned.length} | ${r.forgotten.length} (${Math.round(100 * r.forgottenShare)}%) |`,
    );
  }
  return out;
}

/** The figures the issue's targets read, over the runs made so far. */
function findings() {
  const main = rows.filter((r) => !r.arm.endsWith(' 0') || base.curriculum.rehearsal === 0);
  const byScale = (scale: number, from = main) => from.filter((r) => r.scale === scale);
  const peer = rows.filter((r) => r.arm === 'rehearsal 0' && base.curriculum.rehearsal !== 0);
  const perScale = scales.map((scale) => {
    const rs = byScale(scale);
    const ever = rs.reduce((a, r) => a + r.everLearned.length, 0);
    const forgotten = rs.reduce((a, r) => a + r.forgotten.length, 0);
    return {
      scale,
      runs: rs.length,
      medianMastered: median(rs.map((r) => r.mastered.length)),
      masteredRange: range(rs.map((r) => r.mastered.length)),
      everyMasteredAboveBaseline: rs.every((r) => r.mastered.every((m) => m.aboveBaseline > 0)),
      minAboveBaseline: Math.min(...rs.flatMap((r) => r.mastered.map((m) => m.aboveBaseline))),
      medianWallSeconds: median(rs.map((r) => r.wallSeconds)),
      wallRange: range(rs.map((r) => r.wallSeconds)),
      forgottenShare: ever > 0 ? forgotten / ever : 0,
    };
  });
  const longerKeeps = seeds
    .map((seed) => {
      const one = main.find((r) => r.seed === seed && r.scale === 1);
      const four = main.find((r) => r.seed === seed && r.scale === 4);
      return one && four
        ? {
            seed,
            at1: one.mastered.length,
            at4: four.mastered.length,
            holds: four.mastered.length >= one.mastered.length,
          }
        : null;
    })
    .filter((x) => x !== null);
  const peerRatio = peerScales.map((scale) => {
    const pairs = seeds
      .map(
        (seed) =>
          [byScale(scale).find((r) => r.seed === seed), byScale(scale, peer).find((r) => r.seed === seed)] as const,
      )
      .filter(([a, b]) => a && b);
    const kept = pairs.reduce((a, [r]) => a + r!.mastered.length, 0);
    const peerKept = pairs.reduce((a, [, p]) => a + p!.mastered.length, 0);
    return {
      scale,
      seeds: pairs.length,
      skillsKept: kept,
      peerSkillsKept: peerKept,
      ratio: peerKept > 0 ? kept / peerKept : null,
    };
  });
  return { perScale, longerKeeps, peerRatio };
}

function save(done: boolean): void {
  mkdirSync(args.out, { recursive: true });
  const f = findings();
  const json = {
    date: new Date().toISOString(),
    done,
    preset: args.preset,
    seeds,
    steps: base.steps,
    rehearsal: base.curriculum.rehearsal,
    wallSeconds: Math.round((Date.now() - started) / 1000),
    findings: f,
    runs: rows,
  };
  writeFileSync(join(args.out, 'mastery.json'), `${JSON.stringify(json, null, 2)}\n`);
  const md = [
    `Run ${json.date.slice(0, 16)}Z: preset ${args.preset} (${base.steps} steps, rehearsal ${base.curriculum.rehearsal}), seeds ${seeds.join(', ')}, ${json.wallSeconds} s in all${done ? '' : ' (cut short: the runs made so far)'}.`,
    '',
    ...table(),
    '',
    ...f.perScale
      .filter((s) => s.runs > 0)
      .map(
        (s) =>
          `- ${s.scale}× steps (${s.runs} runs): mastered at the end median ${s.medianMastered} (range ${s.masteredRange}), every one above its trivial baseline: ${s.everyMasteredAboveBaseline ? `yes (by ≥ ${fmt(s.minAboveBaseline)})` : 'no'}; forgotten at the end ${Math.round(100 * s.forgottenShare)}% of those ever learned; wall ${s.wallRange} s (median ${s.medianWallSeconds}).`,
      ),
    ...(f.longerKeeps.length
      ? [
          `- 4× keeps at least the skills of 1×: ${f.longerKeeps.map((k) => `seed ${k.seed} ${k.at1} → ${k.at4}${k.holds ? '' : ' (no)'}`).join(', ')}.`,
        ]
      : []),
    ...f.peerRatio
      .filter((p) => p.seeds > 0)
      .map(
        (p) =>
          `- Peer (rehearsal 0) at ${p.scale}×, ${p.seeds} seeds: skills kept ${p.skillsKept} against ${p.peerSkillsKept}${p.ratio === null ? '' : ` (ratio ${fmt(p.ratio)})`}.`,
      ),
  ];
  const path = join(args.out, 'mastery.md');
  const BEGIN = '<!-- bench:mastery begin (generated) -->';
  const END = '<!-- bench:mastery end -->';
  const old = existsSync(path) ? readFileSync(path, 'utf8') : `# bench:mastery\n\n${BEGIN}\n${END}\n`;
  const at = old.indexOf(BEGIN);
  const to = old.indexOf(END);
  const body = `${BEGIN}\n${md.join('\n')}\n${END}`;
  writeFileSync(
    path,
    at >= 0 && to > at ? `${old.slice(0, at)}${body}${old.slice(to + END.length)}` : `${old.trimEnd()}\n\n${body}\n`,
  );
}

for (const scale of scales) {
  for (const seed of seeds) {
    rows.push(await one(seed, scale, undefined));
    console.log(table().at(-1));
    save(false);
  }
}
if (base.curriculum.rehearsal > 0) {
  for (const scale of peerScales) {
    for (const seed of seeds) {
      rows.push(await one(seed, scale, 0));
      console.log(table().at(-1));
      save(false);
    }
  }
}
save(true);
rmSync(runsDir, { recursive: true, force: true });
console.log(['', ...table(), ''].join('\n'));
console.log(
  readFileSync(join(args.out, 'mastery.md'), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('- '))
    .join('\n'),
);
console.log(`wrote ${join(args.out, 'mastery.json')} and ${join(args.out, 'mastery.md')}`);
