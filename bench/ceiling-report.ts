// bench:ceiling's records and its table (bench/ceiling.ts writes both; --merge re-renders them).
import { median } from './stats.js';

/** One evaluation: greedy exact-match on held-out and training tasks, sampled pass@1 on held-out. */
export interface Point {
  step: number;
  heldOut: number;
  train: number;
  sampledHeldOut: number;
  seconds: number;
}

/** One arm of one preset and seed: both learners' curves. */
export interface ArmRun {
  preset: string;
  seed: number;
  arm: string;
  backend: string;
  /** The solver's view (src/solver/tokenizer.ts VIEW) the run was made under; absent in runs older than the field. */
  view?: string;
  /** The working's style where the solver wrote one (solver.working; docs/solver-view.md). */
  working?: string;
  trainTasks: number;
  heldOut: number;
  baseline: number;
  steps: number;
  batch: number;
  solver: Point[];
  peer: Point[] | null;
  peerError?: string;
  /** What was added to the peer's torch seed (bench/ceiling.ts --peer-init); absent when 0. */
  peerInit?: number;
}

/** The held-out figure each level-0 arm must reach (docs/solver-view.md); level 1 has none. */
export const CEILING_TARGETS: Record<string, number> = { 'logic/0/deduction': 0.92, 'arith/0/deduction': 0.9 };
/** From this step on, the solver is compared with the peer. */
export const COMPARE_FROM = 300;
/** The peer learns an arm when it ends this far above the arm's trivial baseline. */
export const PEER_LEARNS_BY = 0.3;
/** The solver keeps up where the median over seeds of its mean gap to the peer is at least this (the peer's own noise at level 0). */
export const MEAN_GAP_FLOOR = -0.05;

const f = (x: number | null | undefined): string =>
  x === null || x === undefined || Number.isNaN(x) ? '–' : x.toFixed(3);
const at = (c: Point[] | null, step: number): Point | undefined => c?.find((p) => p.step === step);

/** Curve a's held-out minus curve b's at the steps both measured, from COMPARE_FROM on. */
function gapsOf(a: Point[], b: Point[] | null): number[] {
  if (!b) return [];
  return a
    .filter((p) => p.step >= COMPARE_FROM)
    .flatMap((p) => {
      const q = at(b, p.step);
      return q ? [p.heldOut - q.heldOut] : [];
    });
}

/** Curve a's largest shortfall against curve b (bench/ceiling-noise.ts compares two peers with it). */
export function worstBelow(a: Point[], b: Point[] | null): number | null {
  const gaps = gapsOf(a, b);
  return gaps.length ? Math.min(...gaps) : null;
}

/** The solver's largest shortfall against the peer. */
export const worstGap = (r: ArmRun): number | null => worstBelow(r.solver, r.peer);

/** The mean gap: the worst can be one jump that the two learners take at different steps. */
function meanGap(r: ArmRun): number | null {
  const gaps = gapsOf(r.solver, r.peer);
  return gaps.length ? gaps.reduce((a, b) => a + b, 0) / gaps.length : null;
}

/** The first step at which held-out reached `target`, or null. */
const reached = (c: Point[] | null, target: number | undefined): number | null =>
  target === undefined || !c ? null : (c.find((p) => p.heldOut >= target)?.step ?? null);

/** An arm's group in the report: its preset and arm, the working's style where there is one, and its steps. */
const groupOf = (r: ArmRun): string =>
  `${r.preset} ${r.arm}${r.working ? `, working ${r.working}` : ''}, ${r.steps} steps of ${r.batch}`;

