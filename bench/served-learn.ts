// bench:served-learn — does a model trained outside cogen learn through `cogen serve`? Per seed
// (drawn at random and printed; `--seeds 1,23` replays): a served run of the default preset (the
// learnability curriculum, the mastery settings unchanged); another run's level-0 tasks, exported in
// the compact view with the served run's probes left out by id, to warm-start the model; then
// examples/trl_curriculum.py (TRL's SFTTrainer, then GRPOTrainer with cogen as dataset, reward and
// probe judge; a small GPT-2 on CPU). The served run's store says what the trainer's model
// mastered, when, and what it knew at the first probe round. Beside it, the built-in solver's
// `cogen run` on the same seed (the peer). Writes bench/results/served-learn.{json,md} after
// every seed, and the served run's curves (`cogen plot`: probe accuracy per skill, each arm's share and solve rate
// of the tasks) to served-learn-SEED-CONTROLLER.png; seeds run in separate processes merge with --merge.
//
//   npm run bench:served-learn [-- --seeds random:1 --minutes 50 (GRPO's wall time) --sft-steps 600 --setup-torch]
//   npx tsx bench/served-learn.ts --seeds S --curriculum uniform --no-peer   (the controller peer: the arm shares without learnability)
//   npx tsx bench/served-learn.ts --merge DIR,DIR [--out bench/results]
//   npx tsx bench/served-learn.ts --reread TMP/cogen-served-learn-PID/SEED [--wall-seconds N] [--minutes M]   (figures again from its stored runs; GRPO's minutes only when given)
// Needs torch, TRL and transformers (bench/torch-venv.ts; not CI).
import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { cogen, startServe, stopChild as stop, warmStartData, type ServeChild } from './served-child.js';
import { median, seedsArg } from './stats.js';
import { torchPython } from './torch-venv.js';

const { values: args } = parseArgs({
  options: {
    seeds: { type: 'string', default: 'random:1' },
    steps: { type: 'string', default: '20000' },
    minutes: { type: 'string' },
    'sft-steps': { type: 'string', default: '600' },
    'source-steps': { type: 'string', default: '30' },
    curriculum: { type: 'string', default: '' },
    trainer: { type: 'string', default: '' },
    'setup-torch': { type: 'boolean', default: false },
    'no-peer': { type: 'boolean', default: false },
    out: { type: 'string', default: 'bench/results' },
    merge: { type: 'string' },
    reread: { type: 'string' },
    'wall-seconds': { type: 'string', default: '0' },
  },
});
const ROOT = join(import.meta.dirname, '..');
/** GRPO's wall time for a seed run here (--minutes, default 50). */
const MINUTES = Number(args.minutes ?? '50');
/** A re-read seed's GRPO minutes only when given: the trainer's summary does not record them. */
const rereadMinutes = args.minutes === undefined ? undefined : Number(args.minutes);
const PRESET = 'default';
/** The default preset's controller (curricula/default.yaml); a seed served by another is a controller peer. */
const PRESET_CONTROLLER = 'learnability';
const controllerName = (r: SeedResult): string => r.controller ?? PRESET_CONTROLLER;

interface SkillState {
  skill: string;
  firstRound: number | null;
  masteredAtFirstRound: boolean;
  firstMastered: number | null;
  masteredAtEnd: boolean;
}
/** A mastered skill's arm (its family at its level): share of the scored tasks in the 50 steps before and after its first mastery. */
interface ArmShare {
  skill: string;
  step: number;
  before: number | null;
  after: number | null;
  /** The share of the scored tasks that exercise the skill itself, before and after (absent in results written before it was recorded). */
  skillBefore?: number | null;
  skillAfter?: number | null;
}
interface SeedResult {
  seed: number;
  /** The served run's controller: the preset's unless --curriculum named another (absent in results written before it was recorded). */
  controller?: string;
  sourceSeed: number;
  warmRows: number;
  grpoSteps: number;
  /** GRPO's wall-time budget (--minutes; absent in results written before it was recorded). */
  grpoMinutes?: number;
  grpoConfig: Record<string, unknown>;
  wallSeconds: number;
  skills: SkillState[];
  mastered: number;
  learnedByGrpo: number;
  peerMastered: number | null;
  armShares: ArmShare[];
}

