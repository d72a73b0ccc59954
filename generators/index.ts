// The generator registry (DESIGN.md, "Tasks" and "Skills"): the families, their skill taxonomy,
// and turning a draft into a validated Task through the sandbox.
import { createHash } from 'node:crypto';
import type { Rng } from '../core/rng.js';
import { TASK_TYPES, type Example, type Json, type Skill, type Task, type TaskDraft, type TaskType } from '../core/task.js';
import type { FailureReason, Sandbox } from '../sandbox/index.js';
import { runTwiceMetered } from '../sandbox/index.js';
import { budgetFor, sandboxBudget } from '../sandbox/index.js';
import { isConstantOutput } from '../core/rules.js';
import { canonicalHash } from './hash.js';
import type { Drawn, FamilyImpl } from './kit.js';
import type { Chooser } from './grammar/index.js';
import type { Family } from './types.js';
import { arith } from './families/arith.js';
import { logic } from './families/logic.js';
import { condFamily } from './families/cond.js';
import { str } from './families/string.js';
import { array } from './families/array.js';
import { sort } from './families/sort.js';
import { loop } from './families/loop.js';
import { recursion } from './families/recursion.js';
import { bits } from './families/bits.js';
import { record } from './families/record.js';
import { hof } from './families/hof.js';
import { numtheory } from './families/numtheory.js';

export { canonicalHash, canonicalForm, compactProgram, minify, tokenize } from './hash.js';
export { renderCompact, renderNatural } from './render.js';
export { mutate, applicableOps, MUTATION_OPS, type MutationOp } from './mutate.js';
export type { Family } from './types.js';
// The sampler's choice points, for a proposer that learns where the fixed weights choose.
export { FIXED_CHOOSER, type Chooser, type Production } from './grammar/index.js';
export { productionLabel, type Drawn } from './kit.js';

const REGISTRY: FamilyImpl[] = [arith, logic, condFamily, str, array, sort, loop, recursion, bits, record, hof, numtheory];

/** Every family, in registry order. */
export const families: Family[] = REGISTRY;

export function getFamily(id: string): Family {
  return getImpl(id);
}

function getImpl(id: string): FamilyImpl {
  const f = REGISTRY.find((x) => x.id === id);
  if (!f) throw new Error(`unknown task family '${id}'; known families: ${REGISTRY.map((x) => x.id).join(', ')}`);
  return f;
}

/**
 * A draft with the outputs the generator's reference interpreter computed and the program's AST
 * size. For tests and benchmarks; the sandbox stays the source of truth for tasks.
 */
export function drawReference(family: string, rng: Rng, level: number, type: TaskType, chooser?: Chooser): Drawn {
  return getImpl(family).draw(rng, level, type, chooser);
}

/** Every skill of every family. */
export function allSkills(): Skill[] {
  return REGISTRY.flatMap((f) => f.skills);
}

export interface Taxonomy {
  families: { id: string; name: string; description: string; levels: number; knobs: string[]; skills: string[] }[];
  skills: Skill[];
  /** Skills without prerequisites. */
  roots: string[];
}

export function taxonomy(): Taxonomy {
  const skills = allSkills();
  return {
    families: REGISTRY.map((f) => ({
      id: f.id,
      name: f.name,
      description: f.description,
      levels: f.levels,
      knobs: [...f.knobs],
      skills: f.skills.map((s) => s.id),
    })),
    skills: skills.map((s) => ({ ...s, requires: [...s.requires] })),
    roots: skills.filter((s) => s.requires.length === 0).map((s) => s.id),
  };
}

const pad = (s: string, n: number): string => (s.length >= n ? s : s + ' '.repeat(n - s.length));

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : pad(cell, widths[c]!))).join('  ').trimEnd()).join('\n');
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
    for (const s of t.skills) for (const r of s.requires) lines.push(`  ${dotId(s.id)} -> ${dotId(r)} [label="requires"];`);
    lines.push('}');
    return lines.join('\n');
  }
  if (format !== 'table') throw new Error(`formatTaxonomy: unknown format '${String(format)}'; use table, json or dot`);
  const out: string[] = [];
  out.push(`${t.families.length} families, ${t.skills.length} skills, ${t.roots.length} roots`, '');
  out.push(table([['FAMILY', 'LEVELS', 'SKILLS', 'NAME'], ...t.families.map((f) => [f.id, String(f.levels), String(f.skills.length), f.name])]));
  for (const f of t.families) {
    out.push('', `${f.id} — ${f.description}`);
    f.knobs.forEach((k, i) => out.push(`  level ${i}: ${k}`));
  }
  out.push('');
  out.push(table([['SKILL', 'LEVEL', 'REQUIRES', 'NAME'], ...t.skills.map((s) => [s.id, String(s.level), s.requires.join(',') || '-', s.name])]));
  return out.join('\n');
}

