// The cogen dashboard's page (plain browser JavaScript, native ES modules, no build step): this entry
// builds the page's frame, shows the run's summary and polls it to follow a live run. The curves and
// heat map are in charts.js, the skill graph in skills.js, the task browser in tasks.js.
import { drawCurves, drawHeat } from './charts.js';
import { STATE_COLOR, api, el, getJSON, root, runId, showError, state } from './shared.js';
import { loadSkills } from './skills.js';
import { drawProposals, fillSelect, search } from './tasks.js';

const POLL_MS = 1500;

// ---- the page's frame
const header = el(
  'header',
  {},
  el('h1', { text: `cogen · ${runId}` }),
  el('span', { class: 'facts', id: 'facts' }),
  el('select', { id: 'run-select', 'aria-label': 'run' }),
  el('span', { class: 'live', id: 'live' }),
);
const banner = el('div', { id: 'banner' });
const curves = el(
  'section',
  { id: 'curves' },
  el('h2', { text: 'Curves per step' }),
  el('div', { class: 'note', id: 'curves-note' }),
  el('div', { class: 'charts', id: 'charts' }),
);
const heat = el(
  'section',
  { id: 'heatmap' },
  el('h2', { text: 'Curriculum: tasks served per step (family / level / type)' }),
  el('div', { class: 'heat', id: 'heat' }),
);
const slider = el('input', {
  type: 'range',
  id: 'step-slider',
  min: '0',
  max: '0',
  value: '0',
  step: '1',
  'aria-label': 'step',
});
const skills = el(
  'section',
  { id: 'skills' },
  el('h2', { text: 'Skill graph' }),
  el('div', {
    class: 'note',
    text: 'The taxonomy DAG (an arrow points from a skill to what it requires), coloured by the run’s mastery at the chosen step.',
  }),
  el(
    'div',
    { class: 'slider' },
    el('label', { for: 'step-slider', text: 'step' }),
    slider,
    el('strong', { id: 'step-label', text: '' }),
  ),
  el(
    'div',
    { class: 'legend' },
    ...Object.entries(STATE_COLOR).map(([k, c]) => el('span', { style: `background:${c}`, text: k })),
  ),
  el(
    'div',
    { class: 'skills-wrap' },
    el('div', { id: 'cy' }),
    el('div', {}, el('h3', { text: 'Timeline' }), el('ol', { class: 'events', id: 'events' })),
  ),
);
const form = el(
  'form',
  { class: 'search', id: 'task-search' },
  el('input', { id: 'task-q', type: 'search', placeholder: 'id, skill or program text' }),
  el('select', { id: 'task-family', 'aria-label': 'family' }),
  el('select', { id: 'task-level', 'aria-label': 'level' }),
  el('select', { id: 'task-skill', 'aria-label': 'skill' }),
  el('button', { type: 'submit', text: 'Search' }),
  el('span', { class: 'note', id: 'task-count' }),
);
const tasks = el(
  'section',
  { id: 'tasks' },
  el('h2', { text: 'Tasks' }),
  form,
  el(
    'div',
    { class: 'tasks-wrap' },
    el('div', { class: 'task-list', id: 'task-list' }),
    el(
      'div',
      { id: 'task-detail' },
      el('p', { class: 'note', text: 'Pick a task to see its program, prompt, answers and lineage.' }),
    ),
  ),
);
const proposals = el(
  'section',
  { id: 'proposals', hidden: '' },
  el('h2', { text: 'LLM proposals' }),
  el('div', { id: 'proposal-body' }),
);
const main = el('main', {}, banner, curves, heat, skills, tasks, proposals);
root.append(header, main);

