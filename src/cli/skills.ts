// `cogen skills`: the skill graph of a run (mastery table, frontier, timeline, one skill, a comparison
// of two runs), the whole taxonomy, and `sync` (replay a run's outbox into a graph, e.g. a fresh Neo4j).
import { Command, Option } from 'commander';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { formatTaxonomy } from '../../generators/index.js';
import { ENV_SKILLS } from '../../envs/index.js';
import { bridgedFamilies, formatBridgedTable, loadCatalogue } from '../../bridges/index.js';
import {
  neo4jOptionsFromEnv,
  openSkillGraph,
  renderSkills,
  replayAll,
  VIEW_FORMATS,
  type ViewFormat,
} from '../../graphs/index.js';
import type { ProbeSets, SkillGraph } from '../../graphs/index.js';
import { UserError } from '../../core/errors.js';
import { type RunStore, climbOf, frontierHistory, latestSkillProbes, levelsPassedOf } from '../run/index.js';
import { openRun, runsDirOption } from './shared.js';

const VIEWS = ['mastery', 'frontier', 'timeline', 'show', 'sync'] as const;

export function skillsCommand(program: Command): void {
  program
    .command('skills')
    .description('inspect the skill graph: mastery table (default), frontier, timeline, show <skill>, sync')
    .argument('[view]', `one of ${VIEWS.join(', ')}`, 'mastery')
    .argument('[skill]', 'the skill id, for show')
    .option(
      '--run <id>',
      'the run (repeat to compare two runs; default: the latest run)',
      (v: string, acc: string[]) => [...acc, v],
      [] as string[],
    )
    .option('--taxonomy', 'print the whole skill taxonomy (families, levels, skills, prerequisites)')
    .addOption(new Option('--format <format>', 'output format').choices(VIEW_FORMATS).default('table'))
    .option('--at-step <n>', 'the mastery state as it was at this step', (v: string) => Number(v))
    .addOption(
      new Option('--graph <kind>', 'read from (or sync into) this store')
        .choices(['embedded', 'neo4j'])
        .default('embedded'),
    )
    .option('--neo4j-uri <uri>', 'Bolt URI (or NEO4J_URI)')
    .option('--neo4j-user <user>', 'Neo4j user (or NEO4J_USER); password from NEO4J_PASSWORD')
    .option('--neo4j-database <name>', 'Neo4j database (or NEO4J_DATABASE)')
    .addOption(runsDirOption())
    .action(async (view: string, skill: string | undefined, o) => {
      const format = o.format as ViewFormat;
      if (o.taxonomy) {
        if (format === 'graphml' || format === 'cypher')
          throw new Error(`--taxonomy prints table, json or dot, not ${format}`);
        // With the bridged families the text passes a pipe's buffer: wait until it is handed over,
        // since the CLI exits right after the action.
        await new Promise<void>((resolve, reject) =>
          process.stdout.write(ensureNewline(withBridged(withEnvs(formatTaxonomy(format), format), format)), (e) =>
            e ? reject(e) : resolve(),
          ),
        );
        return;
      }
      if (!(VIEWS as readonly string[]).includes(view))
        throw new UserError(`unknown view "${view}" (one of ${VIEWS.join(', ')})`);
      const runsDir = resolve(o.runsDir);
      const runIds: string[] = o.run.length ? o.run : [latestRun(runsDir)];
      if (runIds.length > 2) throw new UserError('--run may be given once, or twice to compare two runs');

      if (view === 'sync') {
        const target = await openTarget(o, null);
        let total = 0;
        try {
          for (const id of runIds) {
            const store = openRun(runsDir, id);
            try {
              total += await replayAll(store.allEvents(), target);
            } finally {
              store.close();
            }
          }
        } finally {
          await target.close();
        }
        process.stderr.write(`synced ${total} events of ${runIds.join(', ')} into the ${o.graph} skill graph\n`);
        return;
      }

      const store = o.graph === 'embedded' ? openRun(runsDir, runIds[0]!) : null;
      const graph = await openTarget(o, store);
      try {
        if (runIds.length === 2 && o.graph === 'embedded') {
          // Two embedded runs live in two databases: compare by loading the second run's events into the first's view.
          throw new UserError(
            'comparing two runs needs one graph holding both: sync them into Neo4j (--graph neo4j), or use `cogen skills sync`',
          );
        }
        // The run's probe sets live in its run store, beside the graph (runs before them have none).
        const probeSets = readProbeSets(store);
        const metrics = store?.metrics();
        const latest = metrics ? latestSkillProbes(metrics) : undefined;
        const out =
          view === 'show'
            ? await renderSkills(graph, {
                view: 'show',
                skill: required(skill, 'show needs a skill id'),
                runId: runIds[0],
                format,
                probeSets,
              })
            : runIds.length === 2
              ? await renderSkills(graph, {
                  view: 'compare',
                  runIds: [runIds[0]!, runIds[1]!],
                  atStep: o.atStep,
                  format,
                })
              : await renderSkills(graph, {
                  view: view as 'mastery' | 'frontier' | 'timeline',
                  runId: runIds[0],
                  atStep: o.atStep,
                  format,
                  probeSets,
                  latest,
                });
        const climbed = metrics && (view === 'mastery' || view === 'frontier');
        process.stdout.write(ensureNewline(climbed ? withClimb(out, format, metrics) : out));
      } finally {
        await graph.close();
        store?.close();
      }
    });
}

