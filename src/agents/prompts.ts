// Prompts for the LLM agents, in the manner of Absolute Zero (Zhao et al., 2025): the proposer is
// shown K reference tasks from the run's archive, the target family, skills and level, and the
// executor's rules, and writes one new task of the requested type as a fenced ```json block of a
// fixed shape. The solver is asked for its final answer in a fenced block or an `ANSWER:` line.
import type { Skill, Task, TaskType } from '../../core/task.js';
import type { Rng } from '../../core/rng.js';

/** What the proposer is asked for (the loop fills it from a curriculum pick). */
export interface ProposalRequest {
  family: string;
  level: number;
  type: TaskType;
  /** The family's skills at or below the level: the task should exercise some of them. */
  skills: Skill[];
  /** Candidate reference tasks from the run's archive; K of them are shown (see pickReferences). */
  references: Task[];
  /** Seeds the choice of references, so a run is reproducible. */
  seed: number;
  /** The learner's solve rate of a task so far (undefined where it has not tried it): shown beside each reference. */
  rateOf?: (taskId: string) => number | undefined;
  /**
   * Ask for a variant of one task, one step harder or easier (the frontier proposer's pick,
   * curricula/evolve.ts): it is shown as the first reference.
   */
  variant?: { parent: Task; direction: Direction };
}

/** Which way a variant should move from its parent; `either` for a parent solved exactly half the time. */
export type Direction = 'harder' | 'easier' | 'either';

const VARIANT_HINT: Record<Direction, string> = {
  harder:
    'one step harder: one more operation, a larger constant or a wider range of input values, so that the learner solves it less often',
  easier:
    'one step easier: one operation fewer, a smaller constant or input values nearer to zero, so that the learner solves it more often',
  either: 'one step harder or easier, whichever keeps the learner solving it about half the time',
};

/** Limits a proposal must respect; the JSON schema in proposer.ts enforces the same numbers. */
export const PROPOSAL_LIMITS = {
  programChars: 4000,
  /** Arguments per call of f. */
  maxArgs: 6,
  /** JSON characters of one argument list. */
  inputChars: 2000,
  inductionMinInputs: 4,
  inductionMaxInputs: 12,
  messageChars: 300,
  /** Near-miss failures of a problem proposal. */
  problemMinFailures: 2,
  problemFailures: 4,
  statementChars: 2000,
} as const;

export const SANDBOX_RULES = [
  'The program is one JavaScript function declaration named `f`: `function f(a, b) { ... }`. Helpers may be declared inside `f`; nothing outside it.',
  'It is pure and deterministic: the same arguments always give the same result. No Math.random, no Date or clock, no timers, no async or Promises.',
  'No I/O of any kind: no console, require, import, fetch, process, globalThis, eval or Function.',
  'It finishes in a few milliseconds on small inputs (a few thousand basic operations at most); no infinite or very long loops, no deep recursion.',
  'Arguments and the return value are JSON-like: finite numbers, strings, booleans, null, arrays, plain objects. Never undefined, NaN, Infinity, functions, Map, Set, Date, BigInt or class instances.',
  'An input is the list of arguments passed to f, written as a JSON array: `[5]` calls f(5), `[[1, 2], "x"]` calls f([1, 2], "x").',
] as const;

const TYPE_GOAL: Record<TaskType, string> = {
  deduction:
    'a DEDUCTION task: the learner sees the program and one input and must predict the output. Choose a program and an input for which computing the output takes careful step-by-step reasoning, not a glance.',
  abduction:
    'an ABDUCTION task: the learner sees the program and an output and must find an input that produces it (any input that does is accepted). Choose a program and an input whose output can be traced back by reasoning, without being trivially invertible.',
  induction:
    'an INDUCTION task: the learner sees some input/output pairs and a short message and must write a program that behaves like yours; it is checked on further, hidden inputs. Choose diverse inputs that together pin the behaviour down, and a message that hints at the intent without giving the code away.',
  problem:
    'a VERIFIED PROBLEM: a puzzle stated in words with its instance as JSON data, and a verifier program `function f(answer, data)` that returns a score in [0, 1] (1 for a correct answer). The verifier must CHECK the answer against the data (where many answers are right, accept every one of them), not compare it with a stored solution. Give a witness (a correct answer, which must score 1) and 2 to 4 near-miss failures (plausible but wrong answers: an off-by-one, one constraint broken), which must each score below 1. The learner sees the statement and answers with a JSON literal.',
};

const TYPE_SHAPE: Record<TaskType, string> = {
  deduction: '{"program": "function f(...) { ... }", "input": [<argument>, ...]}',
  abduction: '{"program": "function f(...) { ... }", "input": [<argument>, ...]}',
  induction:
    '{"program": "function f(...) { ... }", "inputs": [[<argument>, ...], ...], "message": "<one short sentence>"}',
  problem:
    '{"statement": "<the problem in words, with the answer format>", "data": <the instance as JSON>, "program": "function f(answer, data) { ... return 1 or a score below 1 }", "witness": <a correct answer as JSON>, "failures": [<a near-miss answer>, ...]}',
};

