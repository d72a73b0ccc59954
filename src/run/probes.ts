// The held-out mastery probes (docs/DESIGN.md, step 7), chosen so that a trivial policy cannot pass
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
//
// buildProbes draws a pool of candidates per arm and keeps a subset in which every skill has at
// least minProbes probes at its own level and, where the pool allows, a baseline at most
// learnAt − margin (so that the mastery threshold is learnAt itself), and holds a candidate out only
// while another candidate of its case type (src/run/case-type.ts) stays with training: every case a probe
// asks for is one training covers. Candidates left out stay available to training.
import {
  masterable,
  masteryBar,
  minProbes,
  type MasteryOptions,
  type MasteryState,
  type SkillProbe,
} from '../../curricula/index.js';
import type { TaskArm } from '../../curricula/index.js';
import type { ProbeSets } from '../../graphs/index.js';
import { deepEqual, type Sandbox } from '../../sandbox/index.js';
import { drawTask, verifyTasks } from './verification.js';
import type { Rng } from '../../core/rng.js';
import { answerShape, valueType, type Json, type Skill, type Task, type Verdict } from '../../core/task.js';
import { isSolved } from '../../core/rules.js';
import { mean } from '../../core/stats.js';
import { caseType } from './case-type.js';

export interface Probe {
  task: Task;
  prompt: string;
  /** The trivial answers that solve this probe, as `<group> <answer>` keys (see trivialKeys). */
  trivial: string[];
}

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
class TrivialTally {
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
export function trivialBaseline(probes: readonly Pick<Probe, 'trivial'>[]): number {
  const tally = new TrivialTally();
  for (const p of probes) tally.add(p.trivial);
  return tally.baseline();
}

/** The probes that measure a skill: those of its own level that exercise it (any level if none there). */
export function skillProbeSet<P extends Pick<Probe, 'task'>>(skill: Skill, probes: readonly P[]): number[] {
  const at = (level: (l: number) => boolean) =>
    probes.flatMap((p, i) => (p.task.skills.includes(skill.id) && level(p.task.level) ? [i] : []));
  const own = at((l) => l === skill.level);
  return own.length > 0 ? own : at(() => true);
}

/** Each skill's probe set: its size, its trivial baseline, and whether it can show mastery at all. */
export function probeSets(probes: readonly Probe[], skills: readonly Skill[], opts: MasteryOptions): ProbeSets {
  const sets: ProbeSets['skills'] = {};
  for (const skill of skills) {
    const set = skillProbeSet(skill, probes).map((i) => probes[i]!);
    const baseline = trivialBaseline(set);
    sets[skill.id] = { probes: set.length, baseline, masterable: masterable({ baseline, probes: set.length }, opts) };
  }
  return { learnAt: opts.learnAt, margin: opts.margin, minProbes: minProbes(opts), skills: sets };
}

export interface ProbeOptions {
  /** Held-out tasks per arm, at least (where the arm's space holds them). */
  perArm: number;
  mastery: MasteryOptions;
}

interface Candidate {
  task: Task;
  arm: number;
  /** The skills of its family at its own level that it exercises. */
  targets: string[];
  trivial: string[];
  /** Its arm and case type: a probe needs a twin of this key left in training. */
  twinKey: string;
  /** Whether the pool holds its arm's whole space (the arm ran dry). */
  whole: boolean;
}

/** Rounds of drawing while a skill of the block has fewer than twice its quota in the pool. */
const MAX_ROUNDS = 8;

/**
 * The held-out probes of a run: per (family, level), a balanced subset of a pool drawn from each
 * arm (see the header). The chosen tasks are added to `seen`; the rest of the pool is not.
 */
export async function buildProbes(
  sandbox: Sandbox,
  arms: TaskArm[],
  skills: readonly Skill[],
  opts: ProbeOptions,
  rng: Rng,
  seen: Set<string>,
  render: (t: Task) => string,
): Promise<Probe[]> {
  const quota = minProbes(opts.mastery);
  const probes: Probe[] = [];
  const blocks = new Map<string, number[]>();
  arms.forEach((arm, i) => {
    const key = `${arm.family}/${arm.level}`;
    (blocks.get(key) ?? blocks.set(key, []).get(key)!).push(i);
  });
  for (const armIds of blocks.values()) {
    const { family, level } = arms[armIds[0]!]!;
    const targets = skills.filter((s) => s.family === family && s.level === level).map((s) => s.id);
    // A round draws enough for every skill's quota if each arm held a third of a skill's probes;
    // more rounds follow while a skill is rare in the pool (one in twenty tasks, say).
    const round = opts.perArm + Math.ceil((2 * quota * Math.max(1, targets.length)) / armIds.length);
    const pool = new Pool(sandbox, arms, armIds, rng, seen);
    const twinKey = (c: { task: Task; arm: number }) => `${c.arm} ${caseType(c.task)}`;
    const holdableFor = (s: string) =>
      holdable(
        pool.tasks
          .filter((c) => c.task.skills.includes(s))
          .map((c) => ({ twinKey: twinKey(c), whole: pool.dry.has(c.arm) })),
      );
    for (let r = 1; r <= MAX_ROUNDS; r++) {
      await pool.draw(r * round);
      // (a skill no task of the pool exercises is left alone: it is absent at this level, or too rare)
      const counts = targets.map(
        (s) => pool.tasks.filter((c) => !pool.dry.has(c.arm) && c.task.skills.includes(s)).length,
      );
      const short =
        counts.some((n) => n > 0 && n < 2 * quota) || targets.some((s, i) => counts[i]! > 0 && holdableFor(s) < quota);
      if (!short || armIds.every((a) => pool.dry.has(a))) break;
    }
    const trivial = await trivialKeys(
      sandbox,
      pool.tasks.map((c) => c.task),
      POOL_CONSTANTS,
    );
    const candidates: Candidate[] = pool.tasks.map((c, i) => ({
      ...c,
      targets: c.task.skills.filter((s) => targets.includes(s)),
      trivial: trivial[i]!,
      twinKey: twinKey(c),
      whole: pool.dry.has(c.arm),
    }));
    // An arm whose space ran dry gives at most a quarter of it, so that training keeps the rest; a
    // skill the pool cannot give its quota (within each case type's holdLimit) is not chased (it
    // cannot show mastery either way).
    const caps = new Map(
      armIds.map((a) => [
        a,
        pool.dry.has(a) ? Math.max(1, Math.floor(pool.tasks.filter((c) => c.arm === a).length / 4)) : Infinity,
      ]),
    );
    const reachable = targets.filter((s) => holdableFor(s) >= quota);
    const chosen = chooseBalanced(candidates, reachable, armIds, {
      quota,
      perArm: opts.perArm,
      caps,
      aim: opts.mastery.learnAt - opts.mastery.margin,
    }).sort((x, y) => x.arm - y.arm);
    // The recorded keys try every argument list of the chosen probes as a constant, not only the
    // pool's most common ones.
    const keys = await trivialKeys(
      sandbox,
      chosen.map((c) => c.task),
    );
    chosen.forEach((c, i) => {
      seen.add(c.task.id);
      probes.push({ task: c.task, prompt: render(c.task), trivial: keys[i]! });
    });
  }
  return probes;
}

/**
 * How many of a case type's `n` candidates in the pool may be held out: at least one of two or more,
 * never the last, and where the pool is the arm's whole space (`whole`: the arm ran dry) a quarter (as
 * of the arm): training then keeps three of each case type for every one held out. Where the pool is
 * a sample of a larger space, half of it: training keeps at least as many as are held out, and more
 * from the rest of the space. (All but one would let a rare case type, `a * a` in arithmetic level 0,
 * be held out nearly whole: 7 of its 9 tasks, on seed 23.)
 */
export const holdLimit = (n: number, whole: boolean): number =>
  n < 2 ? 0 : Math.max(1, Math.floor(n / (whole ? 4 : 2)));

/** How many of these candidates may be held out, case type by case type (holdLimit). */
function holdable(candidates: readonly Pick<Candidate, 'twinKey' | 'whole'>[]): number {
  const perKey = new Map<string, { n: number; whole: boolean }>();
  for (const c of candidates) perKey.set(c.twinKey, { n: (perKey.get(c.twinKey)?.n ?? 0) + 1, whole: c.whole });
  return [...perKey.values()].reduce((n, k) => n + holdLimit(k.n, k.whole), 0);
}

/** Constant argument lists tried per group when keying a whole pool: its most common ones. */
const POOL_CONSTANTS = 16;

/** Distinct candidates drawn from a block's arms past `seen`; an arm whose draw finds nothing new is dry. */
class Pool {
  readonly tasks: { task: Task; arm: number }[] = [];
  readonly dry = new Set<number>();
  private readonly drawn: Set<string>;
  private readonly next = new Map<number, number>();
  constructor(
    private readonly sandbox: Sandbox,
    private readonly arms: TaskArm[],
    private readonly armIds: number[],
    private readonly rng: Rng,
    seen: Set<string>,
  ) {
    this.drawn = new Set(seen);
  }

