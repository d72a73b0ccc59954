// The generator registry (docs/DESIGN.md, "Tasks" and "Skills and the skill graph"): the families
// (code families here, problem families in problems/), their skill taxonomy, and turning a draft
// into a validated Task through the sandbox.
import type { Rng } from '../core/rng.js';
import {
  CODE_TASK_TYPES,
  type AnyDraft,
  type Example,
  type Json,
  type ProblemDraft,
  type Skill,
  type Task,
  type TaskDraft,
  type TaskType,
} from '../core/task.js';
import type { FailureReason, Sandbox } from '../sandbox/index.js';
import { runTwiceMetered } from '../sandbox/index.js';
import { budgetFor, sandboxBudget } from '../sandbox/index.js';
import { isConstantOutput, MAX_ANSWER_CHARS } from '../core/rules.js';
import { canonicalHash } from './hash.js';
import { isJsonValue, taskId } from './identity.js';
import { MAX_PROGRAM_CHARS, type Drawn, type FamilyImpl } from './kit.js';
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
import { PROBLEM_FAMILIES } from './problems/index.js';
import type { ProblemFamily } from './problems/kit.js';
import { validateProblem } from './problems/validate.js';

export { canonicalHash, canonicalForm, compactProgram, minify, tokenize } from './hash.js';
export { parseCompact, renderCompact, renderNatural, solverSystemPrompt } from './render.js';
export { mutate, applicableOps, MUTATION_OPS, type MutationOp } from './mutate.js';
export type { Family } from './types.js';
export { isJsonValue, taskId } from './identity.js';
// The sampler's choice points, for a proposer that learns where the fixed weights choose.
export { FIXED_CHOOSER, type Chooser, type Production } from './grammar/index.js';
export { productionLabel, type Drawn } from './kit.js';

const REGISTRY: FamilyImpl[] = [
  arith,
  logic,
  condFamily,
  str,
  array,
  sort,
  loop,
  recursion,
  bits,
  record,
  hof,
  numtheory,
];

/** Every family, in registry order. */
export const families: Family[] = REGISTRY;

/** Every native problem family (generators/problems/), in registry order: they make 'problem' tasks. */
export const problemFamilies: readonly ProblemFamily[] = PROBLEM_FAMILIES;
export type { ProblemFamily, Domain } from './problems/kit.js';
export { DOMAINS } from './problems/kit.js';

/** A code family (deduction, abduction, induction); a problem family's id says which to use instead. */
export function getFamily(id: string): Family {
  return getImpl(id);
}

function getImpl(id: string): FamilyImpl {
  const f = REGISTRY.find((x) => x.id === id);
  if (f) return f;
  if (PROBLEM_FAMILIES.some((x) => x.id === id))
    throw new Error(`task family '${id}' is a problem family: it makes only 'problem' tasks`);
  throw new Error(`unknown task family '${id}'; known families: ${knownIds()}`);
}

const knownIds = (): string => [...REGISTRY, ...PROBLEM_FAMILIES].map((x) => x.id).join(', ');

export function getProblemFamily(id: string): ProblemFamily {
  const f = PROBLEM_FAMILIES.find((x) => x.id === id);
  if (f) return f;
  if (REGISTRY.some((x) => x.id === id))
    throw new Error(`task family '${id}' makes deduction, abduction and induction tasks, not problems`);
  throw new Error(`unknown task family '${id}'; known families: ${knownIds()}`);
}

/** What every family has, native or bridged: its id, levels, skills and the task types it makes. */
export interface FamilyInfo {
  id: string;
  name: string;
  /** Tabled levels (0 … levels-1). */
  levels: number;
  /** The last level it makes: null for no limit, levels − 1 for a finite ladder (docs/levels.md). */
  lastLevel: number | null;
  skills: Skill[];
  types: readonly TaskType[];
}

/** Any native family's id, levels, skills and task types. */
export function familyInfo(id: string): FamilyInfo {
  const p = PROBLEM_FAMILIES.find((x) => x.id === id);
  if (p)
    return { id: p.id, name: p.name, levels: p.levels, lastLevel: p.lastLevel, skills: p.skills, types: ['problem'] };
  const f = getImpl(id);
  return { id: f.id, name: f.name, levels: f.levels, lastLevel: f.lastLevel, skills: f.skills, types: CODE_TASK_TYPES };
}

/**
 * A draft with the outputs the generator's reference interpreter computed and the program's AST
 * size. For tests and benchmarks; the sandbox stays the source of truth for tasks.
 */
export function drawReference(family: string, rng: Rng, level: number, type: TaskType, chooser?: Chooser): Drawn {
  return getImpl(family).draw(rng, level, type, chooser);
}

/** Every skill of every family (code families, then problem families). */
export function allSkills(): Skill[] {
  return [...REGISTRY, ...PROBLEM_FAMILIES].flatMap((f) => f.skills);
}

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
      ...REGISTRY.map((f) => ({ ...taxonomyEntry(f), types: [...CODE_TASK_TYPES] })),
      ...PROBLEM_FAMILIES.map((f) => ({ ...taxonomyEntry(f), types: ['problem' as const], domain: f.domain })),
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
 * - unsound: a problem's verifier scores its witness below 1, a near-miss failure 1, or returns
 *   something other than a score in [0, 1]
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
  'unsound',
] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

/** A validated task with its reference's measured cost in interpreter steps (null where the sandbox does not count), or why not. */
export type Materialised =
  { ok: true; task: Task; cost: number | null } | { ok: false; reason: RejectReason; detail: string };

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

