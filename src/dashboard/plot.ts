// `cogen plot`: a run's curves as one static picture (SVG, or PNG rendered from it by resvg), for
// papers and issues. One column per run (two runs side by side), one row per chart of the dashboard
// (the same groups: reward and solve rate, held-out accuracy, entropy, KL, learning rate, tasks/s, …),
// with the same y range across a row so the columns compare. Every line carries its values in
// data-values, which is how the tests read the points back.
import { writeFileSync } from 'node:fs';
import { extname } from 'node:path';
import { UserError } from '../../core/errors.js';
import { CURVE_GROUPS, curvesOf, metricsOf, runExists, runInfo, withRun, type Curves } from './data.js';

const PALETTE = [
  '#386cb0',
  '#f0027f',
  '#1b9e77',
  '#bf5b17',
  '#7570b3',
  '#e6ab02',
  '#666666',
  '#66a61e',
  '#a6761d',
  '#e7298a',
];
const PANEL_W = 460;
const PANEL_H = 190;
const M = { l: 56, r: 175, t: 26, b: 30 };
const HEAD = 40;

const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);
const num = (x: number) => (Number.isInteger(x) ? String(x) : x.toPrecision(4).replace(/\.?0+(e|$)/, '$1'));

function ticks(lo: number, hi: number, n = 4): number[] {
  if (hi <= lo) return [lo];
  const raw = (hi - lo) / n;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((f) => f * mag).find((s) => s >= raw) ?? raw;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

export interface PlotRun {
  id: string;
  curves: Curves;
}

/** Reads runs' curves (read-only); an unknown run or one with no steps is a UserError naming it. */
export function loadPlotRuns(runsDir: string, ids: string[]): PlotRun[] {
  return ids.map((id) => {
    if (!runExists(runsDir, id)) throw new UserError(`unknown run "${id}" (no ${runsDir}/${id}; see cogen runs)`);
    return withRun(runsDir, id, (db) => {
      const info = runInfo(db, id);
      const curves = curvesOf(metricsOf(db));
      if (curves.steps.length === 0)
        throw new UserError(
          `run "${id}" has no steps to plot yet (${info.phase === 'starting' ? 'it is starting' : `status ${info.status}`})`,
        );
      return { id, curves };
    });
  });
}

/** The SVG of the runs' curves: one column per run, one row per chart any of them has. */
export function plotSvg(runs: PlotRun[]): string {
  const rowIds = CURVE_GROUPS.map((g) => g.id).filter((id) =>
    runs.some((r) => r.curves.charts.some((c) => c.id === id)),
  );
  const W = runs.length * (PANEL_W + M.l + M.r);
  const H = HEAD + rowIds.length * (PANEL_H + M.t + M.b);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">`,
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
  ];
  runs.forEach((run, ci) => {
    const x0 = ci * (PANEL_W + M.l + M.r);
    out.push(`<text x="${x0 + M.l}" y="24" font-size="16" font-weight="bold" fill="#1d2330">run ${esc(run.id)}</text>`);
  });
  rowIds.forEach((rowId, ri) => {
    // One y range per row (across runs), so side-by-side panels compare.
    const all = runs.flatMap((r) =>
      r.curves.charts
        .filter((c) => c.id === rowId)
        .flatMap((c) => c.values.flat().filter((v): v is number => v !== null)),
    );
    let lo = Math.min(...all);
    let hi = Math.max(...all);
    if (!Number.isFinite(lo)) {
      lo = 0;
      hi = 1;
    }
    if (hi === lo) {
      lo -= Math.abs(lo) * 0.1 || 0.5;
      hi += Math.abs(hi) * 0.1 || 0.5;
    }
    const pad = (hi - lo) * 0.05;
    lo -= pad;
    hi += pad;
    runs.forEach((run, ci) => {
      const chart = run.curves.charts.find((c) => c.id === rowId);
      const x0 = ci * (PANEL_W + M.l + M.r) + M.l;
      const y0 = HEAD + ri * (PANEL_H + M.t + M.b) + M.t;
      const title = CURVE_GROUPS.find((g) => g.id === rowId)!.title;
      out.push(`<g data-chart="${rowId}" data-run="${esc(run.id)}">`);
      out.push(`<text x="${x0}" y="${y0 - 8}" font-size="13" font-weight="bold" fill="#1d2330">${esc(title)}</text>`);
      out.push(`<rect x="${x0}" y="${y0}" width="${PANEL_W}" height="${PANEL_H}" fill="#fcfcfd" stroke="#d0d5dd"/>`);
      const steps = run.curves.steps;
      const sLo = Math.min(...steps);
      const sHi = Math.max(...steps);
      const sx = (s: number) => x0 + (sHi === sLo ? PANEL_W / 2 : ((s - sLo) / (sHi - sLo)) * PANEL_W);
      const sy = (v: number) => y0 + PANEL_H - ((v - lo) / (hi - lo)) * PANEL_H;
      for (const t of ticks(lo, hi)) {
        out.push(
          `<line x1="${x0}" x2="${x0 + PANEL_W}" y1="${sy(t).toFixed(1)}" y2="${sy(t).toFixed(1)}" stroke="#eaecf0"/>`,
        );
        out.push(
          `<text x="${x0 - 6}" y="${(sy(t) + 4).toFixed(1)}" font-size="10" text-anchor="end" fill="#667085">${num(t)}</text>`,
        );
      }
      for (const t of ticks(sLo, sHi, 6).filter((t) => Number.isInteger(t))) {
        out.push(
          `<text x="${sx(t).toFixed(1)}" y="${y0 + PANEL_H + 14}" font-size="10" text-anchor="middle" fill="#667085">${t}</text>`,
        );
      }
      out.push(
        `<text x="${x0 + PANEL_W / 2}" y="${y0 + PANEL_H + 27}" font-size="10" text-anchor="middle" fill="#667085">step</text>`,
      );
      if (!chart) {
        out.push(
          `<text x="${x0 + PANEL_W / 2}" y="${y0 + PANEL_H / 2}" font-size="12" text-anchor="middle" fill="#98a2b3">not in this run</text>`,
        );
      } else {
        chart.keys.forEach((key, ki) => {
          const color = PALETTE[ki % PALETTE.length]!;
          const pts = steps
            .map((s, i) => [s, chart.values[ki]![i]] as const)
            .filter((p): p is readonly [number, number] => p[1] !== null);
          const points = pts.map(([s, v]) => `${sx(s).toFixed(1)},${sy(v).toFixed(1)}`).join(' ');
          out.push(
            `<polyline fill="none" stroke="${color}" stroke-width="1.6" points="${points}" data-key="${esc(key)}" data-steps="${pts.map((p) => p[0]).join(',')}" data-values="${pts.map((p) => p[1]).join(',')}"/>`,
          );
          if (pts.length === 1)
            out.push(
              `<circle cx="${sx(pts[0]![0]).toFixed(1)}" cy="${sy(pts[0]![1]).toFixed(1)}" r="2.5" fill="${color}"/>`,
            );
          const ly = y0 + 12 + ki * 15;
          out.push(
            `<line x1="${x0 + PANEL_W + 10}" x2="${x0 + PANEL_W + 26}" y1="${ly - 4}" y2="${ly - 4}" stroke="${color}" stroke-width="2"/>`,
          );
          out.push(`<text x="${x0 + PANEL_W + 30}" y="${ly}" font-size="10" fill="#1d2330">${esc(key)}</text>`);
        });
      }
      out.push('</g>');
    });
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}

/** Renders an SVG to PNG at its own size (resvg, with the system's fonts). */
export async function svgToPng(svg: string): Promise<Buffer> {
  const { Resvg } = await import('@resvg/resvg-js');
  const r = new Resvg(svg, {
    fitTo: { mode: 'original' },
    font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' },
  });
  return r.render().asPng();
}

/** `cogen plot`: writes the runs' curves to `out` (.svg or .png); returns the picture's size. */
export async function plotRuns(
  runsDir: string,
  ids: string[],
  out: string,
): Promise<{ width: number; height: number; format: 'svg' | 'png' }> {
  const ext = extname(out).toLowerCase();
  if (ext !== '.svg' && ext !== '.png') throw new UserError(`--out must end in .svg or .png, got "${out}"`);
  if (ids.length === 0 || ids.length > 2) throw new UserError('give one or two runs: --run <id> [--run <id2>]');
  const svg = plotSvg(loadPlotRuns(runsDir, ids));
  const [, w, h] = /width="(\d+)" height="(\d+)"/.exec(svg)!;
  if (ext === '.svg') writeFileSync(out, svg);
  else writeFileSync(out, await svgToPng(svg));
  return { width: Number(w), height: Number(h), format: ext === '.svg' ? 'svg' : 'png' };
}