  /** Draws until each arm that is not dry has made `perArm` draws. */
  async draw(perArm: number): Promise<void> {
    for (const a of this.armIds) {
      const arm = this.arms[a]!;
      for (let i = this.next.get(a) ?? 0; i < perArm && !this.dry.has(a); i++) {
        this.next.set(a, i + 1);
        try {
          const rng = this.rng.fork(`${arm.family}/${arm.level}/${arm.type}/${i}`);
          this.tasks.push({
            arm: a,
            task: await drawTask(this.sandbox, { ...arm, rng, seen: this.drawn, attempts: 20 }),
          });
        } catch {
          this.dry.add(a);
        }
      }
    }
  }
}

/**
 * Greedy choice from the pool (in its random order), within each case type's holdLimit: first, while an arm lacks perArm probes or a
 * skill lacks its quota, the candidate that fills the most of those needs and raises the fewest
 * trivial baselines; then, while a skill's baseline is above the aim, candidates that lower it
 * without lifting another skill's above the aim (at most as many again).
 */
function chooseBalanced(
  pool: Candidate[],
  targets: string[],
  armIds: number[],
  o: { quota: number; perArm: number; caps: ReadonlyMap<number, number>; aim: number },
): Candidate[] {
  const tallies = new Map(targets.map((s) => [s, new TrivialTally()]));
  const perArm = new Map(armIds.map((a) => [a, 0]));
  const chosen: Candidate[] = [];
  const left = new Set(pool.map((c) => ({ ...c, targets: c.targets.filter((s) => tallies.has(s)) })));
  // Per case type, how many more may be held out (holdLimit of its candidates in the pool).
  const room = new Map<string, number>();
  for (const c of pool) room.set(c.twinKey, (room.get(c.twinKey) ?? 0) + 1);
  for (const [k, n] of room) room.set(k, holdLimit(n, pool.find((c) => c.twinKey === k)!.whole));
  const take = (c: Candidate) => {
    room.set(c.twinKey, room.get(c.twinKey)! - 1);
    for (const s of c.targets) tallies.get(s)!.add(c.trivial);
    perArm.set(c.arm, perArm.get(c.arm)! + 1);
    chosen.push(c);
    left.delete(c);
  };
  const best = (score: (c: Candidate) => number | null): Candidate | undefined => {
    let top: Candidate | undefined;
    let topScore = -Infinity;
    for (const c of left) {
      if (perArm.get(c.arm)! >= o.caps.get(c.arm)! || room.get(c.twinKey)! < 1) continue;
      const s = score(c);
      if (s !== null && s > topScore) [top, topScore] = [c, s];
    }
    return top;
  };
  const raised = (c: Candidate) => c.targets.reduce((n, s) => n + tallies.get(s)!.gain(c.trivial), 0);
  for (;;) {
    const c = best((c) => {
      const need =
        (perArm.get(c.arm)! < o.perArm ? 1 : 0) + c.targets.filter((s) => tallies.get(s)!.size < o.quota).length;
      // Ties go to the arm with the fewest probes, so that a skill's probes spread over its types.
      return need > 0 ? need - raised(c) - perArm.get(c.arm)! / 1e3 : null;
    });
    if (!c) break;
    take(c);
  }
  const after = (s: string, c: Candidate) => {
    const t = tallies.get(s)!;
    return (t.solved + t.gain(c.trivial)) / (t.size + 1);
  };
  for (let extra = chosen.length; extra > 0; extra--) {
    const c = best((c) => {
      const lowered = c.targets.filter(
        (s) => tallies.get(s)!.baseline() > o.aim && tallies.get(s)!.gain(c.trivial) === 0,
      ).length;
      const lifted = c.targets.filter((s) => tallies.get(s)!.gain(c.trivial) === 1 && after(s, c) > o.aim).length;
      return lowered > 0 && lifted === 0 ? lowered : null;
    });
    if (!c) break;
    take(c);
  }
  return chosen;
}

/** Per-skill probe results from the probes' verdicts, with the overall and per-arm accuracies. */
export function probeScores(probes: readonly Probe[], verdicts: readonly Verdict[], skills: readonly Skill[]) {
  const solved = verdicts.map((v) => (isSolved(v.reward) ? 1 : 0));
  const perSkill = new Map<string, SkillProbe>();
  for (const skill of skills) {
    const set = skillProbeSet(skill, probes);
    if (set.length === 0) continue;
    perSkill.set(skill.id, {
      accuracy: mean(set.map((i) => solved[i]!)),
      baseline: trivialBaseline(set.map((i) => probes[i]!)),
      probes: set.length,
    });
  }
  const perArm: Record<string, number[]> = {};
  probes.forEach((p, i) => (perArm[`probe.${p.task.family}/${p.task.level}/${p.task.type}`] ??= []).push(solved[i]!));
  return {
    overall: mean(solved),
    perSkill,
    perArm: Object.fromEntries(Object.entries(perArm).map(([k, xs]) => [k, mean(xs)])),
  };
}

/** The metrics key of a skill's probe accuracy at a round (`cogen skills` reads the latest). */
export const SKILL_PROBE_PREFIX = 'skill.';

/** A probe round's per-skill accuracies as metrics: `skill.<id>` → accuracy. */
export function skillProbeMetrics(perSkill: ReadonlyMap<string, SkillProbe>): Record<string, number> {
  return Object.fromEntries([...perSkill].map(([id, p]) => [`${SKILL_PROBE_PREFIX}${id}`, p.accuracy]));
}

/** Each skill's latest probe accuracy in a run's metrics rows (oldest first), and its step. */
export function latestSkillProbes(
  metrics: readonly Record<string, unknown>[],
): Record<string, { step: number; accuracy: number }> {
  const out: Record<string, { step: number; accuracy: number }> = {};
  for (const m of metrics) {
    for (const [k, v] of Object.entries(m))
      if (k.startsWith(SKILL_PROBE_PREFIX) && typeof v === 'number')
        out[k.slice(SKILL_PROBE_PREFIX.length)] = { step: Number(m.step), accuracy: v };
  }
  return out;
}

/** What a run reports of mastery: each mastered skill beside its trivial baseline, how many skills the probes can show mastered, and what was forgotten. */
export interface MasterySummary {
  /** Each mastered skill's last probe accuracy beside its probe set's trivial baseline. */
  mastery: { skillId: string; accuracy: number; baseline: number }[];
  /**
   * Every masterable skill, mastered or not: its last probe accuracy (null before the first round),
   * its trivial baseline and the bar mastery needs (max(learnAt, baseline + margin)).
   */
  progress: { skillId: string; accuracy: number | null; baseline: number; bar: number; mastered: boolean }[];
  /** How many of the run's skills have a probe set that can show mastery (ProbeSets). */
  skillsMasterable: number;
  /** Skills learned at some probe round of the run, mastered at the end or not. */
  skillsEverLearned: string[];
  /** Forgetting: skills ever learned but not mastered now, and their share of those ever learned (0 when none was). */
  forgotten: { skills: string[]; share: number };
}

/** The autonomous run's summary and the served run's stats both report mastery this way. */
export function masterySummary(mastered: Set<string>, state: MasteryState, sets: ProbeSets): MasterySummary {
  const ever = Object.keys(state.firstLearned).sort();
  const forgotten = ever.filter((id) => !mastered.has(id));
  return {
    mastery: [...mastered].sort().map((skillId) => ({
      skillId,
      accuracy: state.accuracy[skillId] ?? 0,
      baseline: sets.skills[skillId]?.baseline ?? 0,
    })),
    progress: Object.entries(sets.skills)
      .filter(([, p]) => p.masterable)
      .map(([skillId, p]) => ({
        skillId,
        accuracy: state.accuracy[skillId] ?? null,
        baseline: p.baseline,
        bar: masteryBar(p.baseline, sets),
        mastered: mastered.has(skillId),
      })),
    skillsMasterable: Object.values(sets.skills).filter((p) => p.masterable).length,
    skillsEverLearned: ever,
    forgotten: { skills: forgotten, share: ever.length > 0 ? forgotten.length / ever.length : 0 },
  };
}