const serve = (seed: number, runsDir: string, runId: string): Promise<ServeChild> =>
  startServe([
    '--preset',
    PRESET,
    '--seed',
    String(seed),
    '--runs-dir',
    runsDir,
    '--run-id',
    runId,
    ...(args.curriculum ? ['--curriculum', args.curriculum] : []),
  ]);

/** The mastery table of a run (`cogen skills --format json`), the default preset's masterable skills. */
function mastery(
  runsDir: string,
  runId: string,
): { skillId: string; state: string; since: number | null; level: number }[] {
  const table = JSON.parse(cogen(['skills', '--run', runId, '--runs-dir', runsDir, '--format', 'json'])) as {
    skills: { skillId: string; state: string; since: number | null; level: number }[];
  };
  return table.skills
    .filter((s) => s.skillId.startsWith('arith.') || s.skillId.startsWith('logic.'))
    .filter((s) => s.level <= 1);
}

interface ProbeRound {
  round: number;
  per_skill: Record<string, number>;
  events: { skill_id: string; event: 'learned' | 'forgotten' }[];
}

/** Each skill's first learned event (a skill forgotten and learned again keeps its first step), from the run's timeline. */
function firstLearned(runsDir: string, runId: string): Map<string, number> {
  const { events } = JSON.parse(
    cogen(['skills', 'timeline', '--run', runId, '--runs-dir', runsDir, '--format', 'json']),
  ) as { events: { step: number; skillId: string; event: string }[] };
  const out = new Map<string, number>();
  for (const e of events) if (e.event === 'learned' && !out.has(e.skillId)) out.set(e.skillId, e.step);
  return out;
}

function skillStates(runsDir: string, runId: string, rounds: ProbeRound[]): SkillState[] {
  const first = rounds[0];
  const learnedAtFirst = new Set((first?.events ?? []).filter((e) => e.event === 'learned').map((e) => e.skill_id));
  const learned = firstLearned(runsDir, runId);
  return mastery(runsDir, runId).map((s) => ({
    skill: s.skillId,
    firstRound: first?.per_skill[s.skillId] ?? null,
    masteredAtFirstRound: learnedAtFirst.has(s.skillId),
    firstMastered: learned.get(s.skillId) ?? null,
    masteredAtEnd: s.state === 'mastered',
  }));
}

const WINDOW = 50;
/** The warm start's source run: another seed, derived from the served run's so that a replay finds it. */
const sourceSeedOf = (seed: number): number => (seed % 999_983) + 1;

/** The built-in solver's median over the seeds that ran it, or "-" where none did. */
function peerMedian(rows: SeedResult[]): string {
  const ran = rows.flatMap((r) => (r.peerMastered === null ? [] : [r.peerMastered]));
  return ran.length > 0 ? String(median(ran)) : '-';
}

/** A share before → after, with their ratio and whether it at least halved. */
function shareChange(before: number | null, after: number | null): string {
  const text = `${before?.toFixed(3) ?? '-'} → ${after?.toFixed(3) ?? '-'}`;
  if (before === null || after === null || before === 0) return text;
  return `${text} (×${(after / before).toFixed(2)}${after <= before / 2 ? ', halved' : ''})`;
}

/** The curriculum following the trainer: each skill first mastered after step 0, its arm's share of scored tasks just before and after. */
function armShares(runsDir: string, runId: string, skills: SkillState[], levelOf: Map<string, number>): ArmShare[] {
  const db = new Database(join(runsDir, runId, 'run.db'), { readonly: true });
  try {
    // The share of the tasks scored in [from, to) that `where` (an SQL condition on the task t) holds for.
    const shareWhere = (where: string, params: unknown[], from: number, to: number): number | null => {
      const row = db
        .prepare(
          `SELECT COUNT(*) AS n, SUM(${where}) AS k FROM task_scores s JOIN tasks t ON t.id = s.task_id WHERE s.step >= ? AND s.step < ?`,
        )
        .get(...params, from, to) as { n: number; k: number | null };
      return row.n ? (row.k ?? 0) / row.n : null;
    };
    const armShare = (family: string, level: number, from: number, to: number) =>
      shareWhere('t.family = ? AND t.level = ?', [family, level], from, to);
    const skillShare = (skill: string, from: number, to: number) =>
      shareWhere('EXISTS (SELECT 1 FROM json_each(t.skills) WHERE value = ?)', [skill], from, to);
    return skills
      .filter((s) => s.firstMastered !== null && s.firstMastered > 0)
      .map((s) => {
        const [family] = s.skill.split('.') as [string];
        const level = levelOf.get(s.skill) ?? 0;
        const at = s.firstMastered!;
        return {
          skill: s.skill,
          step: at,
          before: armShare(family, level, Math.max(0, at - WINDOW), at),
          after: armShare(family, level, at, at + WINDOW),
          skillBefore: skillShare(s.skill, Math.max(0, at - WINDOW), at),
          skillAfter: skillShare(s.skill, at, at + WINDOW),
        };
      });
  } finally {
    db.close();
  }
}

