// What the canonical hash decides, recorded so that two versions of it can be compared: the dedup
// decisions on 10,000 drafts before and after, with every difference listed
// (bench/results/hash.md).
//
//   npx tsx bench/hash-dedup.ts record OUT.json      10,000 reference drafts (round-robin over
//                                                     family × level × type, fixed seeds) and 600
//                                                     mutations, with what the hash module makes of them
//   npx tsx bench/hash-dedup.ts compare A.json B.json every difference between two records, as markdown
//
// Per draft it records the canonical hash, the earliest draft with the same hash (the hash's
// equivalence classes), whether the draft is a duplicate of an earlier one the way `materialise`
// decides it (the task id: type, hash and question), its compact rendering, and its minified text.
// Per mutation: the applicable operators and the mutated draft of each. Results: bench/results/hash.md.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRng } from '../core/rng.js';
import { CODE_TASK_TYPES, type Json, type Task, type TaskType } from '../core/task.js';
import {
  applicableOps,
  canonicalHash,
  compactProgram,
  drawReference,
  families,
  minify,
  mutate,
  taskId,
} from '../generators/index.js';

const DRAFTS = 10_000;
const MUTATED_TASKS = 600;

interface DraftRecord {
  cell: string;
  program: string;
  hash: string;
  /** Index of the earliest draft with the same canonical hash. */
  sameHashAs: number;
  /** Index of the earliest draft with the same task id, or -1 when this one is new. */
  duplicateOf: number;
  compact: string;
  minified: string;
}

interface MutationRecord {
  cell: string;
  program: string;
  ops: string[];
  mutated: Record<string, string>;
}

interface Recording {
  drafts: DraftRecord[];
  mutations: MutationRecord[];
}

const cells = families.flatMap((f) =>
  Array.from({ length: f.levels }, (_, level) => CODE_TASK_TYPES.map((type) => ({ family: f.id, level, type }))).flat(),
);

/** The question part of the task id, as `materialise` forms it. */
function question(type: TaskType, inputs: Json[][], outputs: Json[], visibleCount: number, message: string): string {
  if (type === 'deduction') return JSON.stringify(inputs[0]);
  if (type === 'abduction') return JSON.stringify(outputs[0]);
  return JSON.stringify([message, visibleCount, inputs, outputs]);
}

function recordDrafts(): DraftRecord[] {
  const rngs = cells.map((c) => createRng(`hash-dedup:${c.family}:${c.level}:${c.type}`));
  const firstByHash = new Map<string, number>();
  const firstById = new Map<string, number>();
  const out: DraftRecord[] = [];
  for (let i = 0; i < DRAFTS; i++) {
    const c = cells[i % cells.length]!;
    const { draft, outputs } = drawReference(c.family, rngs[i % cells.length]!, c.level, c.type);
    const hash = canonicalHash(draft.program);
    const id = taskId(
      c.type,
      hash,
      question(c.type, draft.inputs, outputs, draft.visibleCount ?? 0, draft.message ?? ''),
    );
    if (!firstByHash.has(hash)) firstByHash.set(hash, i);
    const duplicateOf = firstById.get(id) ?? -1;
    if (duplicateOf < 0) firstById.set(id, i);
    out.push({
      cell: `${c.family}:${c.level}:${c.type}`,
      program: draft.program,
      hash,
      sameHashAs: firstByHash.get(hash)!,
      duplicateOf,
      compact: compactProgram(draft.program),
      minified: minify(draft.program),
    });
  }
  return out;
}

