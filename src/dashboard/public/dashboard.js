// The cogen dashboard's page (plain browser JavaScript, no build step). It reads the run through the
// dashboard's read-only JSON API, draws the curves with uPlot and the skill graph with Cytoscape.js,
// and polls the run's summary to follow a live run. What it drew is kept on window.cogenDashboard
// (charts, cy, the step the skill graph shows), which the browser test reads back.
/* global uPlot, cytoscape */
(() => {
  'use strict';
  const root = document.getElementById('app');
  const runId = root.dataset.run;
  const api = (path) => new URL(`../api/run/${encodeURIComponent(runId)}/${path}`, location.href).toString();
  const getJSON = async (url) => {
    const r = await fetch(url, { cache: 'no-store' });
    if (!r.ok) throw new Error(`${r.status} ${(await r.json().catch(() => ({}))).error ?? r.statusText}`);
    return r.json();
  };
  const STATE_COLOR = { mastered: '#7fc97f', forgotten: '#fdc086', never: '#e0e0e0' };
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
  const POLL_MS = 1500;

  const state = {
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
  function el(tag, attrs = {}, ...children) {
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
  const svgEl = (tag, attrs = {}) => {
    const e = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    return e;
  };
  const pct = (x) => (x === null || x === undefined ? '–' : `${(100 * x).toFixed(0)}%`);

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

  // ---- curves (uPlot)
  function drawCurves(c) {
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
  function drawHeat(h) {
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

  // ---- the skill graph (Cytoscape.js), replayed by the step slider
  // Families side by side, levels bottom-up (level 0 at the bottom), a level's skills in a row.
  function layout(skillsList) {
    const families = [...new Set(skillsList.map((k) => k.family))].sort();
    const pos = {};
    const gap = 112;
    let x0 = 0;
    for (const f of families) {
      const ofFamily = skillsList.filter((k) => k.family === f);
      const levels = [...new Set(ofFamily.map((k) => k.level))].sort((a, b) => a - b);
      const rows = levels.map((lv) => ofFamily.filter((k) => k.level === lv).sort((a, b) => a.id.localeCompare(b.id)));
      const widest = Math.max(...rows.map((r) => r.length));
      rows.forEach((row, li) => {
        row.forEach((k, i) => {
          pos[k.id] = { x: x0 + ((widest - 1) * gap) / 2 + (i - (row.length - 1) / 2) * gap, y: -levels[li] * 80 };
        });
      });
      x0 += widest * gap + 70;
    }
    return pos;
  }

  function drawSkills(view) {
    const ids = view.skills.map((k) => k.id).join(',');
    if (!state.cy || state.cy.scratch('ids') !== ids) {
      state.cy?.destroy();
      const pos = layout(view.skills);
      const known = new Set(view.skills.map((k) => k.id));
      state.cy = cytoscape({
        container: document.getElementById('cy'),
        elements: [
          ...view.skills.map((k) => ({
            data: { id: k.id, label: `${k.name}\nL${k.level}`, state: k.state, family: k.family },
            position: pos[k.id],
          })),
          ...view.skills.flatMap((k) =>
            k.requires
              .filter((r) => known.has(r))
              .map((r) => ({ data: { id: `${k.id}->${r}`, source: k.id, target: r } })),
          ),
        ],
        layout: { name: 'preset', fit: true, padding: 24 },
        style: [
          {
            selector: 'node',
            style: {
              'background-color': (n) => STATE_COLOR[n.data('state')] ?? '#ffffff',
              label: 'data(label)',
              'text-wrap': 'wrap',
              'text-valign': 'center',
              'text-halign': 'center',
              'font-size': 10,
              shape: 'round-rectangle',
              width: 92,
              height: 34,
              'border-width': 1,
              'border-color': '#98a2b3',
            },
          },
          {
            selector: 'edge',
            style: {
              width: 1.2,
              'line-color': '#98a2b3',
              'target-arrow-color': '#98a2b3',
              'target-arrow-shape': 'triangle',
              'curve-style': 'bezier',
            },
          },
        ],
        userZoomingEnabled: true,
        wheelSensitivity: 0.3,
      });
      state.cy.scratch('ids', ids);
    }
    state.cy.batch(() => {
      for (const k of view.skills) state.cy.getElementById(k.id).data('state', k.state);
    });
    const at = view.atStep ?? view.lastStep;
    state.skillsAt = at;
    document.getElementById('step-label').textContent =
      `${at}${view.atStep === null ? ' (now)' : ''} · ${view.skills.filter((k) => k.state === 'mastered').length} of ${view.skills.length} mastered`;
    const list = document.getElementById('events');
    list.replaceChildren(
      ...(view.timeline.length === 0
        ? [el('li', { text: 'no skill learned or forgotten yet' })]
        : view.timeline.map((e) =>
            el('li', {
              class: e.step <= at ? 'past' : 'future',
              text: `step ${e.step}: ${e.event} ${e.skillId} (${pct(e.accuracy)})`,
            }),
          )),
    );
  }

  async function loadSkills(atStep) {
    state.skillsRequested = atStep;
    const view = await getJSON(api(`skills${atStep === null ? '' : `?atStep=${atStep}`}`));
    if (state.skillsRequested !== atStep) return; // a later move of the slider wins
    drawSkills(view);
  }
  slider.addEventListener('input', () => {
    const v = Number(slider.value);
    slider.dataset.follow = v === Number(slider.max) ? '1' : '0';
    loadSkills(v === Number(slider.max) ? null : v).catch(showError);
  });

  // ---- the task browser
  let searchTimer = null;
  function fillSelect(sel, label, values) {
    const cur = sel.value;
    sel.replaceChildren(
      el('option', { value: '', text: `any ${label}` }),
      ...values.map((v) => el('option', { value: String(v), text: String(v) })),
    );
    if (values.map(String).includes(cur)) sel.value = cur;
  }
  async function search() {
    const p = new URLSearchParams();
    for (const [k, id] of [
      ['q', 'task-q'],
      ['family', 'task-family'],
      ['level', 'task-level'],
      ['skill', 'task-skill'],
    ]) {
      const v = document.getElementById(id).value;
      if (v) p.set(k, v);
    }
    const res = await getJSON(api(`tasks?${p}`));
    document.getElementById('task-count').textContent =
      `${res.total} task(s)${res.total > res.tasks.length ? `, the newest ${res.tasks.length} shown` : ''}`;
    const rows = res.tasks.map((t) =>
      el(
        'tr',
        {
          class: `task-row${t.id === state.selectedTask ? ' selected' : ''}`,
          'data-task-id': t.id,
          onclick: () => openTask(t.id),
        },
        el('td', { text: t.id }),
        el('td', { text: t.step }),
        el('td', { text: `${t.family}/${t.level}/${t.type}` }),
        el('td', { text: t.skills.join(', ') }),
        el('td', { text: t.attempts ? pct(t.solved / t.attempts) : '–' }),
        el('td', { text: t.parentId ? 'derived' : t.proposer }),
      ),
    );
    document
      .getElementById('task-list')
      .replaceChildren(
        el(
          'table',
          {},
          el(
            'thead',
            {},
            el('tr', {}, ...['task', 'step', 'arm', 'skills', 'solved', 'origin'].map((h) => el('th', { text: h }))),
          ),
          el('tbody', {}, rows),
        ),
      );
  }
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    search().catch(showError);
  });
  form.addEventListener('input', () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => search().catch(showError), 250);
  });

  async function openTask(id) {
    state.selectedTask = id;
    for (const r of document.querySelectorAll('tr.task-row')) r.classList.toggle('selected', r.dataset.taskId === id);
    const t = await getJSON(api(`task/${encodeURIComponent(id)}`));
    const box = document.getElementById('task-detail');
    const lineage = t.lineage.length
      ? el(
          'ol',
          { class: 'lineage' },
          ...t.lineage.map((p) =>
            el(
              'li',
              {},
              `${p.op ?? 'derived'} from `,
              p.step === null
                ? el('code', { text: p.id })
                : el(
                    'a',
                    {
                      href: '#',
                      'data-task-link': p.id,
                      onclick: (e) => {
                        e.preventDefault();
                        openTask(p.id).catch(showError);
                      },
                    },
                    p.id,
                  ),
              p.step === null ? ' (not in this run)' : ` (step ${p.step}, ${p.family}/${p.level}/${p.type})`,
            ),
          ),
        )
      : el('p', { class: 'note', text: 'No parent: proposed fresh.' });
    const eps = t.episodes.length
      ? el(
          'table',
          { class: 'episodes' },
          el('thead', {}, el('tr', {}, ...['step', 'answer', 'reward', 'reason'].map((h) => el('th', { text: h })))),
          el(
            'tbody',
            {},
            ...t.episodes.map((e) =>
              el(
                'tr',
                {},
                el('td', { text: e.step }),
                el('td', {}, el('code', { text: e.answer })),
                el('td', {
                  class: e.reward >= 1 ? 'reward-1' : e.reward <= 0 ? 'reward-0' : '',
                  text: e.reward.toFixed(2),
                }),
                el('td', { text: e.reason ?? '' }),
              ),
            ),
          ),
        )
      : el('p', { class: 'note', text: 'No answers recorded for this task.' });
    box.replaceChildren(
      el('h3', { text: `Task ${t.id}` }),
      el('p', {
        class: 'note',
        text: `${t.family} · level ${t.level} · ${t.type} · skills ${t.skills.join(', ')} · first served at step ${t.step} · proposer ${t.proposer} · solved ${t.solved}/${t.attempts}`,
      }),
      el('h4', { text: 'Program' }),
      el('pre', { class: 'program', text: t.program }),
      el('h4', { text: 'Prompt' }),
      el('pre', { class: 'prompt', text: t.prompt }),
      el('h4', { text: 'Reference answer' }),
      el('pre', { class: 'reference', text: t.reference }),
      el('h4', { text: 'Lineage' }),
      lineage,
      el('h4', { text: `Answers (${t.episodes.length})` }),
      eps,
    );
  }

  // ---- LLM proposals
  function drawProposals(p) {
    proposals.hidden = p.byOutcome.length === 0;
    if (p.byOutcome.length === 0) return;
    document
      .getElementById('proposal-body')
      .replaceChildren(
        el(
          'div',
          { class: 'outcomes' },
          ...p.byOutcome.map((o) =>
            el('span', { 'data-outcome': o.outcome }, el('strong', { text: o.n }), ` ${o.outcome}`),
          ),
        ),
        el(
          'table',
          {},
          el(
            'thead',
            {},
            el(
              'tr',
              {},
              ...['step', 'arm', 'proposer', 'outcome', 'detail', 'task', 'learnability'].map((h) =>
                el('th', { text: h }),
              ),
            ),
          ),
          el(
            'tbody',
            {},
            ...p.recent.map((r) =>
              el(
                'tr',
                {},
                el('td', { text: r.step }),
                el('td', { text: `${r.family}/${r.level}/${r.type}` }),
                el('td', { text: r.proposer }),
                el('td', { text: r.outcome }),
                el('td', { text: r.detail ?? '' }),
                el('td', { text: r.taskId ?? '' }),
                el('td', { text: r.learnability === null ? '–' : r.learnability.toFixed(2) }),
              ),
            ),
          ),
        ),
      );
  }

  function showError(e) {
    document.getElementById('live').textContent = `error: ${e.message}`;
  }

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
})();