/**
 * A view with the climb added (docs/levels.md): each family's highest level passed now and the step
 * each level was first reached, with the level-frontier controller's h beside it where it runs, then
 * each h and the steps it rose at: a table's closing lines, or a JSON view's `levelsPassed` and
 * `levelFrontier` fields. Runs made before level sets have no `passed.*` metrics, and show none.
 */
function withClimb(view: string, format: ViewFormat, metrics: readonly Record<string, unknown>[]): string {
  const passed = levelsPassedOf(metrics);
  const frontier = frontierHistory(metrics);
  if (format === 'json')
    return JSON.stringify(
      {
        ...(JSON.parse(view) as object),
        ...(Object.keys(passed).length > 0 ? { levelsPassed: passed } : {}),
        ...(frontier ? { levelFrontier: frontier } : {}),
      },
      null,
      2,
    );
  if (format !== 'table') return view;
  const lines = [ensureNewline(view).trimEnd()];
  const climb = climbOf(metrics);
  if (climb.length > 0) {
    const width = Math.max(...climb.map((c) => c.family.length));
    lines.push(
      '',
      "levels passed (the mastery rule on a level's held-out set and on each of the family's skills up to it; docs/levels.md):",
      ...climb.map((c) => {
        const reached = Object.entries(passed[c.family]!.firstReached).map(([d, step]) => `${d}@${step}`);
        const h = Object.entries(c.h).map(([type, h]) => `${type} ${h}`);
        return `  ${c.family.padEnd(width)}  passed ${c.passed < 0 ? '-' : String(c.passed)}${c.since === null ? '' : ` since step ${c.since}`}  (first reached: ${reached.join(' ') || 'none yet'})${h.length > 0 ? `  h ${h.join(', ')}` : ''}`;
      }),
    );
  }
  if (frontier) {
    const width = Math.max(...Object.keys(frontier).map((k) => k.length));
    lines.push(
      '',
      "level frontier (level-frontier controller; docs/levels.md): each family × type's upper level h now and as it rose",
      ...Object.entries(frontier).map(
        ([k, e]) =>
          `  ${k.padEnd(width)}  h ${String(e.now).padStart(3)}  (h at step: ${e.rises
            .slice(-12)
            .map(([s, h]) => `${h}@${s}`)
            .join(' ')})`,
      ),
    );
  }
  return lines.join('\n');
}

async function openTarget(o: Record<string, string | undefined>, store: RunStore | null): Promise<SkillGraph> {
  if (o.graph === 'neo4j') {
    const env = neo4jOptionsFromEnv();
    const uri = o.neo4jUri ?? env?.uri;
    if (!uri) throw new UserError('--graph neo4j needs --neo4j-uri or NEO4J_URI');
    return openSkillGraph({
      kind: 'neo4j',
      uri,
      user: o.neo4jUser ?? env?.user ?? 'neo4j',
      password: env?.password ?? process.env.NEO4J_PASSWORD ?? '',
      database: o.neo4jDatabase ?? env?.database,
    });
  }
  if (o.graph !== 'embedded') throw new UserError(`unknown graph "${o.graph}" (embedded or neo4j)`);
  if (!store) throw new UserError('the embedded graph lives in a run: give --run <id>');
  return openSkillGraph({ kind: 'embedded', db: store.db });
}

