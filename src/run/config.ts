// Run configuration and presets (docs/DESIGN.md, "Conventions"): YAML presets in curricula/,
// validated with zod; each room owns the schema of its own section and this file composes them.
import { readFileSync, readdirSync, existsSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { curriculumConfigSchema } from '../../curricula/index.js';
import { sandboxConfigSchema } from '../../sandbox/config.js';
import { agentsConfigSchema } from '../agents/config.js';
import { proposerConfigSchema } from '../../proposers/config.js';
import { rewardConfigSchema } from './training-reward.js';
import { serveConfigSchema } from './serve-config.js';
import { solverConfigSchema } from '../solver/config.js';
import { CODE_TASK_TYPES, TASK_TYPES } from '../../core/task.js';
import { ENV_KINDS } from '../../envs/index.js';

export class ConfigError extends Error {}

export const PRESETS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'curricula');

const graphSchema = z
  .object({
    kind: z.enum(['embedded', 'neo4j']).default('embedded'),
    uri: z.string().optional(),
    user: z.string().optional(),
    password: z.string().optional(),
    database: z.string().optional(),
    /** Events per write batch when draining the outbox into Neo4j. */
    batchSize: z.number().int().positive().default(500),
  })
  .strict();

export const runConfigSchema = z
  .object({
    name: z.string().default('custom'),
    description: z.string().default(''),
    seed: z.number().int().nonnegative().default(0),
    /** Solver steps (one GRPO update each). */
    steps: z.number().int().positive(),
    /** B: tasks per step. */
    batch: z.number().int().positive().default(8),
    /** G: answers sampled per task. */
    group: z.number().int().min(2).default(8),
    /** Task families to propose from (ids of generators/). */
    families: z.array(z.string()).min(1),
    /**
     * Highest level the curriculum may reach (levels 0 … maxLevel). Null or omitted: open, as far as
     * each family goes (docs/levels.md): the native families' levels past their tables are reached by
     * the level-frontier controller; the other controllers pick among the tabled levels.
     */
    maxLevel: z.number().int().min(0).nullable().default(null),
    types: z
      .array(z.enum(TASK_TYPES))
      .min(1)
      .default([...CODE_TASK_TYPES]),
    /**
     * Environment kinds (envs/) the curriculum may pick beside the task types: each family × level ×
     * kind is an arm, played by the built-in solver over several turns (src/run/env-arms.ts). None by default.
     */
    environments: z.array(z.enum(ENV_KINDS)).default([]),
    curriculum: curriculumConfigSchema.default(curriculumConfigSchema.parse({})),
    solver: solverConfigSchema.default(solverConfigSchema.parse({})),
    /** Reward shaping for the policy update (src/run/training-reward.ts); the recorded rewards stay exact. */
    reward: rewardConfigSchema.prefault({}),
    probes: z
      .object({
        /** Evaluate mastery every K steps (and at the last step). */
        every: z.number().int().positive().default(5),
        /**
         * Held-out tasks per arm (family, level, type), at least. Each skill also gets the probes
         * its mastery needs (minProbes in curricula/mastery.ts), balanced against trivial policies
         * (src/run/probes.ts): an arm's probes are shared by several skills, so no per-arm count can
         * promise a skill its share.
         */
        perArm: z.number().int().positive().default(4),
      })
      .strict()
      .prefault({}),
    sandbox: sandboxConfigSchema,
    /** Checkpoint every N steps (and at the end). */
    checkpointEvery: z.number().int().positive().default(10),
    graph: graphSchema.default(graphSchema.parse({})),
    /** LLM agents (LangChain): a proposer for a share of fresh tasks, and/or a solver under evaluation. */
    agents: agentsConfigSchema.prefault({}),
    /** `cogen serve`: time-to-live of sampled tasks and the limits on requests. */
    serve: serveConfigSchema.prefault({}),
    /**
     * Proposers that learn (proposers/): `learned` samples the grammar's choices from preferences
     * trained on the learnability of its tasks. Absent (the default) leaves the config as it was.
     */
    proposer: proposerConfigSchema.optional(),
  })
  .strict();

export type RunConfig = z.infer<typeof runConfigSchema>;