/** One reference task as the proposer sees it: program, then input/output (or pairs and message); its solve rate where known. */
export function renderReference(task: Task, index: number, rate?: number): string {
  const solved = rate === undefined ? '' : `; the learner solves it in ${Math.round(100 * rate)}% of its attempts`;
  const head = `### Reference ${index + 1} — ${task.type}, family ${task.family}, level ${task.level}${task.skills.length ? `, skills ${task.skills.join(', ')}` : ''}${solved}`;
  const code = '```javascript\n' + task.program.trim() + '\n```';
  if (task.type === 'problem') {
    const io = `statement: ${task.statement}\ndata: ${JSON.stringify(task.data)}\nwitness: ${JSON.stringify(task.witness)}\nfailures: ${JSON.stringify(task.failures)}`;
    return `${head}\n${io}\nverifier:\n${code}`;
  }
  if (task.type === 'induction') {
    const pairs = [...task.visible, ...task.hidden]
      .map((ex) => `- f(...${JSON.stringify(ex.input)}) = ${JSON.stringify(ex.output)}`)
      .join('\n');
    return `${head}\n${code}\nmessage: ${task.message}\n${pairs}`;
  }
  return `${head}\n${code}\ninput: ${JSON.stringify(task.input)}\noutput: ${JSON.stringify(task.output)}`;
}

/**
 * Up to k references from the candidates, preferring the same family and type, then the same family,
 * then the rest; random within each tier (seeded), then shown in a stable order (family, level).
 */
export function pickReferences(
  candidates: readonly Task[],
  req: Pick<ProposalRequest, 'family' | 'type'>,
  k: number,
  rng: Rng,
): Task[] {
  if (k <= 0 || candidates.length === 0) return [];
  const tier = (t: Task) => (t.family === req.family ? (t.type === req.type ? 0 : 1) : 2);
  const keyed = candidates.map((t) => ({ t, tier: tier(t), r: rng.next() }));
  keyed.sort((a, b) => a.tier - b.tier || a.r - b.r);
  return keyed.slice(0, k).map((x) => x.t);
}

export interface Prompt {
  system: string;
  user: string;
}

/** The proposer's prompt for one request, with the references already picked. */
export function proposerPrompt(req: Omit<ProposalRequest, 'references' | 'seed'>, references: readonly Task[]): Prompt {
  const shown = references.map((t, i) => renderReference(t, i, req.rateOf?.(t.id)));
  const rated = references.some((t) => req.rateOf?.(t.id) !== undefined);
  const intro =
    req.type === 'problem'
      ? 'You design verified problems for a learner that is getting better step by step. Each problem is a statement with its data and a verifier program; an executor runs your verifier on your witness and on your near misses to check it, so the program must follow these rules:'
      : 'You design programming tasks for a learner that is getting better step by step. Each task is a small program plus a question about it; an executor runs your program to obtain the reference answers, so the program must follow these rules:';
  const system = [
    intro,
    ...SANDBOX_RULES.map((r, i) => `${i + 1}. ${r}`),
    'Answer with exactly one fenced ```json block and nothing after it.',
  ].join('\n');

  const skills = req.skills.length
    ? req.skills.map((s) => `- ${s.id}: ${s.name}${s.description ? ` — ${s.description}` : ''}`).join('\n')
    : '- (any skill of the family)';
  const refs = references.length
    ? `Here are ${references.length} reference task${references.length > 1 ? 's' : ''} from the learner's curriculum, for style and difficulty${rated ? ', with how often the learner solves them: aim for a task it would solve about half the time' : ''}. Do not copy them; write something new.\n\n${shown.join('\n\n')}`
    : 'There are no reference tasks yet: write a simple task that fits the family and level.';
  const variant = req.variant
    ? [
        '',
        `Write it as a variant of Reference 1, ${VARIANT_HINT[req.variant.direction]}. Keep its family, type and the kind of its inputs; change the program or the input, not both beyond recognition.`,
      ]
    : [];
  const induction =
    req.type === 'problem'
      ? `\nThe verifier follows the same rules as a program (pure, deterministic, no I/O), takes (answer, data), must not throw on an answer of the wrong type (return 0), and returns a number in [0, 1]. At most ${PROPOSAL_LIMITS.problemFailures} failures; data, witness and each failure at most ${PROPOSAL_LIMITS.inputChars} JSON characters.`
      : req.type === 'induction'
        ? `\nGive ${PROPOSAL_LIMITS.inductionMinInputs} to ${PROPOSAL_LIMITS.inductionMaxInputs} distinct inputs; the first half are shown to the learner with their outputs, the rest are hidden and used to check the learner's program. The message is at most ${PROPOSAL_LIMITS.messageChars} characters.`
        : '';
  const user = [
    `Write ${TYPE_GOAL[req.type]}`,
    '',
    `Target: family "${req.family}", level ${req.level} (higher levels are harder: more steps, larger values, composition of several ideas). The task should exercise these skills:`,
    skills,
    '',
    refs,
    ...variant,
    '',
    `Reply with one fenced json block of exactly this shape:${induction}`,
    '```json',
    TYPE_SHAPE[req.type],
    '```',
    `The program is a JSON string (escape newlines as \\n), at most ${PROPOSAL_LIMITS.programChars} characters, and f takes at most ${PROPOSAL_LIMITS.maxArgs} arguments.`,
  ].join('\n');
  return { system, user };
}

/** The prompt text as recorded in the run store: system and user parts, labelled. */
export const promptText = (p: Prompt): string => `[system]\n${p.system}\n\n[user]\n${p.user}`;