async function runSeed(seed: number, python: string, dir: string): Promise<SeedResult> {
  const runsDir = join(dir, 'runs');
  const started = Date.now();
  const served = `served-${seed}`;
  const sourceSeed = sourceSeedOf(seed);
  const { url, child } = await serve(seed, runsDir, served);
  try {
    process.stderr.write(
      `seed ${seed}: served run ${served} at ${url}; warm-start source: cogen run --seed ${sourceSeed} --steps ${args['source-steps']}\n`,
    );
    const warm = join(dir, 'warm.jsonl');
    const steps = args['source-steps']!;
    process.stderr.write(warmStartData({ runsDir, preset: PRESET, sourceSeed, steps, served, out: warm }));
    const trainerOut = join(dir, 'trainer');
    const extra = args.trainer ? args.trainer.split(' ') : [];
    const r = spawnSync(
      python,
      [
        join(ROOT, 'examples/trl_curriculum.py'),
        '--url',
        url,
        '--warm',
        warm,
        '--sft-steps',
        args['sft-steps']!,
        '--steps',
        args.steps!,
        '--minutes',
        String(MINUTES),
        '--seed',
        String(seed),
        '--out',
        trainerOut,
        ...extra,
      ],
      { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] },
    );
    if (r.status !== 0) throw new Error(`examples/trl_curriculum.py exited with ${r.status}`);
    await stop(child);
    if (!args['no-peer'])
      cogen(['run', '--preset', PRESET, '--seed', String(seed), '--runs-dir', runsDir, '--run-id', `builtin-${seed}`]);
    mkdirSync(args.out!, { recursive: true });
    const picture = join(args.out!, `served-learn-${seed}-${args.curriculum || PRESET_CONTROLLER}.png`);
    process.stderr.write(cogen(['plot', '--run', served, '--runs-dir', runsDir, '--out', picture]));
    return readSeed(seed, dir, Math.round((Date.now() - started) / 1000), MINUTES);
  } finally {
    await stop(child);
  }
}

/** The served run's controller, from the config its store keeps. */
function controllerOf(runsDir: string, runId: string): string {
  const db = new Database(join(runsDir, runId, 'run.db'), { readonly: true });
  try {
    const row = db.prepare("SELECT value FROM meta WHERE key = 'config'").get() as { value: string };
    return (JSON.parse(row.value) as { curriculum: { controller: string } }).curriculum.controller;
  } finally {
    db.close();
  }
}

/** A seed's figures, read from what its runs stored (the served run, the trainer's summary, the built-in peer's run when there is one). */
function readSeed(seed: number, dir: string, wallSeconds: number, grpoMinutes: number | undefined): SeedResult {
  const runsDir = join(dir, 'runs');
  const served = `served-${seed}`;
  const summary = JSON.parse(readFileSync(join(dir, 'trainer', 'summary.json'), 'utf8')) as {
    probe_rounds: ProbeRound[];
    grpo_config: Record<string, unknown>;
    grpo_steps: number;
    warm_start?: { rows: number };
  };
  const skills = skillStates(runsDir, served, summary.probe_rounds);
  const peer = existsSync(join(runsDir, `builtin-${seed}`)) ? mastery(runsDir, `builtin-${seed}`) : null;
  return {
    seed,
    controller: controllerOf(runsDir, served),
    sourceSeed: sourceSeedOf(seed),
    warmRows: summary.warm_start?.rows ?? 0,
    grpoSteps: summary.grpo_steps,
    ...(grpoMinutes === undefined ? {} : { grpoMinutes }),
    grpoConfig: summary.grpo_config,
    wallSeconds,
    skills,
    mastered: skills.filter((s) => s.masteredAtEnd).length,
    learnedByGrpo: skills.filter((s) => s.masteredAtEnd && !s.masteredAtFirstRound).length,
    peerMastered: peer && peer.filter((s) => s.state === 'mastered').length,
    armShares: armShares(runsDir, served, skills, new Map(mastery(runsDir, served).map((m) => [m.skillId, m.level]))),
  };
}

