// A run's training curves and curriculum heat map, read from its run store's metrics and scores
// (SELECTs only): the metric rows, the charts they are grouped into, and the tasks scored per arm.
import type Database from 'better-sqlite3';
import { LEVEL_PREFIX, OLD_LEVEL_PREFIX, PASSED_PREFIX, SKILL_PROBE_PREFIX } from '../run/index.js';
import { hasTable } from './runs.js';

export type MetricRow = Record<string, number | string | null>;

/** Every metrics row in step order, with `tasksPerSec` added where the step's time (`ms`) is known. */
export function metricsOf(db: Database.Database | null, afterStep = 0): MetricRow[] {
  if (!db || !hasTable(db, 'metrics')) return [];
  const rows = (
    db.prepare('SELECT step, data FROM metrics WHERE step > ? ORDER BY step').all(afterStep) as {
      step: number;
      data: string;
    }[]
  ).map((r): MetricRow => ({ ...(JSON.parse(r.data) as MetricRow), step: r.step }));
  const served = new Map(
    (
      db.prepare('SELECT step, COUNT(*) n FROM task_scores WHERE step > ? GROUP BY step').all(afterStep) as {
        step: number;
        n: number;
      }[]
    ).map((r) => [r.step, r.n]),
  );
  for (const r of rows) {
    const ms = r.ms;
    const n = served.get(r.step as number);
    if (typeof ms === 'number' && ms > 0 && n) r.tasksPerSec = n / (ms / 1000);
  }
  addArmCurves(db, rows, afterStep);
  return rows;
}

/** Steps over which the per-arm curves are taken: what the curriculum served lately, not at one step. */
export const ARM_WINDOW = 50;

interface ArmStep {
  step: number;
  arm: string;
  /** tasks scored */
  n: number;
  solved: number;
  attempts: number;
}

/**
 * Per arm (family/level/type), on every row, over the tasks scored in the last ARM_WINDOW steps up
 * to it: `share.<arm>`, the arm's share of them, and `solve.<arm>`, the share of its answers that
 * solved them (absent while the arm had none).
 */
function addArmCurves(db: Database.Database, rows: MetricRow[], afterStep: number): void {
  if (rows.length === 0 || !hasTable(db, 'task_scores') || !hasTable(db, 'tasks')) return;
  const perStep = db
    .prepare(
      `SELECT s.step step, t.family || '/' || t.level || '/' || t.type arm, COUNT(*) n,
         SUM(s.solved) solved, SUM(s.attempts) attempts
       FROM task_scores s JOIN tasks t ON t.id = s.task_id WHERE s.step > ? GROUP BY s.step, arm ORDER BY s.step`,
    )
    .all(afterStep - ARM_WINDOW) as ArmStep[];
  const arms = [...new Set(perStep.map((c) => c.arm))];
  const sum = (xs: ArmStep[], k: 'n' | 'solved' | 'attempts') => xs.reduce((s, c) => s + c[k], 0);
  let i = 0;
  const inWindow: ArmStep[] = [];
  for (const r of rows) {
    const step = r.step as number;
    while (i < perStep.length && perStep[i]!.step <= step) inWindow.push(perStep[i++]!);
    while (inWindow.length > 0 && inWindow[0]!.step <= step - ARM_WINDOW) inWindow.shift();
    const total = sum(inWindow, 'n');
    if (total === 0) continue;
    for (const arm of arms) {
      const mine = inWindow.filter((c) => c.arm === arm);
      r[`share.${arm}`] = sum(mine, 'n') / total;
      const attempts = sum(mine, 'attempts');
      if (attempts > 0) r[`solve.${arm}`] = sum(mine, 'solved') / attempts;
    }
  }
}

