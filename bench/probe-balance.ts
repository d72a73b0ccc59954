// bench:probe-balance — how hard the held-out probes are to pass without reading the program. For
// each seed (drawn at random and printed unless given), a run's probes exactly as the preset draws
// them (src/run/draw-probes.ts), and per level-0 skill: its probe count, the best trivial policy's
// accuracy on them (src/run/trivial.ts) and the bar mastery needs (curricula/mastery.ts), beside the
// aim the probe builder balances toward (learnAt − margin). A bar above 1 is a skill no learner can
// master. Writes bench/results/probe-balance.{json,md}.
//
//   npx tsx bench/probe-balance.ts [--preset learn] [--seeds random:8] [--out DIR]
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { masteryBar } from '../curricula/index.js';
import { loadPreset, renderCompact } from '../src/index.js';
import { drawRunProbes, probeSets, sandboxOf, taskSpace } from '../src/run/testing.js';
import { seedsArg } from './stats.js';

const { values: args } = parseArgs({
  options: {
    preset: { type: 'string', default: 'learn' },
    seeds: { type: 'string', default: 'random:8' },
    out: { type: 'string', default: 'bench/results' },
  },
});
const { seeds, drawn } = seedsArg(args.seeds!);
console.log(`bench:probe-balance: preset ${args.preset}, seeds ${drawn ? '(drawn at random) ' : ''}${seeds.join(',')}`);

const rows: { seed: number; skill: string; probes: number; baseline: number; bar: number }[] = [];
let aim = 0;
for (const seed of seeds) {
  const config = loadPreset(args.preset!, { seed });
  const sandbox = await sandboxOf(config);
  const probes = await drawRunProbes(config, sandbox, new Set(), renderCompact);
  await sandbox.close();
  const { mastery } = config.curriculum;
  aim = mastery.learnAt - mastery.margin;
  const sets = probeSets(probes, taskSpace(config).skills, mastery).skills;
  for (const skill of taskSpace(config).skills.filter((s) => s.level === 0 && sets[s.id]!.probes > 0)) {
    const { probes: n, baseline } = sets[skill.id]!;
    rows.push({ seed, skill: skill.id, probes: n, baseline, bar: masteryBar(baseline, mastery) });
  }
}

const skills = [...new Set(rows.map((r) => r.skill))];
const cell = (seed: number, skill: string) => {
  const r = rows.find((x) => x.seed === seed && x.skill === skill)!;
  return `${r.baseline.toFixed(2)} (${r.bar > 1 ? '**out of reach**' : r.bar.toFixed(2)})`;
};
const md = [
  '# bench:probe-balance',
  '',
  `Preset ${args.preset}; per level-0 skill, the best trivial policy's accuracy on its probes and (in brackets) the bar mastery needs; the builder aims at a baseline of ${aim.toFixed(2)} or less. Seeds ${drawn ? 'drawn at random' : 'given'}.`,
  '',
  `| seed | ${skills.join(' | ')} |`,
  `| --- | ${skills.map(() => '---').join(' | ')} |`,
  ...seeds.map((s) => `| ${s} | ${skills.map((k) => cell(s, k)).join(' | ')} |`),
  '',
  `Above the aim: ${rows.filter((r) => r.baseline > aim + 1e-9).length} of ${rows.length} skill-seeds (highest ${Math.max(...rows.map((r) => r.baseline)).toFixed(2)}); out of reach: ${rows.filter((r) => r.bar > 1).length}.`,
].join('\n');
mkdirSync(args.out!, { recursive: true });
writeFileSync(
  join(args.out!, 'probe-balance.json'),
  JSON.stringify({ date: new Date().toISOString(), preset: args.preset, seeds, seedsDrawn: drawn, aim, rows }, null, 2),
);
writeFileSync(join(args.out!, 'probe-balance.md'), `${md}\n`);
console.log(md);
process.exit(0);