function recordMutations(): MutationRecord[] {
  const out: MutationRecord[] = [];
  for (let i = 0; i < MUTATED_TASKS; i++) {
    const c = cells[i % cells.length]!;
    const { draft, outputs } = drawReference(c.family, createRng(`hash-dedup:mutate:${i}`), c.level, c.type);
    const base = {
      id: `t${i}`,
      family: c.family,
      level: c.level,
      skills: draft.skills,
      program: draft.program,
      hash: canonicalHash(draft.program),
      parent: null,
      proposer: 'generator',
    };
    const pairs = draft.inputs.map((input, k) => ({ input, output: outputs[k]! }));
    const task: Task =
      c.type === 'induction'
        ? {
            ...base,
            type: 'induction',
            visible: pairs.slice(0, draft.visibleCount),
            hidden: pairs.slice(draft.visibleCount),
            message: draft.message ?? '',
          }
        : { ...base, type: c.type, input: draft.inputs[0]!, output: outputs[0]! };
    const ops = applicableOps(task);
    const mutated = Object.fromEntries(
      ops.map((op) => [op, JSON.stringify(mutate(createRng(`hash-dedup:op:${i}`), task, op))]),
    );
    out.push({ cell: `${c.family}:${c.level}:${c.type}`, program: draft.program, ops, mutated });
  }
  return out;
}

const fence = (s: string): string => '`` ' + s.replace(/\n/g, '⏎') + ' ``';

function compare(a: Recording, b: Recording): string {
  const lines: string[] = [];
  const n = Math.min(a.drafts.length, b.drafts.length);
  const sameProgram = a.drafts.every((d, i) => d.program === b.drafts[i]?.program);
  lines.push(`drafts: ${n}, identical programs in both records: ${sameProgram ? 'yes' : 'NO'}`);
  const dups = (r: Recording): number => r.drafts.filter((d) => d.duplicateOf >= 0).length;
  lines.push(`duplicates (as materialise decides): ${dups(a)} before, ${dups(b)} after`);
  const fields = ['sameHashAs', 'duplicateOf', 'compact', 'minified'] as const;
  for (const field of fields) {
    const diff = a.drafts.flatMap((d, i) => (d[field] === b.drafts[i]![field] ? [] : [i]));
    lines.push('', `### ${field}: ${diff.length} difference${diff.length === 1 ? '' : 's'}`);
    for (const i of diff) {
      const d = a.drafts[i]!;
      lines.push(
        `- draft ${i} (${d.cell}) ${fence(d.program)}: ${fence(String(d[field]))} → ${fence(String(b.drafts[i]![field]))}`,
      );
    }
  }
  const hashesChanged = a.drafts.filter((d, i) => d.hash !== b.drafts[i]!.hash).length;
  lines.push('', `hash values changed: ${hashesChanged} of ${n}`);
  const mdiff: string[] = [];
  a.mutations.forEach((m, i) => {
    const o = b.mutations[i]!;
    if (m.ops.join() !== o.ops.join())
      mdiff.push(`- task ${i} (${m.cell}) ${fence(m.program)}: ops ${m.ops.join(',')} → ${o.ops.join(',')}`);
    for (const op of m.ops) {
      if (o.mutated[op] !== undefined && o.mutated[op] !== m.mutated[op]) {
        mdiff.push(`- task ${i} (${m.cell}) ${op}: ${fence(m.mutated[op]!)} → ${fence(o.mutated[op])}`);
      }
    }
  });
  lines.push(
    '',
    `### mutations: ${a.mutations.length} tasks, ${mdiff.length} difference${mdiff.length === 1 ? '' : 's'}`,
    ...mdiff,
  );
  return lines.join('\n');
}

const [mode, p1, p2] = process.argv.slice(2);
if (mode === 'record' && p1) {
  writeFileSync(p1, JSON.stringify({ drafts: recordDrafts(), mutations: recordMutations() } satisfies Recording));
} else if (mode === 'compare' && p1 && p2) {
  const read = (p: string): Recording => JSON.parse(readFileSync(p, 'utf8')) as Recording;
  console.log(compare(read(p1), read(p2)));
} else {
  console.error('usage: tsx bench/hash-dedup.ts record OUT.json | compare BEFORE.json AFTER.json');
  process.exit(2);
}
