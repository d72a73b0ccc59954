// What several commands of the command line share: the --runs-dir option, opening a stored run, the
// config a run was started with (for --resume), and the number parsers of flags. A bad value is a
// UserError: one line on stderr and exit 1 (src/cli.ts, main).
import { Option } from 'commander';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseConfig, RunStore, type RunConfig } from '../run/index.js';
import { UserError } from '../../core/errors.js';

export const runsDirOption = () =>
  new Option('--runs-dir <dir>', 'where runs live').default('runs').env('COGEN_RUNS_DIR');

/** The skill-graph flags of a command line (`--graph`, `--neo4j-uri`, `--neo4j-user`, `--neo4j-database`). */
export interface GraphFlags {
  graph?: 'embedded' | 'neo4j';
  neo4jUri?: string;
  neo4jUser?: string;
  neo4jDatabase?: string;
}

/**
 * The config and preset a run was started with, for resuming it (ServedRun refuses an autonomous run
 * itself). Graph flags given with --resume replace the stored graph settings: where the skill graph
 * is written is not what the run does, and a graph new to the run drains the outbox from its start
 * (each graph keeps its own cursor, src/run/records/store.ts).
 */
export function storedConfig(runsDir: string, id: string, kind: 'autonomous' | 'served', flags: GraphFlags = {}) {
  const store = openRun(runsDir, id);
  try {
    const served = store.getMeta('kind') === 'served';
    if (served && kind === 'autonomous')
      throw new UserError(`run "${id}" is a served run: go on with cogen serve --resume ${id}`);
    const note = (line: string) => process.stderr.write(`${line}\n`);
    const config = parseConfig(JSON.parse(store.getMeta('config') ?? '{}'), `of run ${id}`, { stored: true, note });
    return { config: { ...config, graph: withGraphFlags(config.graph, flags) }, preset: store.getMeta('preset') ?? '' };
  } finally {
    store.close();
  }
}

export function openRun(runsDir: string, id: string): RunStore {
  const dir = join(runsDir, id);
  if (!existsSync(join(dir, 'run.db')))
    throw new UserError(`unknown run "${id}" (no ${join(dir, 'run.db')}; see cogen runs)`);
  return RunStore.open(dir, { create: false });
}

export function parseFloatArg(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n)) throw new UserError(`expected a number, got "${v}"`);
  return n;
}

export function parseIntArg(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new UserError(`expected a non-negative integer, got "${v}"`);
  return n;
}

function withGraphFlags(graph: RunConfig['graph'], f: GraphFlags): RunConfig['graph'] {
  return {
    ...graph,
    ...(f.graph ? { kind: f.graph } : {}),
    ...(f.neo4jUri ? { uri: f.neo4jUri } : {}),
    ...(f.neo4jUser ? { user: f.neo4jUser } : {}),
    ...(f.neo4jDatabase ? { database: f.neo4jDatabase } : {}),
  };
}
