// The table of bench:scale-chaos --services (bench/scale/service-faults.ts): one row per run, and a
// summary per fault with the ranges over its runs, as printed and as written to
// bench/results/scale-chaos-services.md.
import type { FaultRunReport, ServiceFault } from './service-faults.js';

const s1 = (ms: number | null) => (ms === null ? '–' : (ms / 1000).toFixed(1));
const range = (xs: number[], f = (x: number) => String(x)) =>
  xs.length === 0
    ? '–'
    : Math.min(...xs) === Math.max(...xs)
      ? f(xs[0]!)
      : `${f(Math.min(...xs))}–${f(Math.max(...xs))}`;

/** The slowest replica's and the slowest worker's return, in ms (null when one never returned). */
export function slowest(r: FaultRunReport): { replica: number | null; worker: number | null } {
  const of = (kind: string) => {
    const ms = r.recovery.filter((x) => x.name.startsWith(kind)).map((x) => x.ms);
    return ms.includes(null) ? null : Math.max(...(ms as number[]));
  };
  return { replica: of('replica'), worker: of('worker') };
}

export function runRows(reports: FaultRunReport[]): string {
  const head =
    '| fault | run | acknowledged | rewards/s before → after the return | exits | store violations | outage: sent / 503 / failed connection / 2xx (committed) | scores answered during the outage, by replica | replicas back (s) | workers back (s) | pause: lock held / other replica blocked (s) |';
  const rows = reports.map((r, i) => {
    const run = reports.slice(0, i + 1).filter((x) => x.fault === r.fault).length;
    const back = slowest(r);
    const o = r.outage;
    const pause = r.pause ? `${r.pause.heldLock ? 'yes' : 'no'} (try ${r.pause.tries}) / ${s1(r.pause.blockMs)}` : '';
    return `| ${r.fault} | ${run} | ${r.acked} | ${r.rates ? `${r.rates.before.toFixed(0)} → ${r.rates.after.toFixed(0)} (${(r.rates.after / r.rates.before).toFixed(2)})` : '–'} | ${r.exits.length} | ${r.store.length} | ${o.sent} / ${o.retriable503} / ${o.connection} / ${o.committed} | ${Object.entries(
      o.committedBy ?? {},
    )
      .sort()
      .map(([k, n]) => `${k.replace('replica ', '#')}: ${n}`)
      .join(', ')} | ${s1(back.replica)} | ${s1(back.worker)} | ${pause} |`;
  });
  return [head, `|${'---|'.repeat(11)}`, ...rows].join('\n');
}

export function summaryRows(reports: FaultRunReport[], faults: readonly ServiceFault[]): string {
  const head =
    '| fault | runs | acknowledged | cogen exits | lost, doubled or altered | every replica back (s) | every worker back (s) | outage answers other than 503 / failed connection / committed 2xx | paused replica blocked the other (s) |';
  const rows = faults
    .map((f) => reports.filter((r) => r.fault === f))
    .filter((rs) => rs.length > 0)
    .map((rs) => {
      const back = rs.map(slowest);
      const reps = back.map((b) => b.replica);
      const wks = back.map((b) => b.worker);
      const store = rs.reduce((n, r) => n + r.store.length, 0);
      const other = rs.reduce((n, r) => n + r.outage.other.length, 0);
      const pause = rs.every((r) => r.pause)
        ? range(
            rs.map((r) => r.pause!.blockMs / 1000),
            (x) => x.toFixed(1),
          )
        : '';
      const sec = (xs: (number | null)[]) =>
        xs.includes(null)
          ? `not all (${xs.filter((x) => x === null).length} never)`
          : range(
              xs.map((x) => x! / 1000),
              (x) => x.toFixed(1),
            );
      return `| ${rs[0]!.fault} | ${rs.length} | ${range(rs.map((r) => r.acked))} | ${rs.reduce((n, r) => n + r.exits.length, 0)} | ${store} | ${sec(reps)} | ${sec(wks)} | ${other} | ${pause} |`;
    });
  return [head, `|${'---|'.repeat(9)}`, ...rows].join('\n');
}

/** The commits' lock hold times over every run (cogen_lock_held_seconds): the share at or under each bound. */
export function lockHoldLine(reports: FaultRunReport[]): string {
  const sum: Record<string, number> = {};
  for (const r of reports) for (const [le, n] of Object.entries(r.lockHeld)) sum[le] = (sum[le] ?? 0) + n;
  const total = sum['+Inf'] ?? 0;
  if (total === 0) return 'No commit was counted.';
  const shares = Object.entries(sum)
    .filter(([le]) => le !== '+Inf')
    .sort((a, b) => Number(a[0]) - Number(b[0]))
    .map(([le, n]) => `≤ ${Number(le) * 1000} ms: ${((100 * n) / total).toFixed(1)} %`);
  const over = Object.entries(sum)
    .filter(([le]) => le !== '+Inf')
    .sort((a, b) => Number(b[0]) - Number(a[0]))[0];
  return `${total} commits held the writer lock ${shares.join(', ')}${over ? `; over ${Number(over[0]) * 1000} ms: ${total - over[1]}` : ''}.`;
}
