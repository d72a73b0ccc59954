// `cogen proposer --run <id>`: what the learned grammar proposer favours now, per arm: at each choice
// point of the typed grammar, its options with the learned probability against the fixed weights'.
import { Option, type Command } from 'commander';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { preferenceRows, type LearnedState, type PreferenceRow } from '../../proposers/index.js';
import type { RunStore } from '../run/index.js';
import { UserError } from '../../core/errors.js';
import { pct } from '../../core/stats.js';
import { openRun, parseIntArg, runsDirOption } from './shared.js';

export interface ProposerReport {
  runId: string;
  /** The step of the checkpoint (autonomous run) or the served step the state was saved at. */
  step: number;
  arms: {
    arm: string;
    drafts: number;
    baseline: number | null;
    /** Choice points, the most moved first; options by learned probability. */
    points: { point: string; moved: number; options: { option: string; learned: number; fixed: number }[] }[];
  }[];
}

/** The learned proposer's saved state: the last checkpoint of an autonomous run, or a served run's state. */
function savedState(store: RunStore): { step: number; state: LearnedState } {
  const served = store.getMeta('served');
  if (served) {
    const s = JSON.parse(served) as { step: number; proposer?: LearnedState };
    if (s.proposer) return { step: s.step, state: s.proposer };
  } else {
    const ck = store.latestCheckpoint();
    if (ck) {
      const s = JSON.parse(readFileSync(join(ck.path, 'loop.json'), 'utf8')) as { proposer?: LearnedState };
      if (s.proposer) return { step: ck.step, state: s.proposer };
    }
  }
  const config = JSON.parse(store.getMeta('config') ?? '{}') as { proposer?: { learned?: { enabled?: boolean } } };
  throw new UserError(
    config.proposer?.learned?.enabled
      ? `run "${store.getMeta('runId')}" has no saved proposer state yet (no checkpoint)`
      : `run "${store.getMeta('runId')}" does not use the learned proposer (set proposer.learned.enabled, or cogen run --proposer learned)`,
  );
}

export function proposerReport(store: RunStore, top = 3): ProposerReport {
  const { step, state } = savedState(store);
  const byArm = new Map<string, Map<string, PreferenceRow[]>>();
  for (const r of preferenceRows(state)) {
    const points = byArm.get(r.arm) ?? byArm.set(r.arm, new Map()).get(r.arm)!;
    (points.get(r.point) ?? points.set(r.point, []).get(r.point)!).push(r);
  }
  return {
    runId: store.getMeta('runId') ?? '',
    step,
    arms: [...byArm].map(([arm, points]) => ({
      arm,
      drafts: state.arms[arm]?.drafts ?? 0,
      baseline: state.arms[arm]?.baseline ?? null,
      points: [...points]
        .map(([point, rows]) => ({
          point,
          // Total variation distance between the learned and the fixed distribution.
          moved: rows.reduce((a, r) => a + Math.abs(r.learned - r.fixed), 0) / 2,
          options: rows
            .sort((x, y) => y.learned - x.learned)
            .slice(0, top)
            .map(({ option, learned, fixed }) => ({ option, learned, fixed })),
        }))
        .sort((x, y) => y.moved - x.moved || x.point.localeCompare(y.point)),
    })),
  };
}

export function formatProposerReport(r: ProposerReport, format: 'table' | 'json'): string {
  if (format === 'json') return JSON.stringify(r, null, 2);
  const out = [
    `learned proposer of run ${r.runId} at step ${r.step}: options at each choice point, learned probability (fixed weights' in brackets), the most moved points first`,
  ];
  for (const a of r.arms) {
    out.push(
      '',
      `${a.arm}  (${a.drafts} drafts trained on, baseline ${a.baseline === null ? '-' : a.baseline.toFixed(3)})`,
    );
    const width = Math.max(...a.points.map((p) => p.point.length));
    for (const p of a.points) {
      const opts = p.options.map((o) => `${o.option} ${pct(o.learned)} (${pct(o.fixed)})`).join(', ');
      out.push(`  ${p.point.padEnd(width)}  moved ${p.moved.toFixed(2)}  ${opts}`);
    }
  }
  return out.join('\n');
}

export function proposerCommand(program: Command): void {
  program
    .command('proposer')
    .description(
      'what the learned grammar proposer favours now, per arm: the options at each choice point with learned and fixed probability',
    )
    .requiredOption('--run <id>', 'run id')
    .addOption(new Option('-f, --format <format>', 'table or json').choices(['table', 'json']).default('table'))
    .option('--top <n>', 'options shown per choice point', parseIntArg, 3)
    .addOption(runsDirOption())
    .action((o) => {
      const store = openRun(resolve(o.runsDir), o.run);
      try {
        process.stdout.write(`${formatProposerReport(proposerReport(store, o.top), o.format)}\n`);
      } finally {
        store.close();
      }
    });
}
