// Directed mutation and crossover: a child one step harder or easier than its parent along the
// family's own growth knobs (one node more or fewer, a larger or smaller constant, inputs further
// from or nearer to zero), or the crossover of two tasks of one family. The frontier proposer
// (curricula/evolve.ts) chooses the operator from the parent's solve rate; here each operator
// only rewrites the program text and inputs, through acorn's syntax tree so that an edit never
// splits a token. The child is labelled by its own program (label.ts): its level and skills are
// never copied from the parent. A draft must still pass `materialise` like any other.
import { parse, type Node } from 'acorn';
import type { Rng } from '../core/rng.js';
import { argumentLists, type CodeTask, type Input, type Json, type Parent, type TaskDraft } from '../core/task.js';
import { labelProgram } from './label.js';

export const DIRECTIONS = ['harder', 'easier'] as const;
export type Direction = (typeof DIRECTIONS)[number];

/** Each direction's operators: the growth knobs, read one way or the other. */
export const DIRECTED_OPS = {
  harder: ['grow-node', 'raise-constant', 'widen-inputs'],
  easier: ['prune-node', 'lower-constant', 'narrow-inputs'],
} as const satisfies Record<Direction, readonly string[]>;
export type DirectedOp = (typeof DIRECTED_OPS)[Direction][number];
/** The direction of a directed operator; undefined for crossover or any other name. */
export const directionOf = (op: string): Direction | undefined =>
  DIRECTIONS.find((d) => (DIRECTED_OPS[d] as readonly string[]).includes(op));
export const CROSSOVER = 'crossover';
/** Every operator of the frontier proposer, as a child's `parent.op` records it. */
export type FrontierOp = DirectedOp | typeof CROSSOVER;
export const FRONTIER_OPS: readonly FrontierOp[] = [...DIRECTED_OPS.harder, ...DIRECTED_OPS.easier, CROSSOVER];
/** The proposer name a frontier child records. */
export const FRONTIER_PROPOSER = 'frontier';

type Kind = 'number' | 'boolean' | 'other';
type N = Node & Record<string, unknown>;

/** The parts of a program the operators read: f's parameters, the expressions it returns or defines, and their kinds. */
interface Shape {
  params: string[];
  /** Every expression node under a return or a const's initialiser, outermost first. */
  nodes: N[];
  kinds: Map<N, Kind>;
}

const COMPARISONS = new Set(['<', '<=', '>', '>=', '===', '!==', '==', '!=']);
const NUMERIC = new Set(['+', '-', '*', '%', '/', '&', '|', '^', '<<', '>>']);

function kindOfValue(x: Json | undefined): Kind {
  return typeof x === 'number' ? 'number' : typeof x === 'boolean' ? 'boolean' : 'other';
}

/** The program's shape, or null when acorn cannot read it or it is not `function f(...) { … }`. */
function shapeOf(program: string, input: Input | undefined): Shape | null {
  let ast: N;
  try {
    ast = parse(program, { ecmaVersion: 'latest' }) as unknown as N;
  } catch {
    return null;
  }
  const fn = (ast.body as N[])[0];
  if (!fn || fn.type !== 'FunctionDeclaration' || (fn.id as N | null)?.name !== 'f') return null;
  const params = (fn.params as N[]).map((p) => (p.type === 'Identifier' ? (p.name as string) : ''));
  const names = new Map<string, Kind>(params.map((name, i) => [name, kindOfValue(input?.[i])]));
  const nodes: N[] = [];
  const kinds = new Map<N, Kind>();
  const visit = (n: N): Kind => {
    nodes.push(n);
    const k = kindOf(n, visit, names);
    kinds.set(n, k);
    return k;
  };
  for (const stmt of (fn.body as N).body as N[]) {
    if (stmt.type === 'ReturnStatement' && stmt.argument) visit(stmt.argument as N);
    if (stmt.type === 'VariableDeclaration')
      for (const d of stmt.declarations as N[]) {
        if (!d.init || (d.id as N).type !== 'Identifier') continue;
        names.set((d.id as N).name as string, visit(d.init as N));
      }
  }
  return { params, nodes, kinds };
}

/** A node's kind, visiting the children the operators may edit (a callee or a property name is not one). */
function kindOf(n: N, visit: (c: N) => Kind, names: Map<string, Kind>): Kind {
  switch (n.type) {
    case 'Literal':
      return kindOfValue(n.value as Json);
    case 'Identifier':
      return names.get(n.name as string) ?? 'other';
    case 'BinaryExpression': {
      const l = visit(n.left as N);
      visit(n.right as N);
      const op = n.operator as string;
      return COMPARISONS.has(op) ? 'boolean' : NUMERIC.has(op) && l === 'number' ? 'number' : 'other';
    }
    case 'LogicalExpression': {
      const l = visit(n.left as N);
      return visit(n.right as N) === l ? l : 'other';
    }
    case 'UnaryExpression': {
      const k = visit(n.argument as N);
      return n.operator === '!' ? 'boolean' : n.operator === '-' && k === 'number' ? 'number' : 'other';
    }
    case 'ConditionalExpression': {
      visit(n.test as N);
      const a = visit(n.consequent as N);
      return visit(n.alternate as N) === a ? a : 'other';
    }
    case 'CallExpression': {
      for (const a of n.arguments as N[]) visit(a);
      const callee = n.callee as N;
      return callee.type === 'MemberExpression' && (callee.object as N).name === 'Math' ? 'number' : 'other';
    }
    case 'ParenthesizedExpression':
      return visit(n.expression as N);
    default:
      return 'other';
  }
}