function report(rows: SeedResult[]): string {
  const judged = rows.filter((r) => controllerName(r) === PRESET_CONTROLLER);
  const lines = [
    '# bench:served-learn',
    '',
    `A GPT-2 (examples/trl_curriculum.py) trained by TRL on CPU through \`cogen serve --preset ${PRESET}\`; peer: the built-in solver's \`cogen run\` on the same seed. Seeds: ${rows.map((r) => r.seed).join(', ')}.`,
    '',
    '| seed | controller | mastered at the end | of them not mastered at the first probe round | built-in solver (peer) | GRPO steps (minutes) | wall s | skills (first round → first mastered step) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| ${r.seed} | ${controllerName(r)} | ${r.mastered} | ${r.learnedByGrpo} | ${r.peerMastered ?? '-'} | ${r.grpoSteps} (${r.grpoMinutes ?? '-'}) | ${r.wallSeconds} | ${r.skills.map((s) => `${s.skill} ${s.firstRound?.toFixed(2) ?? '-'}→${s.firstMastered ?? '-'}`).join(', ')} |`,
    ),
    '',
    `Median over the seeds served by the preset's controller (${judged.map((r) => r.seed).join(', ')}): mastered ${median(judged.map((r) => r.mastered))}; learned by GRPO ${median(judged.map((r) => r.learnedByGrpo))}; peer ${peerMedian(judged)}.`,
    `GRPOConfig: ${JSON.stringify(rows[0]?.grpoConfig ?? {})}`,
    '',
    `The curriculum following the trainer: a skill's arm's share of the scored tasks in the ${WINDOW} steps before its first mastery → the ${WINDOW} after, and the share of the tasks that exercise the skill itself (skills mastered at the first probe round have no before).`,
    '',
    ...rows.flatMap((r) =>
      r.armShares.map(
        (a) =>
          `- seed ${r.seed} (${controllerName(r)}), ${a.skill} at step ${a.step}: arm ${shareChange(a.before, a.after)}` +
          (a.skillBefore === undefined ? '' : `; skill ${shareChange(a.skillBefore, a.skillAfter ?? null)}`),
      ),
    ),
  ];
  return lines.join('\n') + '\n';
}

function write(rows: SeedResult[], seedsDrawn: boolean): void {
  mkdirSync(args.out!, { recursive: true });
  writeFileSync(
    join(args.out!, 'served-learn.json'),
    JSON.stringify({ preset: PRESET, seedsDrawn, seeds: rows }, null, 1) + '\n',
  );
  writeFileSync(join(args.out!, 'served-learn.md'), report(rows));
}

async function main(): Promise<void> {
  if (args.reread) {
    // DIR of one seed (…/cogen-served-learn-PID/SEED): its figures again from the stored runs.
    const rows = [readSeed(Number(basename(args.reread)), args.reread, Number(args['wall-seconds']), rereadMinutes)];
    write(rows, true);
    process.stdout.write(report(rows));
    return;
  }
  if (args.merge) {
    const rows = args.merge
      .split(',')
      .flatMap(
        (d) => (JSON.parse(readFileSync(join(d, 'served-learn.json'), 'utf8')) as { seeds: SeedResult[] }).seeds,
      );
    write(rows, true);
    process.stdout.write(report(rows));
    return;
  }
  const py = torchPython(args['setup-torch']);
  if ('error' in py) throw new Error(py.error);
  const { seeds, drawn } = seedsArg(args.seeds!);
  process.stderr.write(`bench:served-learn: seeds (${drawn ? 'drawn at random' : 'given'}) ${seeds.join(',')}\n`);
  const rows: SeedResult[] = [];
  for (const seed of seeds) {
    rows.push(await runSeed(seed, py.python, join(tmpdir(), `cogen-served-learn-${process.pid}`, String(seed))));
    write(rows, drawn);
  }
  process.stdout.write(report(rows));
}

main().catch((e: Error) => {
  process.stderr.write(`bench:served-learn: ${e.message}\n`);
  process.exit(1);
});