// ---- the run's summary, the banner for a run that is starting or empty
function showSummary(s) {
  document.getElementById('facts').textContent = [
    s.kind === 'served' ? 'served run' : 'autonomous run',
    s.preset ? `preset ${s.preset}` : null,
    s.status ?? 'no status yet',
    `step ${s.lastStep}`,
    `${s.tasks} tasks`,
  ]
    .filter(Boolean)
    .join(' · ');
  banner.replaceChildren();
  banner.className = '';
  if (s.phase !== 'ready') {
    banner.className = 'banner';
    banner.dataset.phase = s.phase;
    if (s.phase === 'starting') {
      banner.append(
        el('h2', { text: `Run ${s.id} is starting` }),
        el('p', { text: 'No step has been committed yet. This page follows the run and fills in as steps arrive.' }),
      );
    } else {
      banner.append(
        el('h2', { text: `Run ${s.id} has no steps` }),
        el('p', {
          text: `The run is ${s.status ?? 'stopped'} and committed no step: there are no curves, tasks or skills to show.`,
        }),
      );
    }
  }
  for (const sec of [curves, heat, skills, tasks]) sec.hidden = s.phase !== 'ready';
  document.getElementById('curves-note').textContent =
    s.kind === 'served'
      ? 'A served run: the trainer owns the model, so there are no solver internals (entropy, KL, learning rate) here.'
      : '';
}

slider.addEventListener('input', () => {
  const v = Number(slider.value);
  slider.dataset.follow = v === Number(slider.max) ? '1' : '0';
  loadSkills(v === Number(slider.max) ? null : v).catch(showError);
});

let searchTimer = null;
form.addEventListener('submit', (e) => {
  e.preventDefault();
  search().catch(showError);
});
form.addEventListener('input', () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => search().catch(showError), 250);
});

// ---- loading, and following a live run
async function loadAll(s) {
  const [c, h, p] = await Promise.all([getJSON(api('curves')), getJSON(api('heat')), getJSON(api('proposals'))]);
  drawCurves(c);
  drawHeat(h);
  drawProposals(p);
  const follow = slider.dataset.follow !== '0';
  slider.max = String(s.lastStep);
  if (follow) slider.value = String(s.lastStep);
  await loadSkills(follow ? null : Number(slider.value));
  const fams = [...new Set(h.arms.map((a) => a.split('/')[0]))].sort();
  const levels = [...new Set(h.arms.map((a) => Number(a.split('/')[1])))].sort((a, b) => a - b);
  fillSelect(document.getElementById('task-family'), 'family', fams.length ? fams : s.families);
  fillSelect(document.getElementById('task-level'), 'level', levels);
  const skillIds = state.cy
    ? state.cy
        .nodes()
        .map((n) => n.id())
        .sort()
    : [];
  fillSelect(document.getElementById('task-skill'), 'skill', skillIds);
  await search();
}

async function runsMenu() {
  const runs = await getJSON(new URL('../api/runs', location.href).toString());
  const sel = document.getElementById('run-select');
  sel.replaceChildren(
    ...runs.map((r) =>
      el('option', { value: r.id, text: `${r.id} (${r.kind}, ${r.status ?? 'starting'}, step ${r.lastStep})` }),
    ),
  );
  sel.value = runId;
  sel.onchange = () => {
    location.href = new URL(`../run/${encodeURIComponent(sel.value)}`, location.href).toString();
  };
}

let lastKey = null;
async function poll() {
  try {
    const s = await getJSON(api('summary'));
    state.summary = s;
    showSummary(s);
    const key = `${s.phase}|${s.steps}|${s.lastStep}|${s.tasks}|${s.status}`;
    if (key !== lastKey) {
      lastKey = key;
      if (s.phase === 'ready') await loadAll(s);
      runsMenu().catch(() => {});
    }
    state.loaded = true;
    document.getElementById('live').textContent =
      s.status === 'running'
        ? `live · updated ${new Date().toLocaleTimeString()}`
        : `updated ${new Date().toLocaleTimeString()}`;
  } catch (e) {
    showError(e);
  }
  setTimeout(poll, POLL_MS);
}
poll();
