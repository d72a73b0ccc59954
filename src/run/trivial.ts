// What a trivial policy answers, for the held-out probes (probes.ts) to be chosen so that none passes
// them.
//
// A trivial policy answers without reading the program: per group of probes that look alike to it
// (same task type, level and answer shape), it gives one fixed kind of answer:
//   deduction  a constant value (the best one is the most common output), an argument as given, or
//              the whole argument list;
//   abduction  a constant argument list (the best of the probes' own argument lists, the most common
//              one among them, and a few plain values: 0, 1, true, "", [] …), or the output repeated
//              in every argument position;
//   induction  a constant-output program, the identity (the argument list) or "return argument i".
// Each probe records which of these answers solve it (its trivial keys), checked with the
// verifier's own semantics (deepEqual; abduction through the sandbox, as an answer is verified). The
// trivial baseline of a set of probes is the accuracy of the best such policy on it: per group, the
// key that solves the most probes.
import { deepEqual, type Sandbox } from '../../sandbox/index.js';
import { verifyTasks } from './verification.js';
import { answerShape, valueType, type Json, type Task } from '../../core/task.js';
import { isSolved } from '../../core/rules.js';

/** A JSON value's text with object keys sorted, so that values deepEqual treats as equal read the same. */
export function canonical(x: Json): string {
  if (x === null || typeof x !== 'object') return JSON.stringify(x);
  if (Array.isArray(x)) return `[${x.map(canonical).join(',')}]`;
  return `{${Object.keys(x)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical(x[k]!)}`)
    .join(',')}}`;
}

/** Probes a trivial policy cannot tell apart: it sees the type, the level and the answer's shape. */
export const trivialGroup = (task: Task): string => `${task.type}/${task.level}/${answerShape(task)}`;

/** The answers that echo the input: `arg:i` for each argument equal to `out`, `args` if the list is. */
function echoes(input: Json[], out: Json): string[] {
  const keys = input.flatMap((x, i) => (deepEqual(x, out) ? [`arg:${i}`] : []));
  return deepEqual(input, out) ? [...keys, 'args'] : keys;
}

/** The trivial deduction and induction answers that solve a task, read from its data. */
function dataKeys(task: Task): string[] {
  if (task.type === 'deduction') return [`const:${canonical(task.output)}`, ...echoes(task.input, task.output)];
  if (task.type === 'induction') {
    const examples = [...task.visible, ...task.hidden];
    const first = examples[0]!;
    const constant = examples.every((e) => deepEqual(e.output, first.output))
      ? [`const:${canonical(first.output)}`]
      : [];
    const echoing = echoes(first.input, first.output).filter((k) =>
      examples.every((e) => echoes(e.input, e.output).includes(k)),
    );
    return [...constant, ...echoing];
  }
  return [];
}

const PLAIN: Record<string, Json[]> = {
  int: [0, 1, -1, 2],
  num: [0, 0.5],
  bool: [true, false],
  str: ['', 'a'],
  null: [null],
  arr: [[]],
  obj: [{}],
};
const MAX_PLAIN = 64;
/** The most common witnesses of a group that a trivial policy may answer on problem probes. */
const MAX_WITNESSES = 16;

/** Plain argument lists of a shape's value types (all combinations, while there are few). */
function plainArguments(input: Json[]): Json[][] {
  let lists: Json[][] = [[]];
  for (const x of input) {
    const values = PLAIN[valueType(x)] ?? [null];
    lists = lists.flatMap((l) => values.map((v) => [...l, v]));
    if (lists.length > MAX_PLAIN) return lists.slice(0, MAX_PLAIN);
  }
  return lists;
}

/**
 * The trivial keys of each task (in order): its group and the trivial answers that solve it. The
 * constant argument lists tried for an abduction task are those of the abduction tasks given (per
 * group the `mostCommon` most frequent, all by default) and the plain ones, of every group; they
 * and the repeated output are verified in the sandbox.
 */
export async function trivialKeys(sandbox: Sandbox, tasks: Task[], mostCommon = Infinity): Promise<string[][]> {
  // Per group: the argument lists given, by how often they appear, and the plain ones.
  const given = new Map<string, Map<string, { list: Json[]; n: number }>>();
  const plain = new Map<string, Map<string, Json[]>>();
  for (const t of tasks) {
    if (t.type !== 'abduction') continue;
    const g = trivialGroup(t);
    const byText = given.get(g) ?? given.set(g, new Map()).get(g)!;
    const seen = byText.get(canonical(t.input));
    byText.set(canonical(t.input), { list: t.input, n: (seen?.n ?? 0) + 1 });
    const plainOf = plain.get(g) ?? plain.set(g, new Map()).get(g)!;
    for (const list of plainArguments(t.input)) plainOf.set(canonical(list), list);
  }
  // Problems: a trivial policy answers a constant of the group, its most common witnesses (at most
  // MAX_WITNESSES) or a plain value of the witness's type; each is scored by the task's verifier.
  const witnesses = new Map<string, Map<string, { value: Json; n: number }>>();
  for (const t of tasks) {
    if (t.type !== 'problem') continue;
    const g = trivialGroup(t);
    const byText = witnesses.get(g) ?? witnesses.set(g, new Map()).get(g)!;
    const text = canonical(t.witness);
    byText.set(text, { value: t.witness, n: (byText.get(text)?.n ?? 0) + 1 });
  }
  const problemConstants = new Map<string, Map<string, Json>>();
  for (const [g, byText] of witnesses) {
    const common = [...byText].sort((a, b) => b[1].n - a[1].n).slice(0, Math.min(mostCommon, MAX_WITNESSES));
    const shape = g.slice(g.lastIndexOf('/') + 1);
    const plainValues = (PLAIN[shape] ?? []).map((v): [string, Json] => [canonical(v), v]);
    problemConstants.set(g, new Map([...common.map(([text, c]): [string, Json] => [text, c.value]), ...plainValues]));
  }
  // Every group's constants are tried on every abduction task: a function ignores arguments past its
  // parameters, so an argument list of another shape can solve a task too.
  const constants = new Map<string, Json[]>();
  for (const [g, byText] of given) {
    const common = [...byText].sort((a, b) => b[1].n - a[1].n).slice(0, mostCommon);
    for (const [text, c] of common) constants.set(text, c.list);
    for (const [text, list] of plain.get(g)!) constants.set(text, list);
  }
  const items: { task: number; key: string; answer: string }[] = [];
  tasks.forEach((t, i) => {
    if (t.type === 'problem') {
      for (const [text, value] of problemConstants.get(trivialGroup(t)) ?? [])
        items.push({ task: i, key: `const:${text}`, answer: JSON.stringify(value) });
      return;
    }
    if (t.type !== 'abduction') return;
    for (const [text, list] of constants) items.push({ task: i, key: `const:${text}`, answer: JSON.stringify(list) });
    items.push({ task: i, key: 'echo', answer: JSON.stringify(t.input.map(() => t.output)) });
  });
  const verdicts = await verifyTasks(
    sandbox,
    items.map((it) => ({ task: tasks[it.task]!, answer: it.answer })),
  );
  const keys = tasks.map(dataKeys);
  items.forEach((it, j) => {
    if (isSolved(verdicts[j]!.reward)) keys[it.task]!.push(it.key);
  });
  return tasks.map((t, i) => [...new Set(keys[i])].map((k) => `${trivialGroup(t)} ${k}`));
}

/** A running tally of a probe set's best trivial policy: per group, how many probes each key solves. */
export class TrivialTally {
  size = 0;
  /** Probes the best trivial policy solves: per group, its best key's count. */
  solved = 0;
  private readonly counts = new Map<string, number>();
  private readonly best = new Map<string, number>();

  /** 1 if adding these keys would let the best trivial policy solve one more probe, else 0. */
  gain(keys: readonly string[]): number {
    if (keys.length === 0) return 0;
    const group = groupOf(keys[0]!);
    const best = this.best.get(group) ?? 0;
    return keys.some((k) => (this.counts.get(k) ?? 0) === best) ? 1 : 0;
  }
  add(keys: readonly string[]): void {
    this.solved += this.gain(keys);
    this.size++;
    for (const k of keys) {
      const n = (this.counts.get(k) ?? 0) + 1;
      this.counts.set(k, n);
      const group = groupOf(k);
      this.best.set(group, Math.max(this.best.get(group) ?? 0, n));
    }
  }
  baseline(): number {
    return this.size === 0 ? 0 : this.solved / this.size;
  }
}

const groupOf = (key: string): string => key.slice(0, key.indexOf(' '));

/** The best trivial policy's accuracy on a set of probes. */
export function trivialBaseline(probes: readonly { trivial: readonly string[] }[]): number {
  const tally = new TrivialTally();
  for (const p of probes) tally.add(p.trivial);
  return tally.baseline();
}