// ---------------------------------------------------------------------------------------------
// Validation: draft → Task
// ---------------------------------------------------------------------------------------------

/**
 * Why `materialise` refused a draft (a closed set):
 * - invalid: the draft is malformed (type, inputs, visibleCount, program text, non-JSON inputs)
 * - error: the program does not parse, defines no f, throws, or touches a forbidden global
 * - timeout: it ran past the CPU deadline
 * - limits: memory, stack or output-size limit
 * - nondeterministic: two runs in fresh contexts disagreed
 * - non-serialisable: a result is not JSON-like (undefined, NaN, Infinity, -0, functions, …)
 * - trivial: induction outputs are all equal, or induction inputs repeat
 * - duplicate: the same task (canonical hash + question) is already in `seen`
 * - sandbox: the executor failed (worker crashed, closed)
 */
export const REJECT_REASONS = [
  'invalid',
  'error',
  'timeout',
  'limits',
  'nondeterministic',
  'non-serialisable',
  'trivial',
  'duplicate',
  'sandbox',
] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

export type Materialised = { ok: true; task: Task } | { ok: false; reason: RejectReason; detail: string };

const SANDBOX_REASON: Record<FailureReason, RejectReason> = {
  syntax: 'error',
  'runtime-error': 'error',
  'no-function': 'error',
  forbidden: 'error',
  timeout: 'timeout',
  memory: 'limits',
  stack: 'limits',
  'output-too-large': 'limits',
  'non-serialisable': 'non-serialisable',
  nondeterministic: 'nondeterministic',
  trivial: 'trivial',
  'worker-crashed': 'sandbox',
  closed: 'sandbox',
} as Record<FailureReason, RejectReason>;

const MAX_PROGRAM_CHARS = 4000;

/** JSON-like with finite numbers and no -0. */
export function isJsonValue(x: unknown, depth = 0): x is Json {
  if (depth > 16) return false;
  if (x === null || typeof x === 'boolean' || typeof x === 'string') return true;
  if (typeof x === 'number') return Number.isFinite(x) && !Object.is(x, -0);
  if (Array.isArray(x)) return x.every((y) => isJsonValue(y, depth + 1));
  if (typeof x === 'object' && (Object.getPrototypeOf(x) === Object.prototype || Object.getPrototypeOf(x) === null)) {
    return Object.values(x as object).every((y) => isJsonValue(y, depth + 1));
  }
  return false;
}