const isLeaf = (n: N): boolean => n.type === 'Identifier' || (n.type === 'Literal' && typeof n.value === 'number');
const intLiteral = (n: N): boolean => n.type === 'Literal' && Number.isInteger(n.value) && (n.value as number) >= 0;
const splice = (src: string, n: N, text: string): string => src.slice(0, n.start) + text + src.slice(n.end);

/**
 * The operands that may stand in a node's place, one node fewer: those of the node's own kind whose
 * sibling operands are leaves (so that pruning drops one operator, not a subtree).
 */
function prunable(n: N, kinds: Map<N, Kind>): N[] {
  const k = kinds.get(n);
  if (k === 'other') return [];
  // A literal never stays alone: the child would not read its input.
  const keepOne = (ops: N[]): N[] =>
    ops.filter((c, i) => c.type !== 'Literal' && kinds.get(c) === k && ops.every((o, j) => j === i || isLeaf(o)));
  if (n.type === 'LogicalExpression') return keepOne([n.left as N, n.right as N]);
  if (n.type === 'BinaryExpression' && !COMPARISONS.has(n.operator as string))
    return keepOne([n.left as N, n.right as N]);
  if (n.type === 'UnaryExpression' && kinds.get(n.argument as N) === k) return [n.argument as N];
  return [];
}

/** The operators of a kind the program already uses, so that a grown node adds no skill its level lacks. */
function ownOperators(shape: Shape, kind: Kind): string[] {
  const ops = shape.nodes.flatMap((n) => {
    if (n.type === 'LogicalExpression' && kind === 'boolean') return [n.operator as string];
    if (n.type === 'BinaryExpression' && kind === 'number' && NUMERIC.has(n.operator as string))
      return [n.operator as string];
    return [];
  });
  return [...new Set(ops)].sort();
}

function growable(shape: Shape): N[] {
  return shape.nodes.filter((n) => {
    const k = shape.kinds.get(n);
    return isLeaf(n) && (k === 'number' || k === 'boolean') && ownOperators(shape, k).length > 0;
  });
}

/** Whether `op` can change this task. */
export function directedApplies(task: CodeTask, op: DirectedOp): boolean {
  const shape = shapeOf(task.program, argumentLists(task)[0]);
  if (!shape) return false;
  switch (op) {
    case 'grow-node':
      return growable(shape).length > 0;
    case 'prune-node':
      return shape.nodes.some((n) => prunable(n, shape.kinds).length > 0);
    case 'raise-constant':
      return shape.nodes.some(intLiteral);
    case 'lower-constant':
      return shape.nodes.some((n) => intLiteral(n) && (n.value as number) > 1);
    case 'widen-inputs':
      return argumentLists(task).some((i) => i.some((x) => typeof x === 'number'));
    case 'narrow-inputs':
      return argumentLists(task).some((i) => i.some((x) => typeof x === 'number' && x !== 0));
  }
}

/** The operators of a direction that can change this task. */
export const directedOps = (task: CodeTask, direction: Direction): DirectedOp[] =>
  DIRECTED_OPS[direction].filter((op) => directedApplies(task, op));

function growNode(rng: Rng, program: string, shape: Shape): string {
  const leaf = rng.pick(growable(shape));
  const kind = shape.kinds.get(leaf)!;
  const op = rng.pick(ownOperators(shape, kind));
  const mates = shape.params.filter((p, i) => p !== '' && kind === kindOfParam(shape, i));
  const literal = kind === 'number' ? String(rng.int(1, 9)) : 'true';
  const other = mates.length === 0 || (kind === 'number' && rng.bool(0.5)) ? literal : rng.pick(mates);
  const text = program.slice(leaf.start, leaf.end);
  return splice(program, leaf, rng.bool(0.5) ? `(${text} ${op} ${other})` : `(${other} ${op} ${text})`);
}

/** A parameter's kind as the shape inferred it (from the first argument list). */
function kindOfParam(shape: Shape, i: number): Kind | undefined {
  const name = shape.params[i];
  const use = shape.nodes.find((n) => n.type === 'Identifier' && n.name === name);
  return use ? shape.kinds.get(use) : undefined;
}

