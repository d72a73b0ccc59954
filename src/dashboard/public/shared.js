// What the dashboard's modules share: the run this page shows, the JSON API, the colours, the state
// kept on window.cogenDashboard (which the browser test reads back) and small DOM helpers.
export const root = document.getElementById('app');
export const runId = root.dataset.run;
export const api = (path) => new URL(`../api/run/${encodeURIComponent(runId)}/${path}`, location.href).toString();
export const getJSON = async (url) => {
  const r = await fetch(url, { cache: 'no-store' });
  if (!r.ok) throw new Error(`${r.status} ${(await r.json().catch(() => ({}))).error ?? r.statusText}`);
  return r.json();
};
export const STATE_COLOR = { mastered: '#7fc97f', forgotten: '#fdc086', never: '#e0e0e0' };
export const PALETTE = [
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

export const state = {
  summary: null,
  charts: {},
  cy: null,
  skillsAt: null,
  skillsRequested: null,
  heat: null,
  proposals: null,
  selectedTask: null,
  loaded: false,
};
window.cogenDashboard = state;

// ---- small DOM helpers (text always goes through textContent: nothing from the run is parsed as HTML)
export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children.flat())
    if (c !== null && c !== undefined) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}
export const svgEl = (tag, attrs = {}) => {
  const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
};
export const pct = (x) => (x === null || x === undefined ? '–' : `${(100 * x).toFixed(0)}%`);

export function showError(e) {
  document.getElementById('live').textContent = `error: ${e.message}`;
}