function checkDraft(d: TaskDraft): string | null {
  if (!d || typeof d !== 'object') return 'draft is not an object';
  if (!(CODE_TASK_TYPES as readonly string[]).includes(d.type)) return `unknown task type '${String(d.type)}'`;
  if (typeof d.family !== 'string' || d.family.length === 0) return 'family is missing';
  if (!Number.isInteger(d.level) || d.level < 0) return `level ${String(d.level)} is not a non-negative integer`;
  if (!Array.isArray(d.skills) || !d.skills.every((s) => typeof s === 'string')) return 'skills must be a list of ids';
  if (typeof d.program !== 'string' || !/function\s+f\s*\(/.test(d.program)) return 'program must declare function f';
  if (d.program.length > MAX_PROGRAM_CHARS) return `program is longer than ${MAX_PROGRAM_CHARS} characters`;
  if (!Array.isArray(d.inputs) || !d.inputs.every((i) => Array.isArray(i)))
    return 'inputs must be a list of argument lists';
  if (!d.inputs.every((i) => isJsonValue(i))) return 'inputs must be JSON-like (finite numbers, no -0)';
  if (d.type !== 'induction') {
    if (d.inputs.length !== 1) return `${d.type} needs exactly one input, got ${d.inputs.length}`;
  } else {
    const v = d.visibleCount;
    if (d.inputs.length < 2) return 'induction needs at least two inputs';
    if (!Number.isInteger(v) || v! < 1 || v! >= d.inputs.length)
      return `visibleCount must be in 1..${d.inputs.length - 1}`;
    if (d.message !== undefined && typeof d.message !== 'string') return 'message must be text';
  }
  return null;
}

/** The question part of a task's identity (what is asked, not the reference answer). */
function question(type: TaskType, inputs: Json[][], outputs: Json[], visibleCount: number, message: string): string {
  if (type === 'deduction') return JSON.stringify(inputs[0]);
  if (type === 'abduction') return JSON.stringify(outputs[0]);
  return JSON.stringify([message, visibleCount, inputs, outputs]);
}

/**
 * Validates a draft in the sandbox and builds the Task: every input runs twice in fresh contexts
 * (limits, determinism), outputs must be JSON-like, induction must be non-trivial, and the task
 * must not be in `seen` (which is updated on success). A problem draft goes to problems/validate.ts
 * (its verifier must score the witness 1 and every failure < 1). Never throws for a bad draft.
 */
export async function materialise(sandbox: Sandbox, draft: AnyDraft, seen?: Set<string>): Promise<Materialised> {
  if (draft && typeof draft === 'object' && draft.type === 'problem')
    return materialiseProblem(sandbox, draft as ProblemDraft, seen);
  return materialiseCode(sandbox, draft as TaskDraft, seen);
}

/** A problem draft through the sandbox (problems/validate.ts), its rejection in materialise's reasons. */
async function materialiseProblem(sandbox: Sandbox, draft: ProblemDraft, seen?: Set<string>): Promise<Materialised> {
  if (typeof draft.family !== 'string' || draft.family.length === 0)
    return { ok: false, reason: 'invalid', detail: 'family is missing' };
  if (!Number.isInteger(draft.level) || draft.level < 0)
    return { ok: false, reason: 'invalid', detail: `level ${String(draft.level)} is not a non-negative integer` };
  if (!Array.isArray(draft.skills) || !draft.skills.every((s) => typeof s === 'string'))
    return { ok: false, reason: 'invalid', detail: 'skills must be a list of ids' };
  const v = await validateProblem(sandbox, draft, seen);
  if (v.ok) return v;
  const r = v.rejection;
  if (r.reason === 'sandbox-failure')
    return { ok: false, reason: SANDBOX_REASON[r.failure as FailureReason] ?? 'error', detail: r.detail };
  return { ok: false, reason: r.reason, detail: r.detail };
}

async function materialiseCode(sandbox: Sandbox, draft: TaskDraft, seen?: Set<string>): Promise<Materialised> {
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
    return {
      ok: false,
      reason: 'timeout',
      detail: `the reference takes ${cost} steps; answers may take at most ${settings.cap} (the budget cap), which must be 10× the reference`,
    };
  }
  const outputs = r.outputs;
  const i = outputs.findIndex((o) => !isJsonValue(o));
  if (i >= 0) return { ok: false, reason: 'non-serialisable', detail: `output ${i} is not JSON-like` };
  const answer =
    draft.type === 'deduction'
      ? JSON.stringify(outputs[0])
      : draft.type === 'abduction'
        ? JSON.stringify(draft.inputs[0])
        : draft.program;
  if (answer.length > MAX_ANSWER_CHARS)
    return {
      ok: false,
      reason: 'limits',
      detail: `the reference answer has ${answer.length} characters; a served completion holds at most ${MAX_ANSWER_CHARS}`,
    };
  const message = draft.message ?? '';
  if (draft.type === 'induction') {
    if (isConstantOutput(outputs))
      return { ok: false, reason: 'trivial', detail: 'the output is the same for every input' };
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
    task = {
      ...base,
      type: 'induction',
      visible: pairs.slice(0, visibleCount),
      hidden: pairs.slice(visibleCount),
      message,
    };
  } else {
    task = { ...base, type: draft.type as 'deduction' | 'abduction', input: draft.inputs[0]!, output: outputs[0]! };
  }
  return { ok: true, task, cost };
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
  const draw: () => AnyDraft =
    opts.type === 'problem'
      ? (
          (p) => () =>
            p.generate(opts.rng, opts.level)
        )(getProblemFamily(opts.family))
      : (
          (f) => () =>
            f.generate(opts.rng, opts.level, opts.type)
        )(getFamily(opts.family));
  const attempts = opts.attempts ?? 50;
  const reasons = new Map<string, number>();
  let last = '';
  for (let i = 0; i < attempts; i++) {
    const draft = draw();
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
