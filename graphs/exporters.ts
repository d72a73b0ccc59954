// The skill graph written for other tools: Graphviz DOT and GraphML (Gephi, yEd, Neo4j's
// apoc.import.graphml) draw the REQUIRES graph coloured by a run's state; the Cypher script of MERGE
// statements recreates the whole graph in any Neo4j. `cogen skills --format` renders through them.
import type { Skill } from '../core/task.js';
import { schemaStatements } from './schema.js';
import type { GraphSnapshot, GraphTask } from './types.js';
import { pct } from '../core/stats.js';

export type SkillState = 'mastered' | 'forgotten' | 'never';

const STATE_COLOR: Record<SkillState, string> = { mastered: '#7fc97f', forgotten: '#fdc086', never: '#e0e0e0' };

const dotId = (s: string) => JSON.stringify(s);

/** Graphviz DOT of the skill graph (REQUIRES edges point from a skill to its prerequisite). */
export function toDot(
  skills: Skill[],
  opts: { title?: string; state?: Map<string, SkillState>; frontier?: Set<string>; tasks?: GraphTask[] } = {},
): string {
  const out = [
    `digraph ${dotId(opts.title ?? 'skills')} {`,
    '  rankdir=BT;',
    '  node [shape=box, style="rounded,filled", fontname="Helvetica"];',
  ];
  const families = new Map<string, Skill[]>();
  for (const k of skills) (families.get(k.family) ?? families.set(k.family, []).get(k.family)!).push(k);
  let i = 0;
  for (const [family, ks] of families) {
    out.push(`  subgraph ${dotId(`cluster_${i++}`)} {`, `    label=${dotId(family || '(undeclared)')};`);
    for (const k of ks) {
      const st = opts.state?.get(k.id);
      const attrs = [`label=${dotId(`${k.name}\\nL${k.level}${st ? ` · ${st}` : ''}`)}`];
      attrs.push(`fillcolor=${dotId(st ? STATE_COLOR[st] : '#ffffff')}`);
      if (opts.frontier?.has(k.id)) attrs.push('penwidth=3', 'color="#386cb0"');
      out.push(`    ${dotId(k.id)} [${attrs.join(', ')}];`);
    }
    out.push('  }');
  }
  for (const k of skills) for (const r of k.requires) out.push(`  ${dotId(k.id)} -> ${dotId(r)};`);
  for (const t of opts.tasks ?? []) {
    out.push(
      `  ${dotId(`task:${t.id}`)} [shape=note, style=filled, fillcolor="#ffffcc", label=${dotId(
        `${t.type} L${t.level}${t.solveRate === null ? '' : ` · ${pct(t.solveRate)}`}`,
      )}];`,
    );
    for (const s of t.skills) out.push(`  ${dotId(`task:${t.id}`)} -> ${dotId(s)} [style=dashed, label="EXERCISES"];`);
  }
  out.push('}');
  return out.join('\n') + '\n';
}

const xml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');

/** GraphML of the skill graph (Gephi, yEd, Neo4j's apoc.import.graphml read it). */
export function toGraphML(
  skills: Skill[],
  opts: { state?: Map<string, SkillState>; tasks?: GraphTask[] } = {},
): string {
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">',
    '  <key id="labels" for="node" attr.name="labels" attr.type="string"/>',
    '  <key id="name" for="node" attr.name="name" attr.type="string"/>',
    '  <key id="family" for="node" attr.name="family" attr.type="string"/>',
    '  <key id="level" for="node" attr.name="level" attr.type="int"/>',
    '  <key id="description" for="node" attr.name="description" attr.type="string"/>',
    '  <key id="state" for="node" attr.name="state" attr.type="string"/>',
    '  <key id="type" for="node" attr.name="type" attr.type="string"/>',
    '  <key id="solveRate" for="node" attr.name="solveRate" attr.type="double"/>',
    '  <key id="label" for="edge" attr.name="label" attr.type="string"/>',
    '  <graph id="skills" edgedefault="directed">',
  ];
  const data = (k: string, v: string | number) => `<data key="${k}">${xml(String(v))}</data>`;
  for (const k of skills) {
    const st = opts.state?.get(k.id);
    out.push(
      `    <node id="${xml(`skill:${k.id}`)}">${data('labels', ':Skill')}${data('name', k.name)}${data('family', k.family)}${data(
        'level',
        k.level,
      )}${data('description', k.description)}${st ? data('state', st) : ''}</node>`,
    );
  }
  for (const t of opts.tasks ?? []) {
    out.push(
      `    <node id="${xml(`task:${t.id}`)}">${data('labels', ':Task')}${data('type', t.type)}${data('family', t.family)}${data(
        'level',
        t.level,
      )}${t.solveRate === null ? '' : data('solveRate', t.solveRate)}</node>`,
    );
  }
  let e = 0;
  for (const k of skills) {
    for (const r of k.requires) {
      out.push(
        `    <edge id="e${e++}" source="${xml(`skill:${k.id}`)}" target="${xml(`skill:${r}`)}">${data('label', 'REQUIRES')}</edge>`,
      );
    }
  }
  for (const t of opts.tasks ?? []) {
    for (const s of t.skills) {
      out.push(
        `    <edge id="e${e++}" source="${xml(`task:${t.id}`)}" target="${xml(`skill:${s}`)}">${data('label', 'EXERCISES')}</edge>`,
      );
    }
  }
  out.push('  </graph>', '</graphml>');
  return out.join('\n') + '\n';
}