export function ceilingReport(runs: ArmRun[]): string {
  const lines = [
    '# bench:ceiling',
    '',
    "Greedy exact-match on the run's held-out probes (sampled pass@1 in brackets); training at the end; the peer is PyTorch on the same split and batches.",
    '',
    `Solver view: ${[...new Set(runs.map((r) => r.view ?? 'not recorded'))].join(', ')}.`,
    '',
  ];
  const groups = new Map<string, ArmRun[]>();
  for (const r of runs) (groups.get(groupOf(r)) ?? groups.set(groupOf(r), []).get(groupOf(r))!).push(r);
  for (const [key, rs] of groups) {
    const target = CEILING_TARGETS[rs[0]!.arm];
    // a merged report may hold arms measured under different views: each arm names its own
    const views = [...new Set(rs.map((r) => r.view ?? 'not recorded'))].join(', ');
    lines.push(
      `## ${key}, view ${views}${target === undefined ? '' : ` (target ${target} held-out within ${rs[0]!.steps} steps)`}`,
      '',
    );
    lines.push(
      '| seed | train tasks / held out | baseline | solver at 300 / 1000 / end | best | first at target | train at end | peer at 300 / 1000 / end | peer first at target | worst solver − peer from 300 |',
    );
    lines.push('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
    for (const r of rs) {
      const end = r.solver.at(-1);
      const pe = r.peer?.at(-1);
      const show = (p: Point | undefined) => (p ? `${f(p.heldOut)} (${f(p.sampledHeldOut)})` : '–');
      lines.push(
        `| ${r.seed} | ${r.trainTasks} / ${r.heldOut} | ${f(r.baseline)} | ${show(at(r.solver, 300))} / ${show(at(r.solver, 1000))} / ${show(end)} | ${r.solver.length ? f(Math.max(...r.solver.map((p) => p.heldOut))) : '–'} | ${reached(r.solver, target) ?? '–'} | ${f(end?.train)} | ${r.peer ? `${show(at(r.peer, 300))} / ${show(at(r.peer, 1000))} / ${show(pe)}` : (r.peerError ?? '–')} | ${reached(r.peer, target) ?? '–'} | ${f(worstGap(r))} |`,
      );
    }
    lines.push('', keepsUp(rs));
    const finals = rs.map((r) => r.solver.at(-1)?.heldOut ?? NaN);
    const gaps = rs.map(worstGap).filter((g): g is number => g !== null);
    lines.push(
      '',
      `Median of ${rs.length} seed(s): solver ${f(median(finals))} at the end (range ${f(Math.min(...finals))}–${f(Math.max(...finals))})` +
        (target === undefined ? '' : `, target ${target} ${median(finals) >= target ? 'met' : 'not met'}`) +
        (rs.some((r) => r.peer) ? `; the peer ${f(median(rs.map((r) => r.peer?.at(-1)?.heldOut ?? NaN)))}` : '') +
        (gaps.length
          ? `; worst solver − peer from step ${COMPARE_FROM}: median ${f(median(gaps))} (${gaps.map(f).join(', ')}), mean gap ${rs.map(meanGap).map(f).join(', ')}`
          : '') +
        '.',
      '',
    );
  }
  return lines.join('\n');
}

/**
 * The arm's judgement: where the peer learns (median end ≥ baseline + PEER_LEARNS_BY), whether the
 * median over seeds of the solver's mean gap to the peer from COMPARE_FROM is at least MEAN_GAP_FLOOR.
 */
function keepsUp(rs: ArmRun[]): string {
  const peers = rs.filter((r) => r.peer?.length);
  if (!peers.length) return 'No peer: the solver is not judged against it.';
  const margin = median(peers.map((r) => r.peer!.at(-1)!.heldOut - r.baseline));
  if (margin < PEER_LEARNS_BY)
    return `The peer does not learn this arm (median end ${f(margin)} above the baseline, under ${PEER_LEARNS_BY}): not judged.`;
  const gaps = peers.map(meanGap).filter((g): g is number => g !== null);
  const m = median(gaps);
  return `The peer learns this arm (median end ${f(margin)} above the baseline). Solver − peer, mean gap from step ${COMPARE_FROM}: median ${f(m)} (${gaps.map(f).join(', ')}), ${m >= MEAN_GAP_FLOOR ? 'at least' : 'below'} ${MEAN_GAP_FLOOR}: ${m >= MEAN_GAP_FLOOR ? 'keeps up' : 'does not keep up'}.`;
}