function readProbeSets(store: RunStore | null): ProbeSets | undefined {
  const text = store?.getMeta('probePlan');
  return text ? (JSON.parse(text) as ProbeSets) : undefined;
}

function latestRun(runsDir: string): string {
  const ids = existsSync(runsDir) ? readdirSync(runsDir).filter((d) => existsSync(join(runsDir, d, 'run.db'))) : [];
  if (ids.length === 0) throw new UserError(`no runs in ${runsDir}: start one with \`cogen run\`, or give --run <id>`);
  return ids.sort((a, b) => statSync(join(runsDir, a)).mtimeMs - statSync(join(runsDir, b)).mtimeMs).at(-1)!;
}

function required<T>(v: T | undefined, message: string): T {
  if (v === undefined) throw new UserError(message);
  return v;
}

const ensureNewline = (s: string) => (s.endsWith('\n') ? s : `${s}\n`);

/**
 * The taxonomy with the environment skills added (envs/ builds on generators/, so the generators'
 * taxonomy cannot list them itself): one `env.<kind>` skill per environment kind, at level 0, with
 * its prerequisites among the code skills.
 */
function withEnvs(native: string, format: string): string {
  if (format === 'json') {
    const t = JSON.parse(native) as { families: unknown[]; skills: unknown[]; roots: string[] };
    t.families.push({
      id: 'env',
      name: 'agentic environments',
      description: 'multi-turn tool-using environments made from the code families (envs/): probe, repair, search',
      levels: 1,
      knobs: ["the source family's level sets the program and the budgets"],
      skills: ENV_SKILLS.map((s) => s.id),
    });
    t.skills.push(...ENV_SKILLS);
    return JSON.stringify(t, null, 2);
  }
  if (format === 'dot') {
    const lines = [
      '  subgraph "cluster_env" {',
      '    label="agentic environments";',
      ...ENV_SKILLS.map((s) => `    ${JSON.stringify(s.id)} [label=${JSON.stringify(`${s.name}\n(${s.id}, L0)`)}];`),
      '  }',
    ];
    for (const s of ENV_SKILLS)
      for (const r of s.requires) lines.push(`  ${JSON.stringify(s.id)} -> ${JSON.stringify(r)} [label="requires"];`);
    return native.replace(/\}\s*$/, `${lines.join('\n')}\n}`);
  }
  const rows = [
    ['SKILL', 'LEVEL', 'REQUIRES', 'NAME'],
    ...ENV_SKILLS.map((s) => [s.id, '0', s.requires.join(','), s.name]),
  ];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return [
    native,
    '',
    'agentic environments (envs/; arms of a run with `environments: [...]`):',
    ...rows.map((r) =>
      r
        .map((x, c) => x.padEnd(widths[c]!))
        .join('  ')
        .trimEnd(),
    ),
  ].join('\n');
}

/** The native taxonomy with the bridged Reasoning Gym families added, when the bridge is set up. */
function withBridged(native: string, format: string): string {
  const catalogue = loadCatalogue();
  if (!catalogue) return native;
  const fams = bridgedFamilies(catalogue);
  if (format === 'json') {
    const t = JSON.parse(native) as { families: unknown[]; skills: { id: string }[]; roots: string[] };
    t.families.push(
      ...fams.map(({ id, name, description, levels, knobs, finite, skills }) => ({
        id,
        name,
        description,
        levels,
        knobs,
        growth: [],
        lastLevel: levels - 1,
        finite,
        skills: skills.map((s) => s.id),
      })),
    );
    t.skills.push(...fams.flatMap((f) => f.skills));
    t.roots.push(...fams.flatMap((f) => f.skills.map((s) => s.id)));
    return JSON.stringify(
      { ...t, excluded: catalogue.excluded.map((x) => ({ family: `rg.${x.dataset}`, reason: x.reason })) },
      null,
      2,
    );
  }
  if (format === 'dot') {
    const nodes = fams.flatMap((f) =>
      f.skills.map((s) => `  ${JSON.stringify(s.id)} [label=${JSON.stringify(`${s.name}\n(${s.id}, L0)`)}];`),
    );
    return native.replace(
      /\}\s*$/,
      `  subgraph "cluster_reasoning_gym" {\n    label="Reasoning Gym (bridged)";\n  ${nodes.join('\n  ')}\n  }\n}`,
    );
  }
  return `${native}\n\n${formatBridgedTable(catalogue)}`;
}
