// A deduction's working: the program's operations in the order they are evaluated, one step each,
// so that a solver can write each intermediate value before the answer (docs/solver-view.md,
// "The working"). The template is a function of the program text alone, never of its values: it
// re-writes the program in three-address form and evaluates nothing. Holes stand where the solver
// writes a value; `workingValues` gives the values a right working holds, for supervision and for
// crediting a working's steps.
//
// Only pure expressions over integers and booleans have one: arithmetic, bitwise, comparison and
// boolean operators, Math.floor/abs/min/max and the conditional, in `const` definitions and a
// return. Any other program (loops, strings, arrays, calls of f) has none, and its answer is
// written as before.
import { parse, type Node } from 'acorn';
import { workShape, type HoleType, type WorkPart } from '../core/working.js';
import { binaryOp, NO_OP } from './operators.js';
import type { AnswerShape, Task } from '../core/task.js';

/**
 * How a step names its operands: `names` writes the program's own names, literals and `$k` for the
 * value of step k (`a*b=64;$1-a=56`); `values` writes each operand's value in a hole
 * (`8*8=64;64-8=56`), literals as written.
 */
export type OperandStyle = 'names' | 'values';

export interface Working {
  parts: WorkPart[];
  /** The value of each hole, in order, for the program's input; the last is the program's output. */
  values: (number | boolean)[];
}

const MATH = new Set(['floor', 'abs', 'min', 'max']);

/**
 * A deduction's working (the template and the values of a right one), or null: for another task
 * type, a program outside the subset, or a working whose last value is not the task's output.
 */
export function taskWorking(task: Task, style: OperandStyle = 'values'): Working | null {
  if (task.type !== 'deduction') return null;
  const memo = workings.get(task) ?? workings.set(task, new Map()).get(task)!;
  let w = memo.get(style);
  if (w === undefined) {
    const made = working(task.program, task.input, style);
    w = made && made.values[made.values.length - 1] === task.output ? made : null;
    memo.set(style, w);
  }
  return w;
}

/** Each task's workings by style: a step asks for a task's template and then its right values, and the probes ask every round. */
const workings = new WeakMap<Task, Map<OperandStyle, Working | null>>();

/** The answer shape of a deduction's working (core/working.ts), or undefined where it has none. */
export function workingShape(task: Task, style: OperandStyle = 'values'): AnswerShape | undefined {
  const w = taskWorking(task, style);
  return w ? workShape(w.parts) : undefined;
}

/** An operand as a step reads it: its text in the template (or a hole), its value and type. */
interface Operand {
  text: WorkPart;
  value: number | boolean;
}

class Unsupported extends Error {}

type AnyNode = Node & Record<string, unknown>;

/**
 * The working of a deduction's program on its input, or null when the program is outside the
 * supported subset (or some intermediate value is not an integer or a boolean).
 */
export function working(program: string, input: readonly unknown[], style: OperandStyle): Working | null {
  let fn: AnyNode;
  try {
    fn = (parse(program, { ecmaVersion: 'latest' }) as unknown as { body: AnyNode[] }).body[0]!;
  } catch {
    return null;
  }
  if (fn?.type !== 'FunctionDeclaration') return null;
  const w = new Writer(style);
  try {
    (fn.params as AnyNode[]).forEach((p, i) => {
      if (p.type !== 'Identifier') throw new Unsupported();
      w.bind(p.name as string, checked(input[i]));
    });
    const statements = (fn.body as AnyNode & { body: AnyNode[] }).body;
    for (const [i, st] of statements.entries()) {
      if (st.type === 'VariableDeclaration' && st.kind === 'const' && i < statements.length - 1) {
        for (const d of st.declarations as AnyNode[]) {
          if ((d.id as AnyNode).type !== 'Identifier') throw new Unsupported();
          w.define((d.id as AnyNode).name as string, w.operand(d.init as AnyNode));
        }
      } else if (st.type === 'ReturnStatement' && i === statements.length - 1 && st.argument) {
        w.finish(w.operand(st.argument as AnyNode));
      } else throw new Unsupported();
    }
  } catch (e) {
    if (e instanceof Unsupported) return null;
    throw e;
  }
  return w.result();
}

/** A value an operand may hold: a safe integer or a boolean. */
function checked(v: unknown): number | boolean {
  if (typeof v === 'boolean' || (typeof v === 'number' && Number.isSafeInteger(v))) return v;
  throw new Unsupported();
}

/** Builds a template step by step, post-order, as the program is evaluated. */
class Writer {
  private readonly parts: WorkPart[] = [];
  private readonly values: (number | boolean)[] = [];
  private readonly env = new Map<string, Operand>();
  private steps = 0;
  private lastStep: Operand | null = null;
  constructor(private readonly style: OperandStyle) {}

  bind(name: string, value: number | boolean): void {
    this.env.set(name, { text: this.style === 'names' ? name : hole(value), value });
  }

  /** A `const` definition: later reads of its name read the defining step's operand. */
  define(name: string, op: Operand): void {
    this.env.set(name, op);
  }

