// bench:ceiling's noise floor: how far one peer falls below another that differs only in its
// initial weights (bench/ceiling.ts --peer-init), on the same split and batches. The gap clause
// (worst solver − peer from step 300, bench/ceiling-report.ts) is read against this: a learner
// exactly as good as the peer still shows the second peer's worst gap.
//
//   npx tsx bench/ceiling-noise.ts BASE.json SECOND.json [--out DIR]
// BASE.json (a ceiling.json) has the solver and the peer; SECOND.json the same seeds and arms run
// with --no-solver --peer-init K.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { worstBelow, worstGap, type ArmRun } from './ceiling-report.js';

const { values: args, positionals } = parseArgs({
  allowPositionals: true,
  options: { out: { type: 'string', default: 'bench/results' } },
});
if (positionals.length !== 2) {
  console.error('usage: npx tsx bench/ceiling-noise.ts BASE.json SECOND.json [--out DIR]');
  process.exit(2);
}
const load = (file: string) => (JSON.parse(readFileSync(file, 'utf8')) as { runs: ArmRun[] }).runs;
const [base, second] = positionals.map(load) as [ArmRun[], ArmRun[]];
const key = (r: ArmRun) => `${r.preset} ${r.seed} ${r.arm}`;

const rows = base.flatMap((r) => {
  const s = second.find((x) => key(x) === key(r));
  if (!r.peer || !s?.peer) return [];
  return [
    {
      preset: r.preset,
      seed: r.seed,
      arm: r.arm,
      peerInit: s.peerInit ?? 0,
      solverMinusPeer: worstGap(r),
      secondPeerMinusPeer: worstBelow(s.peer, r.peer),
      peerMinusSecondPeer: worstBelow(r.peer, s.peer),
    },
  ];
});
const f = (x: number | null) => (x === null ? '–' : x.toFixed(3));
console.log('| preset | seed | arm | worst solver − peer | worst second peer − peer | worst peer − second peer |');
console.log('| --- | --- | --- | --- | --- | --- |');
for (const r of rows)
  console.log(
    `| ${r.preset} | ${r.seed} | ${r.arm} | ${f(r.solverMinusPeer)} | ${f(r.secondPeerMinusPeer)} | ${f(r.peerMinusSecondPeer)} |`,
  );
mkdirSync(args.out!, { recursive: true });
writeFileSync(
  join(args.out!, 'ceiling-noise.json'),
  JSON.stringify({ date: new Date().toISOString(), base: positionals[0], second: positionals[1], rows }, null, 2),
);
