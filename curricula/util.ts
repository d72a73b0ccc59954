// Small helpers shared by the controllers: weighted sampling, softmax, arm bookkeeping.
import type { Rng } from '../core/rng.js';
import type { Skill } from '../core/task.js';
import { armKey, type Arm, type Pick, type SkillArms } from './types.js';
import { mean } from '../core/stats.js';

/** Index drawn with probability weights[i] / Σ weights; uniform when the weights carry no mass. */
export function sampleIndex(weights: readonly number[], rng: Rng): number {
  if (weights.length === 0) throw new Error('sampleIndex: no weights');
  let total = 0;
  for (const w of weights) if (Number.isFinite(w) && w > 0) total += w;
  const u = rng.next();
  if (!(total > 0)) return Math.min(weights.length - 1, Math.floor(u * weights.length));
  let x = u * total;
  let last = 0;
  for (let i = 0; i < weights.length; i++) {
    const w = weights[i]!;
    if (!(Number.isFinite(w) && w > 0)) continue;
    last = i;
    x -= w;
    if (x < 0) return i;
  }
  return last; // rounding
}

/** Normalised probabilities from non-negative weights (uniform when they carry no mass). */
export function normalise(weights: readonly number[]): number[] {
  let total = 0;
  for (const w of weights) if (Number.isFinite(w) && w > 0) total += w;
  if (!(total > 0)) return weights.map(() => 1 / weights.length);
  return weights.map((w) => (Number.isFinite(w) && w > 0 ? w / total : 0));
}

/** softmax(values / tau), computed stably. */
export function softmax(values: readonly number[], tau: number): number[] {
  if (values.length === 0) return [];
  const t = tau > 0 ? tau : 1e-9;
  let max = -Infinity;
  for (const v of values) max = Math.max(max, v / t);
  const e = values.map((v) => Math.exp(v / t - max));
  return normalise(e);
}

/** Least-squares slope of ys against their indices 0…n−1 (0 with fewer than two points). */
export function slope(ys: readonly number[]): number {
  const n = ys.length;
  if (n < 2) return 0;
  const xm = (n - 1) / 2;
  const ym = mean(ys);
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (i - xm) * (ys[i]! - ym);
    den += (i - xm) * (i - xm);
  }
  return num / den;
}

/** Appends to a bounded window (oldest dropped first). Mutates and returns `xs`. */
export function pushWindow<T>(xs: T[], x: T, size: number): T[] {
  xs.push(x);
  while (xs.length > Math.max(1, size)) xs.shift();
  return xs;
}

export const newPick = (arm: Arm): Pick => ({ kind: 'new', arm: { ...arm } });

/** n draws with replacement from `arms` with the given weights. */
export function sampleArms(arms: readonly Arm[], weights: readonly number[], n: number, rng: Rng): Pick[] {
  const out: Pick[] = [];
  if (arms.length === 0 || n <= 0) return out;
  for (let i = 0; i < n; i++) out.push(newPick(arms[sampleIndex(weights, rng)]!));
  return out;
}

/** Each skill with the arms of its own family and level, where its probes are drawn. */
export function skillArms(skills: readonly Skill[], arms: readonly Arm[]): SkillArms[] {
  return skills.map((s) => ({ skillId: s.id, arms: arms.filter((a) => a.family === s.family && a.level === s.level) }));
}

export function requireArms(arms: readonly Arm[], who: string): void {
  if (arms.length === 0) throw new Error(`${who}: no open arms to pick from`);
}

/** Deep copy through JSON, so state() never hands out live references. */
export const jsonCopy = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;

export function checkState(state: unknown, name: string): Record<string, unknown> {
  if (typeof state !== 'object' || state === null || (state as { name?: unknown }).name !== name) {
    throw new Error(`${name}.restore: not a ${name} controller state`);
  }
  return jsonCopy(state as Record<string, unknown>);
}

export { armKey };
