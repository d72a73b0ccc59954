// The skill taxonomy of every native family (`cogen skills --taxonomy`): each family's levels, knobs
// and growth above its tabled levels (docs/levels.md), and the skills with their prerequisites, as
// data or as text (table, JSON, Graphviz dot).
import { CODE_TASK_TYPES, type Skill, type TaskType } from '../core/task.js';
import type { ProblemFamily } from './problems/kit.js';
import { allSkills, families, problemFamilies } from './registry.js';
import type { Family } from './types.js';

/** One family in the taxonomy: its tabled levels' knobs and, for a native family, how they grow above (docs/levels.md). */
export interface TaxonomyFamily {
  id: string;
  name: string;
  description: string;
  levels: number;
  knobs: string[];
  /** The rule of each knob that grows above the tabled levels (empty: a finite ladder). */
  growth: string[];
  /** The last level it makes (null: no limit). */
  lastLevel: number | null;
  /** A rule that grows difficulty slower than tenfold by level 30: the factor it promises and why. */
  slower?: { ratio: number; why: string };
  /** Why the ladder ends where it does, for a family that has no levels above its table. */
  finite?: string;
  skills: string[];
  types: TaskType[];
  domain?: string;
}

export interface Taxonomy {
  families: TaxonomyFamily[];
  skills: Skill[];
  /** Skills without prerequisites. */
  roots: string[];
}

const taxonomyEntry = (f: Family | ProblemFamily) => ({
  id: f.id,
  name: f.name,
  description: f.description,
  levels: f.levels,
  knobs: [...f.knobs],
  growth: [...f.growth],
  lastLevel: f.lastLevel,
  ...('slower' in f && f.slower ? { slower: { ...f.slower } } : {}),
  skills: f.skills.map((s) => s.id),
});

export function taxonomy(): Taxonomy {
  const skills = allSkills();
  return {
    families: [
      ...families.map((f) => ({ ...taxonomyEntry(f), types: [...CODE_TASK_TYPES] })),
      ...problemFamilies.map((f) => ({ ...taxonomyEntry(f), types: ['problem' as const], domain: f.domain })),
    ],
    skills: skills.map((s) => ({ ...s, requires: [...s.requires] })),
    roots: skills.filter((s) => s.requires.length === 0).map((s) => s.id),
  };
}

const pad = (s: string, n: number): string => (s.length >= n ? s : s + ' '.repeat(n - s.length));

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows
    .map((r) =>
      r
        .map((cell, c) => (c === r.length - 1 ? cell : pad(cell, widths[c]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

const dotId = (s: string): string => JSON.stringify(s);

/** The taxonomy as a text table, JSON, or a Graphviz digraph (edges: skill -> prerequisite). */
export function formatTaxonomy(format: 'table' | 'json' | 'dot'): string {
  const t = taxonomy();
  if (format === 'json') return JSON.stringify(t, null, 2);
  if (format === 'dot') {
    const lines = ['digraph skills {', '  rankdir=BT;', '  node [shape=box, fontsize=10];'];
    for (const f of t.families) {
      lines.push(`  subgraph ${dotId('cluster_' + f.id)} {`, `    label=${dotId(f.name)};`);
      for (const s of t.skills.filter((x) => x.family === f.id)) {
        lines.push(`    ${dotId(s.id)} [label=${dotId(`${s.name}\n(${s.id}, L${s.level})`)}];`);
      }
      lines.push('  }');
    }
    for (const s of t.skills)
      for (const r of s.requires) lines.push(`  ${dotId(s.id)} -> ${dotId(r)} [label="requires"];`);
    lines.push('}');
    return lines.join('\n');
  }
  if (format !== 'table') throw new Error(`formatTaxonomy: unknown format '${String(format)}'; use table, json or dot`);
  const out: string[] = [];
  out.push(`${t.families.length} families, ${t.skills.length} skills, ${t.roots.length} roots`, '');
  out.push(
    table([
      ['FAMILY', 'LEVELS', 'SKILLS', 'TYPES', 'NAME'],
      ...t.families.map((f) => [
        f.id,
        levelRange(f),
        String(f.skills.length),
        f.domain ? `problem (${f.domain})` : 'code',
        f.name,
      ]),
    ]),
  );
  for (const f of t.families) {
    out.push('', `${f.id} — ${f.description}`);
    f.knobs.forEach((k, i) => out.push(`  level ${i}: ${k}`));
    out.push(...growthLines(f));
  }
  out.push('');
  out.push(
    table([
      ['SKILL', 'LEVEL', 'REQUIRES', 'NAME'],
      ...t.skills.map((s) => [s.id, String(s.level), s.requires.join(',') || '-', s.name]),
    ]),
  );
  return out.join('\n');
}

/** The levels a family makes: `0-∞`, `0-514`, or a finite ladder's `0-3`. */
export const levelRange = (f: Pick<TaxonomyFamily, 'levels' | 'lastLevel' | 'growth'>): string =>
  f.growth.length === 0 ? `0-${f.levels - 1}` : f.lastLevel === null ? '0-∞' : `0-${f.lastLevel}`;

/** The taxonomy's lines after a family's tabled levels: how it grows above them, or why it does not. */
export function growthLines(f: TaxonomyFamily): string[] {
  if (f.growth.length === 0) return f.finite ? [`  no levels above ${f.levels - 1}: ${f.finite}`] : [];
  const out = [`  above level ${f.levels - 1}: ${f.growth.join('; ')}`];
  if (f.lastLevel !== null) out.push(`  last level ${f.lastLevel}: above it a knob passes its limit (above)`);
  if (f.slower)
    out.push(`  grows slower than tenfold by level 30 (at least ${f.slower.ratio}× level 4): ${f.slower.why}`);
  return out;
}
