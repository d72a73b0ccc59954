// The probe plan a run builds (as src/run/loop.ts does), per skill: probes, trivial baseline, masterable.
//   npx tsx bench/probe-plan.ts [preset...] [--families a,b] [--max-level n] [--types t,u]
import { loadPreset } from '../src/run/config.js';
import { taskSpace, sandboxOf } from '../src/run/testing.js';
import { buildProbes, probeSets } from '../src/run/testing.js';
import { createMasteryTracker } from '../curricula/index.js';
import { renderCompact } from '../generators/index.js';
import { createRng } from '../core/rng.js';

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(name);
  return i < 0 ? undefined : args.splice(i, 2)[1];
};
const overrides: Record<string, unknown> = {};
const fams = flag('--families');
if (fams) overrides.families = fams.split(',');
const ml = flag('--max-level');
if (ml) overrides.maxLevel = Number(ml);
const types = flag('--types');
if (types) overrides.types = types.split(',');
const only = flag('--only');
for (const preset of args.length ? args : ['default', 'smoke', 'learn']) {
  const config = loadPreset(preset, overrides);
  const { arms, skills } = taskSpace(config);
  const sandbox = await sandboxOf(config);
  const mastery = createMasteryTracker(config.curriculum.mastery);
  const t0 = Date.now();
  const probes = await buildProbes(
    sandbox,
    arms,
    skills,
    { perArm: config.probes.perArm, mastery: mastery.opts },
    createRng(`${config.seed}/probes`),
    new Set(),
    renderCompact,
  );
  const plan = probeSets(probes, skills, mastery.opts);
  console.log(
    `== ${preset} ${JSON.stringify(overrides)}: ${probes.length} probes (${((Date.now() - t0) / 1000).toFixed(1)} s)`,
  );
  for (const s of skills) {
    if (s.level > (config.maxLevel ?? Infinity) || (only && !s.id.startsWith(only))) continue;
    const p = plan.skills[s.id]!;
    console.log(
      `  ${s.id.padEnd(22)} L${s.level} probes ${String(p.probes).padStart(3)} baseline ${p.baseline.toFixed(2)} ${p.masterable ? 'masterable' : 'NOT masterable'}`,
    );
  }
  await sandbox.close();
}
