// The skill graph (Cytoscape.js), coloured by mastery at the step the slider picks, and its timeline.
/* global cytoscape */
import { STATE_COLOR, api, el, getJSON, pct, state } from './shared.js';

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

export async function loadSkills(atStep) {
  state.skillsRequested = atStep;
  const view = await getJSON(api(`skills${atStep === null ? '' : `?atStep=${atStep}`}`));
  if (state.skillsRequested !== atStep) return; // a later move of the slider wins
  drawSkills(view);
}