function checkDraft(d: TaskDraft): string | null {
  if (!d || typeof d !== 'object') return 'draft is not an object';
  if (!TASK_TYPES.includes(d.type)) return `unknown task type '${String(d.type)}'`;
  if (typeof d.family !== 'string' || d.family.length === 0) return 'family is missing';
  if (!Number.isInteger(d.level) || d.level < 0) return `level ${String(d.level)} is not a non-negative integer`;
  if (!Array.isArray(d.skills) || !d.skills.every((s) => typeof s === 'string')) return 'skills must be a list of ids';
  if (typeof d.program !== 'string' || !/function\s+f\s*\(/.test(d.program)) return 'program must declare function f';
  if (d.program.length > MAX_PROGRAM_CHARS) return `program is longer than ${MAX_PROGRAM_CHARS} characters`;
  if (!Array.isArray(d.inputs) || !d.inputs.every((i) => Array.isArray(i))) return 'inputs must be a list of argument lists';
  if (!d.inputs.every((i) => isJsonValue(i))) return 'inputs must be JSON-like (finite numbers, no -0)';
  if (d.type !== 'induction') {
    if (d.inputs.length !== 1) return `${d.type} needs exactly one input, got ${d.inputs.length}`;
  } else {
    const v = d.visibleCount;
    if (d.inputs.length < 2) return 'induction needs at least two inputs';
    if (!Number.isInteger(v) || v! < 1 || v! >= d.inputs.length) return `visibleCount must be in 1..${d.inputs.length - 1}`;
    if (d.message !== undefined && typeof d.message !== 'string') return 'message must be text';
  }
  return null;
}

const sha = (s: string): string => createHash('sha256').update(s).digest('hex').slice(0, 16);

/** The question part of a task's identity (what is asked, not the reference answer). */
function question(type: TaskType, inputs: Json[][], outputs: Json[], visibleCount: number, message: string): string {
  if (type === 'deduction') return JSON.stringify(inputs[0]);
  if (type === 'abduction') return JSON.stringify(outputs[0]);
  return JSON.stringify([message, visibleCount, inputs, outputs]);
}

/** The task id: derived from the canonical hash, the type and the question. */
export function taskId(type: TaskType, hash: string, q: string): string {
  return sha(`${type}\u0000${hash}\u0000${q}`);
}

/**
 * Validates a draft in the sandbox and builds the Task: every input runs twice in fresh contexts
 * (limits, determinism), outputs must be JSON-like, induction must be non-trivial, and the task
 * must not be in `seen` (which is updated on success). Never throws for a bad draft.
 */
export async function materialise(sandbox: Sandbox, draft: TaskDraft, seen?: Set<string>): Promise<Materialised> {
  const bad = checkDraft(draft);
  if (bad) return { ok: false, reason: 'invalid', detail: bad };
  if (draft.type === 'induction') {
    const keys = new Set(draft.inputs.map((i) => JSON.stringify(i)));
    if (keys.size !== draft.inputs.length) return { ok: false, reason: 'trivial', detail: 'induction inputs repeat' };
  }
  let r;
  let cost: number | null;
  try {
    ({ result: r, cost } = await runTwiceMetered(sandbox, draft.program, draft.inputs));
  } catch (e) {
    return { ok: false, reason: 'sandbox', detail: (e as Error)?.message ?? String(e) };
  }
  if (!r.ok) return { ok: false, reason: SANDBOX_REASON[r.reason] ?? 'error', detail: `${r.reason}: ${r.detail}` };
  // The answers' budget: the reference's cost in steps, times the factor, within floor and cap. A
  // reference that would not fit its own budget ten times over is too costly to be a task.
  const settings = sandboxBudget(sandbox);
  const budget = cost === null ? undefined : budgetFor(cost, settings);
  if (cost !== null && cost * 10 > budget!) {
    return { ok: false, reason: 'timeout', detail: `the reference takes ${cost} steps; answers may take at most ${settings.cap} (the budget cap), which must be 10× the reference` };
  }
  const outputs = r.outputs;
  const i = outputs.findIndex((o) => !isJsonValue(o));
  if (i >= 0) return { ok: false, reason: 'non-serialisable', detail: `output ${i} is not JSON-like` };
  const message = draft.message ?? '';
  if (draft.type === 'induction') {
    if (isConstantOutput(outputs)) return { ok: false, reason: 'trivial', detail: 'the output is the same for every input' };
  }
  const hash = canonicalHash(draft.program);
  const visibleCount = draft.visibleCount ?? 0;
  const id = taskId(draft.type, hash, question(draft.type, draft.inputs, outputs, visibleCount, message));
  if (seen?.has(id)) return { ok: false, reason: 'duplicate', detail: `task ${id} was seen before` };
  seen?.add(id);
  const base = {
    id,
    family: draft.family,
    level: draft.level,
    skills: [...draft.skills],
    program: draft.program,
    hash,
    parent: draft.parent ?? null,
    proposer: draft.proposer ?? 'generator',
    ...(budget === undefined ? {} : { budget }),
  };
  let task: Task;
  if (draft.type === 'induction') {
    const pairs: Example[] = draft.inputs.map((input, k) => ({ input, output: outputs[k]! }));
    task = { ...base, type: 'induction', visible: pairs.slice(0, visibleCount), hidden: pairs.slice(visibleCount), message };
  } else {
    task = { ...base, type: draft.type, input: draft.inputs[0]!, output: outputs[0]! };
  }
  return { ok: true, task };
}

export interface GenerateOptions {
  family: string;
  level: number;
  type: TaskType;
  rng: Rng;
  seen?: Set<string>;
  /** Drafts to try before giving up (default 50). */
  attempts?: number;
}

/** Draws drafts until one materialises. Same rng state (and seen set) → same task. */
export async function generateTask(sandbox: Sandbox, opts: GenerateOptions): Promise<Task> {
  const fam = getFamily(opts.family);
  const attempts = opts.attempts ?? 50;
  const reasons = new Map<string, number>();
  let last = '';
  for (let i = 0; i < attempts; i++) {
    const draft = fam.generate(opts.rng, opts.level, opts.type);
    const m = await materialise(sandbox, draft, opts.seen);
    if (m.ok) return m.task;
    reasons.set(m.reason, (reasons.get(m.reason) ?? 0) + 1);
    last = `${m.reason}: ${m.detail}`;
  }
  const summary = [...reasons].map(([k, n]) => `${k} ×${n}`).join(', ');
  throw new Error(
    `generateTask: no ${opts.type} task for family '${opts.family}' at level ${opts.level} after ${attempts} drafts (${summary}; last ${last})`,
  );
}