  /** The operand a node evaluates to, writing a step for each operation in it. */
  operand(n: AnyNode): Operand {
    switch (n.type) {
      case 'Identifier': {
        const op = this.env.get(n.name as string);
        if (!op) throw new Unsupported();
        return op;
      }
      case 'Literal':
        return { text: String(n.raw), value: checked(n.value) };
      case 'UnaryExpression': {
        const arg = n.argument as AnyNode;
        // a negative literal is a literal, as the program writes it
        if (n.operator === '-' && arg.type === 'Literal')
          return { text: `-${String(arg.raw)}`, value: checked(-(arg.value as number)) };
        const x = this.operand(arg);
        return this.step([String(n.operator), x], unary(String(n.operator), x.value));
      }
      case 'BinaryExpression':
      case 'LogicalExpression': {
        const l = this.operand(n.left as AnyNode);
        const r = this.operand(n.right as AnyNode);
        return this.step([l, String(n.operator), r], binary(String(n.operator), l.value, r.value));
      }
      case 'ConditionalExpression': {
        const c = this.operand(n.test as AnyNode);
        const a = this.operand(n.consequent as AnyNode);
        const b = this.operand(n.alternate as AnyNode);
        if (typeof c.value !== 'boolean') throw new Unsupported();
        return this.step([c, '?', a, ':', b], c.value ? a.value : b.value);
      }
      case 'CallExpression':
        return this.call(n);
      default:
        throw new Unsupported();
    }
  }

  /** Math.floor(x / y) is one step (floor division); Math.floor/abs/min/max of operands one step each. */
  private call(n: AnyNode): Operand {
    const callee = n.callee as AnyNode;
    const isMath = callee.type === 'MemberExpression' && (callee.object as AnyNode).name === 'Math';
    const name = isMath ? String((callee.property as AnyNode).name) : '';
    if (!MATH.has(name)) throw new Unsupported();
    const args = n.arguments as AnyNode[];
    const q = args[0];
    if (name === 'floor' && args.length === 1 && q?.type === 'BinaryExpression' && q.operator === '/') {
      const l = this.operand(q.left as AnyNode);
      const r = this.operand(q.right as AnyNode);
      return this.step(['floor(', l, '/', r, ')'], Math.floor(asInt(l.value) / asInt(r.value)));
    }
    const xs = args.map((a) => this.operand(a));
    const pieces: (string | Operand)[] = [`${name}(`];
    xs.forEach((x, i) => pieces.push(...(i > 0 ? [','] : []), x));
    pieces.push(')');
    const f = Math[name as 'floor' | 'abs' | 'min' | 'max'] as (...v: number[]) => number;
    return this.step(pieces, f(...xs.map((x) => asInt(x.value))));
  }

  /** One step: its expression, `=` and a hole for its value; later steps read it as `$k` or as a hole. */
  private step(pieces: (string | Operand)[], value: number | boolean): Operand {
    const v = checked(value);
    if (this.steps > 0) this.parts.push(';');
    for (const p of pieces) {
      if (typeof p === 'string') this.parts.push(p);
      else {
        this.parts.push(p.text);
        if (typeof p.text !== 'string') this.values.push(p.value);
      }
    }
    this.parts.push('=', hole(v));
    this.values.push(v);
    this.steps++;
    this.lastStep = { text: this.style === 'names' ? `$${this.steps}` : hole(v), value: v };
    return this.lastStep;
  }

  /** The returned operand: the last step's value is the answer; a lone name or literal is written as `=value`. */
  finish(op: Operand): void {
    if (op === this.lastStep) return;
    if (this.steps > 0) this.parts.push(';');
    this.parts.push('=', hole(op.value));
    this.values.push(op.value);
  }

  result(): Working {
    return { parts: merge(this.parts), values: this.values };
  }
}

const hole = (v: number | boolean): WorkPart => ({ hole: typeOf(v) });
const typeOf = (v: number | boolean): HoleType => (typeof v === 'boolean' ? 'bool' : 'int');
const asInt = (v: number | boolean): number => {
  if (typeof v !== 'number') throw new Unsupported();
  return v;
};

function unary(op: string, x: number | boolean): number | boolean {
  if (op === '!') return !x;
  if (op === '-') return -asInt(x);
  if (op === '~') return ~asInt(x);
  throw new Unsupported();
}

/**
 * A binary operator of the subset, with JavaScript's semantics (as the sandbox runs the program).
 * Plain `/` is outside it: a quotient is seldom an integer, and Math.floor(x / y) is its own step.
 */
function binary(op: string, a: number | boolean, b: number | boolean): number | boolean {
  if (op === '&&') return a && b;
  if (op === '||') return a || b;
  const v = op === '/' ? NO_OP : binaryOp(op, a, b);
  if (v === NO_OP) throw new Unsupported();
  return v as number | boolean;
}

/** Adjacent texts joined, so that a template alternates text and holes. */
function merge(parts: WorkPart[]): WorkPart[] {
  const out: WorkPart[] = [];
  for (const p of parts) {
    const prev = out[out.length - 1];
    if (typeof p === 'string' && typeof prev === 'string') out[out.length - 1] = prev + p;
    else out.push(p);
  }
  return out;
}