/** Formats zod issues as "field: value — reason" lines, naming the field, the value and what was expected. */
export function formatIssues(error: z.ZodError, input: unknown): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.join('.') || '(root)';
      let value: unknown = input;
      for (const key of issue.path)
        value =
          value && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[key as PropertyKey] : undefined;
      const shown = value === undefined ? 'missing' : JSON.stringify(value);
      return `${path}: ${shown} — ${issue.message}`;
    })
    .join('; ');
}

/**
 * Fields a preset may no longer set, with why. A new preset that sets one is refused; a config read
 * back from an existing run store (`--resume`) drops it with a note, so older runs still resume.
 */
export const RETIRED_FIELDS: readonly { path: readonly string[]; why: string }[] = [
  { path: ['solver', 'optim', 'totalSteps'], why: "the learning-rate schedule always spans the run's `steps`" },
];

/** A copy of a parsed YAML/JSON config without its retired fields, and which it had. */
function dropRetired(input: unknown): { config: unknown; dropped: { field: string; why: string }[] } {
  if (input === null || typeof input !== 'object') return { config: input, dropped: [] };
  const config = structuredClone(input) as Record<string, unknown>;
  const dropped: { field: string; why: string }[] = [];
  for (const { path, why } of RETIRED_FIELDS) {
    let at: unknown = config;
    for (const key of path.slice(0, -1))
      at = at && typeof at === 'object' ? (at as Record<string, unknown>)[key] : undefined;
    const last = path[path.length - 1]!;
    if (at && typeof at === 'object' && Object.prototype.hasOwnProperty.call(at, last)) {
      delete (at as Record<string, unknown>)[last];
      dropped.push({ field: path.join('.'), why });
    }
  }
  return { config, dropped };
}

export interface ParseOptions {
  /** The config comes from an existing run store: retired fields are dropped, each with a note. */
  stored?: boolean;
  note?: (line: string) => void;
}

export function parseConfig(raw: unknown, source: string, opts: ParseOptions = {}): RunConfig {
  const { config: input, dropped } = dropRetired(raw);
  for (const d of dropped) {
    if (!opts.stored) throw new ConfigError(`invalid preset ${source}: ${d.field} is retired (${d.why}); remove it`);
    opts.note?.(`note: the config ${source} sets ${d.field}, which is retired (${d.why}); it is ignored`);
  }
  const result = runConfigSchema.safeParse(input);
  if (!result.success) throw new ConfigError(`invalid preset ${source}: ${formatIssues(result.error, input)}`);
  return result.data;
}

export function listPresets(): { name: string; description: string; path: string }[] {
  return readdirSync(PRESETS_DIR)
    .filter((f) => f.endsWith('.yaml') || f.endsWith('.yml'))
    .sort()
    .map((f) => {
      const path = join(PRESETS_DIR, f);
      const raw = parseYaml(readFileSync(path, 'utf8')) as { description?: string } | null;
      return { name: basename(f).replace(/\.ya?ml$/, ''), description: raw?.description ?? '', path };
    });
}

/** Loads a preset by name (from curricula/) or by path to a YAML file, then applies overrides. */
export function loadPreset(nameOrPath: string, overrides: Record<string, unknown> = {}): RunConfig {
  const isPath = nameOrPath.includes('/') || nameOrPath.endsWith('.yaml') || nameOrPath.endsWith('.yml');
  const path = isPath ? resolve(nameOrPath) : join(PRESETS_DIR, `${nameOrPath}.yaml`);
  if (!existsSync(path)) {
    const known = listPresets()
      .map((p) => p.name)
      .join(', ');
    throw new ConfigError(
      isPath ? `preset file not found: ${path}` : `unknown preset "${nameOrPath}" (known: ${known})`,
    );
  }
  let raw: unknown;
  try {
    raw = parseYaml(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new ConfigError(`preset ${path} is not valid YAML: ${(e as Error).message.split('\n')[0]}`);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw new ConfigError(`preset ${path} must be a YAML mapping`);
  const merged = deepMerge(raw as Record<string, unknown>, overrides);
  if (merged.name === undefined) merged.name = basename(path).replace(/\.ya?ml$/, '');
  return parseConfig(merged, isPath ? path : `"${nameOrPath}"`);
}

function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) continue;
    const b = out[k];
    out[k] =
      v && typeof v === 'object' && !Array.isArray(v) && b && typeof b === 'object' && !Array.isArray(b)
        ? deepMerge(b as Record<string, unknown>, v as Record<string, unknown>)
        : v;
  }
  return out;
}
