// The task browser (search, the table of tasks, one task's detail and lineage) and the LLM proposals table.
import { api, el, getJSON, pct, showError, state } from './shared.js';

// ---- the task browser
export function fillSelect(sel, label, values) {
  const cur = sel.value;
  sel.replaceChildren(
    el('option', { value: '', text: `any ${label}` }),
    ...values.map((v) => el('option', { value: String(v), text: String(v) })),
  );
  if (values.map(String).includes(cur)) sel.value = cur;
}
export async function search() {
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
export function drawProposals(p) {
  const proposals = document.getElementById('proposals');
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