/** The charts, each a list of metric keys (those a run lacks are left out; a chart with none is not drawn). */
export const CURVE_GROUPS: { id: string; title: string; keys: (keys: string[]) => string[] }[] = [
  {
    id: 'reward',
    title: 'Reward and solve rate',
    keys: (k) => ['meanReward', 'solveRate', 'learnability'].filter((x) => k.includes(x)),
  },
  {
    id: 'probe',
    title: 'Held-out probe accuracy',
    keys: (k) => ['probeAccuracy', ...k.filter((x) => x.startsWith('probe.')).sort()].filter((x) => k.includes(x)),
  },
  { id: 'entropy', title: 'Entropy', keys: (k) => ['entropy'].filter((x) => k.includes(x)) },
  { id: 'kl', title: 'KL', keys: (k) => ['kl'].filter((x) => k.includes(x)) },
  { id: 'lr', title: 'Learning rate', keys: (k) => ['lr'].filter((x) => k.includes(x)) },
  { id: 'throughput', title: 'Tasks/s', keys: (k) => ['tasksPerSec'].filter((x) => k.includes(x)) },
  {
    id: 'optim',
    title: 'Loss and gradient norm',
    keys: (k) => ['loss', 'gradNorm', 'clipFraction'].filter((x) => k.includes(x)),
  },
  {
    id: 'skills',
    title: 'Held-out probe accuracy per skill',
    keys: (k) => k.filter((x) => x.startsWith(SKILL_PROBE_PREFIX)).sort(),
  },
  {
    id: 'shares',
    title: `Share of scored tasks per arm (last ${ARM_WINDOW} steps)`,
    keys: (k) => k.filter((x) => x.startsWith('share.')).sort(),
  },
  {
    id: 'solve',
    title: `Solve rate per arm (last ${ARM_WINDOW} steps)`,
    keys: (k) => k.filter((x) => x.startsWith('solve.')).sort(),
  },
  {
    id: 'curriculum',
    title: 'Curriculum level and skills',
    keys: (k) => ['meanLevel', 'skillsMastered'].filter((x) => k.includes(x)),
  },
  // The climb (docs/levels.md): each family's highest level passed, the level-frontier controller's h
  // per family × type, and each level's held-out accuracy (`eval.<family>/<d>`: runs made before every
  // level had a set, above the tables only).
  {
    id: 'passed',
    title: 'Highest level passed per family (−1: none)',
    keys: (k) => k.filter((x) => x.startsWith(PASSED_PREFIX)).sort(),
  },
  {
    id: 'frontier',
    title: 'Level frontier h per family × type',
    keys: (k) => k.filter((x) => x.startsWith('frontier.')).sort(),
  },
  {
    id: 'levels',
    title: 'Held-out accuracy per family and level',
    keys: (k) => k.filter((x) => x.startsWith(LEVEL_PREFIX) || x.startsWith(OLD_LEVEL_PREFIX)).sort(byFamilyThenLevel),
  },
];

/** `level.<family>/<level>` (or `eval.…`) keys by family, then by level as a number (10 after 9). */
function byFamilyThenLevel(a: string, b: string): number {
  const [fa, la] = a.split('/');
  const [fb, lb] = b.split('/');
  return fa!.localeCompare(fb!) || Number(la) - Number(lb);
}

export interface Curves {
  steps: number[];
  charts: { id: string; title: string; keys: string[]; values: (number | null)[][] }[];
}

/** The metrics as chart series: for each chart, one array per key, aligned with `steps` (null where a step lacks it). */
export function curvesOf(rows: MetricRow[]): Curves {
  const keys = [
    ...new Set(rows.flatMap((r) => Object.keys(r).filter((k) => k !== 'step' && typeof r[k] === 'number'))),
  ];
  const steps = rows.map((r) => r.step as number);
  const charts = CURVE_GROUPS.map((g) => ({ id: g.id, title: g.title, keys: g.keys(keys) }))
    .filter((g) => g.keys.length > 0)
    .map((g) => ({
      ...g,
      values: g.keys.map((k) => rows.map((r) => (typeof r[k] === 'number' ? (r[k] as number) : null))),
    }));
  return { steps, charts };
}

export interface Heat {
  steps: number[];
  /** family/level/type */
  arms: string[];
  /** cells[arm][stepIndex] = tasks of that arm scored at that step */
  cells: number[][];
}

/** Which family × level × type the curriculum served at each step (tasks scored per step). */
export function heatOf(db: Database.Database | null): Heat {
  if (!db || !hasTable(db, 'task_scores')) return { steps: [], arms: [], cells: [] };
  const rows = db
    .prepare(
      `SELECT s.step step, t.family || '/' || t.level || '/' || t.type arm, COUNT(*) n
       FROM task_scores s JOIN tasks t ON t.id = s.task_id GROUP BY s.step, arm ORDER BY s.step`,
    )
    .all() as { step: number; arm: string; n: number }[];
  const steps = [...new Set(rows.map((r) => r.step))].sort((a, b) => a - b);
  const arms = [...new Set(rows.map((r) => r.arm))].sort((a, b) => {
    const [fa, la, ta] = a.split('/');
    const [fb, lb, tb] = b.split('/');
    return fa!.localeCompare(fb!) || Number(la) - Number(lb) || ta!.localeCompare(tb!);
  });
  const si = new Map(steps.map((s, i) => [s, i]));
  const ai = new Map(arms.map((a, i) => [a, i]));
  const cells = arms.map(() => steps.map(() => 0));
  for (const r of rows) cells[ai.get(r.arm)!]![si.get(r.step)!] = r.n;
  return { steps, arms, cells };
}