function pruneNode(rng: Rng, program: string, shape: Shape): string {
  const node = rng.pick(shape.nodes.filter((n) => prunable(n, shape.kinds).length > 0));
  const keep = rng.pick(prunable(node, shape.kinds));
  return splice(program, node, `(${program.slice(keep.start, keep.end)})`);
}

function moveConstant(rng: Rng, program: string, shape: Shape, up: boolean): string {
  const lits = shape.nodes.filter((n) => intLiteral(n) && (up || (n.value as number) > 1));
  const lit = rng.pick(lits);
  const old = lit.value as number;
  const step = rng.int(1, 3);
  return splice(program, lit, String(up ? old + step : Math.max(1, old - step)));
}

/** Integer arguments moved away from zero (harder) or toward it, never across it (easier). */
function moveInputs(rng: Rng, inputs: Input[], out: boolean): Input[] {
  return inputs.map((input) =>
    input.map((x) => {
      if (typeof x !== 'number' || !Number.isInteger(x)) return x;
      const d = rng.int(1, 3);
      if (out) return x < 0 ? x - d : x + d;
      return x > 0 ? Math.max(0, x - d) : Math.min(0, x + d);
    }),
  );
}

/** A draft of `task` one step harder or easier by `op`; throws when the operator does not apply or no level of the family admits the child. */
export function directedMutate(rng: Rng, task: CodeTask, op: DirectedOp): TaskDraft {
  if (!directedApplies(task, op)) throw new Error(`directedMutate: '${op}' does not apply to task ${task.id}`);
  const shape = shapeOf(task.program, argumentLists(task)[0])!;
  let program = task.program;
  let inputs = argumentLists(task);
  if (op === 'grow-node') program = growNode(rng, program, shape);
  else if (op === 'prune-node') program = pruneNode(rng, program, shape);
  else if (op === 'raise-constant' || op === 'lower-constant')
    program = moveConstant(rng, program, shape, op === 'raise-constant');
  else inputs = moveInputs(rng, inputs, op === 'widen-inputs');
  return labelled(task, program, inputs, { id: task.id, op });
}

/**
 * A child of two tasks of one family and type: a's program with one of its expressions replaced by
 * one of b's of the same kind that reads only a's parameters; a's inputs. Throws when no pair fits.
 */
export function crossover(rng: Rng, a: CodeTask, b: CodeTask): TaskDraft {
  if (a.family !== b.family || a.type !== b.type)
    throw new Error(`crossover: ${a.id} and ${b.id} are not of one family and type`);
  const sa = shapeOf(a.program, argumentLists(a)[0]);
  const sb = shapeOf(b.program, argumentLists(b)[0]);
  if (!sa || !sb) throw new Error('crossover: a program acorn cannot read');
  const own = new Set(sa.params);
  const pairs = sa.nodes.flatMap((x) =>
    sb.nodes
      .filter((y) => sa.kinds.get(x) === sb.kinds.get(y) && sa.kinds.get(x) !== 'other' && readsOnly(y, own))
      .map((y) => [x, y] as const),
  );
  const fresh = pairs.filter(([x, y]) => a.program.slice(x.start, x.end) !== b.program.slice(y.start, y.end));
  if (fresh.length === 0) throw new Error(`crossover: no expression of ${b.id} fits ${a.id}`);
  const [x, y] = rng.pick(fresh);
  const program = splice(a.program, x, `(${b.program.slice(y.start, y.end)})`);
  return labelled(a, program, argumentLists(a), { id: a.id, op: CROSSOVER, mate: b.id });
}

/** Whether every identifier a subtree reads (not a property name, not Math) is one of `names`. */
function readsOnly(n: N, names: ReadonlySet<string>): boolean {
  let ok = true;
  const walk = (x: unknown, parent?: N): void => {
    if (!ok || !x || typeof x !== 'object') return;
    const node = x as N;
    if (node.type === 'Identifier') {
      const property = parent?.type === 'MemberExpression' && parent.property === node && !parent.computed;
      if (!property && node.name !== 'Math' && !names.has(node.name as string)) ok = false;
      return;
    }
    for (const v of Object.values(node)) {
      if (Array.isArray(v)) v.forEach((c) => walk(c, node));
      else walk(v, node);
    }
  };
  walk(n);
  return ok;
}

function labelled(task: CodeTask, program: string, inputs: Input[], parent: Parent): TaskDraft {
  const label = labelProgram(task.family, program, inputs);
  if (label.level === null)
    throw new Error(`no level of ${task.family} admits the child (${label.why ?? 'unlabelled'})`);
  const draft: TaskDraft = {
    type: task.type,
    family: task.family,
    level: label.level,
    skills: label.skills,
    program,
    inputs,
    parent,
    proposer: FRONTIER_PROPOSER,
  };
  if (task.type === 'induction') {
    draft.visibleCount = task.visible.length;
    draft.message = task.message;
  }
  return draft;
}
