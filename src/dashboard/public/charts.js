// The run's curves (uPlot, one chart per group of metrics) and the curriculum's heat map (SVG).
/* global uPlot */
import { PALETTE, el, state, svgEl } from './shared.js';

// ---- curves (uPlot)
export function drawCurves(c) {
  const box = document.getElementById('charts');
  for (const chart of c.charts) {
    const data = [c.steps, ...chart.values];
    const existing = state.charts[chart.id];
    if (
      existing &&
      existing.series.length - 1 === chart.keys.length &&
      chart.keys.every((k, i) => existing.series[i + 1].label === k)
    ) {
      existing.setData(data);
      continue;
    }
    existing?.destroy();
    let holder = box.querySelector(`[data-chart="${chart.id}"]`);
    if (!holder) {
      holder = el('div', { class: 'chart', 'data-chart': chart.id }, el('h3', { text: chart.title }));
      box.append(holder);
    }
    holder.querySelector('.uplot')?.remove();
    const u = new uPlot(
      {
        width: Math.max(300, (holder.clientWidth || 420) - 14),
        height: 200,
        // A flat series (KL of 0 throughout) gets a small range around its value, not uPlot's 0–100.
        scales: {
          x: { time: false },
          y: {
            range: (_u, min, max) =>
              min === max
                ? [min - (Math.abs(min) * 0.1 || 1), max + (Math.abs(max) * 0.1 || 1)]
                : uPlot.rangeNum(min, max, 0.1, true),
          },
        },
        axes: [{ label: 'step' }, { size: 56 }],
        legend: { live: true },
        series: [
          { label: 'step' },
          ...chart.keys.map((k, i) => ({
            label: k,
            stroke: PALETTE[i % PALETTE.length],
            width: 1.6,
            points: { size: 4 },
            spanGaps: true,
          })),
        ],
      },
      data,
      holder,
    );
    state.charts[chart.id] = u;
  }
  for (const id of Object.keys(state.charts)) {
    if (!c.charts.some((ch) => ch.id === id)) {
      state.charts[id].destroy();
      delete state.charts[id];
      box.querySelector(`[data-chart="${id}"]`)?.remove();
    }
  }
}

// ---- the curriculum's heat map (SVG)
export function drawHeat(h) {
  state.heat = h;
  const box = document.getElementById('heat');
  box.replaceChildren();
  if (h.arms.length === 0) {
    box.append(el('p', { class: 'note', text: 'No task has been scored yet.' }));
    return;
  }
  const labelW = 150;
  const cw = Math.max(6, Math.min(28, Math.floor(900 / h.steps.length)));
  const ch = 18;
  const w = labelW + cw * h.steps.length + 10;
  const hgt = ch * h.arms.length + 34;
  const max = Math.max(1, ...h.cells.flat());
  const svg = svgEl('svg', { width: w, height: hgt, role: 'img', 'aria-label': 'tasks served per step and arm' });
  h.arms.forEach((arm, a) => {
    const t = svgEl('text', { x: labelW - 6, y: a * ch + ch * 0.7, 'text-anchor': 'end' });
    t.textContent = arm;
    svg.append(t);
    h.steps.forEach((step, s) => {
      const n = h.cells[a][s];
      const r = svgEl('rect', {
        x: labelW + s * cw,
        y: a * ch,
        width: cw - 1,
        height: ch - 1,
        fill: n === 0 ? '#f2f4f7' : `rgba(56,108,176,${(0.15 + 0.85 * (n / max)).toFixed(3)})`,
        'data-arm': arm,
        'data-step': step,
        'data-n': n,
      });
      const title = svgEl('title');
      title.textContent = `step ${step} · ${arm}: ${n} task(s)`;
      r.append(title);
      svg.append(r);
    });
  });
  const every = Math.ceil(h.steps.length / 20);
  h.steps.forEach((step, s) => {
    if (s % every !== 0 && s !== h.steps.length - 1) return;
    const t = svgEl('text', { x: labelW + s * cw + cw / 2, y: h.arms.length * ch + 14, 'text-anchor': 'middle' });
    t.textContent = String(step);
    svg.append(t);
  });
  const xl = svgEl('text', { x: labelW, y: h.arms.length * ch + 30 });
  xl.textContent = 'step';
  svg.append(xl);
  box.append(svg);
}