// Cypher literals: JSON string escapes are valid Cypher string escapes.
const cStr = (s: string) => JSON.stringify(s);
const cInt = (n: number) => String(Math.trunc(n));
const cFloat = (n: number) => (Number.isInteger(n) ? `${n}.0` : String(n));
type Lit = string | null;
const props = (entries: Record<string, Lit>): string => {
  const kept = Object.entries(entries).filter(([, v]) => v !== null);
  return `{${kept.map(([k, v]) => `${k}: ${v}`).join(', ')}}`;
};
const opt = <T>(v: T | null, f: (x: T) => string): Lit => (v === null ? null : f(v));

/**
 * A Cypher script (one statement per line) that recreates the snapshot's graph in an empty (or the
 * same) Neo4j database: the schema, then MERGE for every node and relationship. Idempotent.
 */
export function toCypher(s: GraphSnapshot): string {
  const out: string[] = ['// cogen skill graph export: run with cypher-shell -f, or statement by statement'];
  for (const st of schemaStatements()) out.push(`${st.replace(/\s+/g, ' ')};`);
  for (const k of s.skills) {
    const p = props({
      family: opt(k.family, cStr),
      name: opt(k.name, cStr),
      description: opt(k.description, cStr),
      level: opt(k.level, cInt),
    });
    out.push(`MERGE (n:Skill {id: ${cStr(k.id)}}) SET n += ${p};`);
  }
  for (const r of s.runs) {
    const p = props({
      preset: opt(r.preset, cStr),
      config: opt(r.config, cStr),
      startedAt: opt(r.startedAt, cStr),
      endedAt: opt(r.endedAt, cStr),
      status: opt(r.status, cStr),
    });
    out.push(`MERGE (n:Run {id: ${cStr(r.id)}}) SET n += ${p};`);
  }
  for (const t of s.tasks) {
    const p = props({
      type: opt(t.type, cStr),
      family: opt(t.family, cStr),
      level: opt(t.level, cInt),
      program: opt(t.program, cStr),
      hash: opt(t.hash, cStr),
      prompt: opt(t.prompt, cStr),
      solveRate: opt(t.solveRate, cFloat),
    });
    out.push(`MERGE (n:Task {id: ${cStr(t.id)}}) SET n += ${p};`);
  }
  for (const c of s.checkpoints) {
    const p = props({ runId: cStr(c.runId), step: opt(c.step, cInt), path: opt(c.path, cStr) });
    out.push(`MERGE (n:Checkpoint {id: ${cStr(c.id)}}) SET n += ${p};`);
  }
  const rel = (aLabel: string, a: string, bLabel: string, b: string, pattern: string, set = '') =>
    out.push(`MATCH (a:${aLabel} {id: ${cStr(a)}}), (b:${bLabel} {id: ${cStr(b)}}) MERGE (a)-${pattern}->(b)${set};`);
  for (const r of s.requires) rel('Skill', r.skillId, 'Skill', r.requiresId, '[:REQUIRES]');
  for (const e of s.exercises) rel('Task', e.taskId, 'Skill', e.skillId, '[:EXERCISES]');
  for (const d of s.derivedFrom)
    rel('Task', d.taskId, 'Task', d.parentId, '[d:DERIVED_FROM]', d.op === null ? '' : ` SET d.op = ${cStr(d.op)}`);
  for (const p of s.proposed) rel('Run', p.runId, 'Task', p.taskId, `[:PROPOSED {step: ${cInt(p.step)}}]`);
  for (const m of s.mastered) {
    const p = props({
      sinceAt: cStr(m.sinceAt),
      untilStep: opt(m.untilStep, cInt),
      untilAt: opt(m.untilAt, cStr),
      accuracy: cFloat(m.accuracy),
      baseline: opt(m.baseline ?? null, cFloat),
      untilBaseline: opt(m.untilBaseline ?? null, cFloat),
      untilAccuracy: opt(m.untilAccuracy ?? null, cFloat),
    });
    rel('Run', m.runId, 'Skill', m.skillId, `[m:MASTERED {sinceStep: ${cInt(m.sinceStep)}}]`, ` SET m += ${p}`);
  }
  for (const v of s.saved) rel('Run', v.runId, 'Checkpoint', v.checkpointId, '[:SAVED]');
  return out.join('\n') + '\n';
}

/** Splits a script from toCypher into statements (no trailing `;`), skipping comments. */
export function cypherStatements(script: string): string[] {
  return script
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length > 0 && !l.startsWith('//'))
    .map((l) => l.replace(/;$/, ''));
}
