// Where tasks come from and how answers are checked, for every part of a run (the loop, the probes,
// the served run, the server's stateless verify): the native families and code tasks go to the
// generators and the sandbox; bridged families (`rg.<dataset>`) and their problems (verifier
// 'reasoning-gym:<dataset>') go to the Reasoning Gym bridge. The routing lives here and nowhere else.
import {
  bridgeReady,
  bridgedFamilies,
  drawBridged,
  isBridgedFamily,
  loadCatalogue,
  notSetUpLine,
  scoreBridged,
  sharedWorker,
} from '../../bridges/index.js';
import { allSkills, familyInfo, generateTask, type FamilyInfo, type GenerateOptions } from '../../generators/index.js';
import { problemAnswerText, verifyMany, type DetailedVerdict, type Sandbox } from '../../sandbox/index.js';
import { answerKind, isBridgedProblem, type ProblemTask, type Skill, type Task } from '../../core/task.js';
import { extractAnswer } from '../../sandbox/index.js';
import { UserError } from '../../core/errors.js';

/** Verdicts in the order of `items`: bridged problems scored in the worker, the rest in the sandbox. */
export async function verifyTasks(
  sandbox: Sandbox,
  items: { task: Task; answer: string }[],
): Promise<DetailedVerdict[]> {
  const bridged = items.flatMap((it, i) => (isBridgedProblem(it.task) ? [i] : []));
  if (bridged.length === 0) return verifyMany(sandbox, items);
  const isBridged = new Set(bridged);
  const native = items.flatMap((_, i) => (isBridged.has(i) ? [] : [i]));
  const worker = sharedWorker();
  const [nativeVerdicts, bridgedVerdicts] = await Promise.all([
    native.length
      ? verifyMany(
          sandbox,
          native.map((i) => items[i]!),
        )
      : Promise.resolve([]),
    Promise.all(
      bridged.map((i) => scoreBridged(worker, items[i]!.task as ProblemTask, bridgedAnswer(items[i]!.answer))),
    ),
  ]);
  const out: DetailedVerdict[] = new Array(items.length);
  native.forEach((i, k) => (out[i] = nativeVerdicts[k]!));
  bridged.forEach((i, k) => (out[i] = bridgedVerdicts[k]!));
  return out;
}

/**
 * A bridged answer as the scorer gets it: as written, or the text inside a JSON string literal (the
 * form a deduction answer takes). Not trimmed otherwise: the witness was checked as it is.
 */
const bridgedAnswer = (answer: string): string =>
  typeof answer === 'string' && answer.trim().startsWith('"') ? problemAnswerText(answer) : answer;

/**
 * The answer in a model's reply to a task. A bridged problem's answer is free text, so a reply that
 * is nothing but the answer (no fence, no "Answer:" line) is taken whole, where a literal would be
 * refused for not being JSON.
 */
export function answerOf(completion: string, task: Task): string {
  const extracted = extractAnswer(completion, answerKind(task.type));
  return isBridgedProblem(task) && !extracted && typeof completion === 'string' ? completion.trim() : extracted;
}

/** One fresh validated task of an arm: from the generators, or from the bridge for a bridged family. */
export function drawTask(sandbox: Sandbox, opts: GenerateOptions): Promise<Task> {
  if (isBridgedFamily(opts.family))
    return drawBridged(sharedWorker(), {
      family: opts.family,
      level: opts.level,
      rng: opts.rng,
      seen: opts.seen,
      attempts: opts.attempts,
    });
  return generateTask(sandbox, opts);
}

/** Whether an arm's tasks come from the bridge (the grammar proposers do not apply to it). */
export const isBridgedArm = (arm: { family: string }): boolean => isBridgedFamily(arm.family);

/** A family's id, levels, skills and task types, native or bridged (a bridged family makes problems). */
export function spaceFamily(id: string): FamilyInfo {
  if (!isBridgedFamily(id)) return familyInfo(id);
  const f = bridgedFamilies().find((x) => x.id === id);
  if (!f)
    throw new UserError(
      loadCatalogue()
        ? `'${id}' is not a bridged family here (excluded or unknown: \`cogen setup reasoning-gym --list\`)`
        : notSetUpLine(),
    );
  return { id: f.id, name: f.name, levels: f.levels, lastLevel: f.levels - 1, skills: f.skills, types: ['problem'] };
}

/** The skills of a config's families, native and bridged. */
export function spaceSkills(families: string[]): Skill[] {
  const bridged = families.some(isBridgedFamily) ? bridgedFamilies().flatMap((f) => f.skills) : [];
  return [...allSkills(), ...bridged].filter((s) => families.includes(s.family));
}

let warned = false;

/**
 * The families of a config that can run here: bridged ones whose bridge is not set up are left out
 * with one line (the run goes on with the native families); none left is an error.
 */
export function availableFamilies(
  families: string[],
  log: (line: string) => void = (l) => process.stderr.write(`cogen: ${l}\n`),
): string[] {
  if (!families.some(isBridgedFamily)) return families;
  const known = new Set(bridgeReady() ? bridgedFamilies().map((f) => f.id) : []);
  const missing = families.filter((id) => isBridgedFamily(id) && !known.has(id));
  if (missing.length === 0) return families;
  const kept = families.filter((id) => !missing.includes(id));
  if (kept.length === 0)
    throw new UserError(`${notSetUpLine()}; the config asks only for bridged families (${missing.join(', ')})`);
  if (!warned) log(`${notSetUpLine()}; going on without ${missing.join(', ')}`);
  warned = true;
  return kept;
}
