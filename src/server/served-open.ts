// Opening a served run: a new one, one resumed from its SQLite file (`--resume`), or, with
// `--store postgres://…`, the run a group of replicas shares (docs/scale-out.md): the first replica
// creates it under the run's creation lock, and every later one joins it with the config, probes
// and state the store holds.
import { join } from 'node:path';
import { createController, createGate, createMasteryTracker } from '../../curricula/index.js';
import type { GraphEvent } from '../../graphs/index.js';
import {
  parseConfig,
  type RunConfig,
  probeSets,
  type Probe,
  drawRunProbes,
  learnedProposerOf,
  newRunId,
  openGraphs,
  runEvent,
  sandboxOf,
  taskSpace,
  RunStore,
  refuseExisting,
  RunOpening,
  PgRecords,
  SqliteRecords,
  type ServedRecords,
  TaskArchive,
} from '../run/index.js';
import type { Sandbox } from '../../sandbox/index.js';
import { UserError } from '../../core/errors.js';
import { ServedRun } from './served-run.js';
import { Curriculum, initialState, type ServedState } from './served-state.js';
import { localVerifier, type Verifier } from './verifier.js';
import { strike, type Faults } from './faults.js';

export interface ServedRunOptions {
  runsDir: string;
  preset: string;
  runId?: string;
  resume?: boolean;
  log?: (line: string) => void;
  /** The clock for time-to-live (tests move it). */
  now?: () => number;
  /** `postgres://user@host/db`: the run's records in PostgreSQL, shared by every replica of the run (the password from PGPASSWORD). */
  store?: string;
  /** Who verifies answers (default: this process's sandbox pool). */
  verifier?: Verifier;
  /** Fault points to arm (tests and the chaos bench only). */
  faults?: Faults;
}

/** What a served run refuses in its config, each with why. */
function refuseConfig(config: RunConfig): void {
  if (config.agents.proposer.share > 0 || config.agents.solver.enabled) {
    throw new UserError(
      'cogen serve takes no LLM agents: the trainer is the solver, and LLM proposals are not served yet (set agents.proposer.share to 0)',
    );
  }
  if (config.environments.length > 0)
    throw new UserError(
      'cogen serve takes no `environments` in its config: a trainer plays environments through /reset with `env` and /step (OpenEnv), outside the served curriculum',
    );
  if (config.solver.init)
    throw new UserError(
      "cogen serve takes no `solver.init`: the trainer's model answers a served run, not the built-in solver",
    );
  // Self-play proposes with the built-in solver's own network, which a served run does not have.
  if (config.proposer?.selfPlay.enabled)
    throw new UserError(
      'cogen serve takes no self-play proposer: it proposes with the built-in solver, and the trainer is the solver here (use --proposer learned, or none)',
    );
}

/** The probes a replica joining a PostgreSQL run takes from the store (and the ids their drawing saw). */
interface StoredProbes {
  probes: Probe[];
  seen: string[];
}

/** What a new run's first records are: its meta and its first graph events. */
interface Creation {
  meta: (plan: string, extra?: Record<string, string>) => Record<string, string>;
  events: () => GraphEvent[];
}

function creation(runId: string, preset: string, config: RunConfig): Creation {
  const startedAt = new Date().toISOString();
  return {
    meta: (plan, extra = {}) => ({
      runId,
      kind: 'served',
      preset,
      config: JSON.stringify(config),
      status: 'running',
      startedAt,
      served: JSON.stringify(initialState(config.seed)),
      probePlan: plan,
      ...extra,
    }),
    events: () => [
      { kind: 'skills', skills: taskSpace(config).skills },
      { kind: 'run', runId, preset, config: JSON.stringify(config), startedAt, endedAt: null, status: 'running' },
    ],
  };
}

/** Where a served run's records are, as opened: a new run or not, and (joining a PostgreSQL run) the store's config and probes. */
interface OpenedRecords {
  records: ServedRecords;
  created: boolean;
  config: RunConfig;
  sandbox: Sandbox;
  stored: StoredProbes | null;
}

/** Creates the PostgreSQL run of its replicas under the run's creation lock, or joins it with the config and probes it holds. */
async function openPostgres(
  url: string,
  runId: string,
  dir: string,
  config: RunConfig,
  box: { sandbox: Sandbox },
  made: Creation,
  opening: RunOpening,
  log: (line: string) => void,
  faults?: Faults,
): Promise<OpenedRecords> {
  const sandbox = box.sandbox;
  const pg = await PgRecords.open(url, runId, dir, log);
  opening.add(() => pg.close());
  let stored: StoredProbes | null = null;
  const created = await pg.initialise(async () => {
    strike(faults, 'pauseInCreation', runId);
    const seen = new Set<string>();
    const probes = await drawRunProbes(config, sandbox, seen);
    stored = { probes, seen: [...seen] };
    return { meta: made.meta(probePlan(config, probes), { probes: JSON.stringify(stored) }), events: made.events() };
  });
  if (created) return { records: pg, created, config, sandbox: box.sandbox, stored };
  if ((await pg.getMeta('kind')) !== 'served') throw new UserError(`run "${runId}" in ${pg.where} is not a served run`);
  const own = JSON.stringify(config.sandbox);
  const joined = parseConfig(JSON.parse((await pg.getMeta('config')) ?? '{}'), `of run ${runId}`, {
    stored: true,
    note: log,
  });
  refuseConfig(joined);
  if (JSON.stringify(joined.sandbox) !== own) {
    await sandbox.close();
    box.sandbox = await sandboxOf(joined);
  }
  stored = JSON.parse((await pg.getMeta('probes')) ?? 'null') as StoredProbes | null;
  log(`joining served run ${runId} in ${pg.where} (its config is the store's)`);
  return { records: pg, created, config: joined, sandbox: box.sandbox, stored };
}

/** Opens the run's SQLite file: a new one, or the served run `--resume` names. */
function openSqliteRecords(
  opts: ServedRunOptions,
  runId: string,
  dir: string,
  opening: RunOpening,
): { records: SqliteRecords; created: boolean } {
  if (!opts.resume) refuseExisting(opts.runsDir, runId, `--resume ${runId}`);
  const store = RunStore.open(dir, { create: !opts.resume });
  opening.add(() => store.close());
  if (opts.resume && store.getMeta('kind') !== 'served')
    throw new UserError(`run "${runId}" is not a served run: resume it with cogen run --resume ${runId}`);
  if (!opts.resume) opening.created();
  return { records: new SqliteRecords(store), created: !opts.resume };
}

/** Opens a new served run, resumes one (`resume`), or joins the PostgreSQL run of its replicas (`store`). */
export async function openServedRun(configIn: RunConfig, opts: ServedRunOptions): Promise<ServedRun> {
  const log = opts.log ?? (() => {});
  refuseConfig(configIn);
  if (opts.store && !opts.runId)
    throw new UserError('--store postgres://… needs --run-id: every replica of a run names the same run');
  const runId = opts.runId ?? newRunId(configIn, true);
  const dir = join(opts.runsDir, runId);
  const opening = new RunOpening(dir);
  try {
    // A replica joining a PostgreSQL run remakes its sandbox for the store's config: the box holds the current one.
    const box = { sandbox: await sandboxOf(configIn) };
    opening.add(() => box.sandbox.close());
    const made = creation(runId, opts.preset, configIn);
    const opened: OpenedRecords = opts.store
      ? await openPostgres(opts.store, runId, dir, configIn, box, made, opening, log, opts.faults)
      : { ...openSqliteRecords(opts, runId, dir, opening), config: configIn, sandbox: box.sandbox, stored: null };
    return await assemble(opened, made, opts, runId, opening, log);
  } catch (e) {
    await opening.abandon();
    throw e;
  }
}

/** The served run on its opened records: the curriculum, the probes, the graphs and the verifier. */
async function assemble(
  o: OpenedRecords,
  made: Creation,
  opts: ServedRunOptions,
  runId: string,
  opening: RunOpening,
  log: (line: string) => void,
): Promise<ServedRun> {
  const { records, config, sandbox } = o;
  const graphs = await openGraphs(config, { db: records.graphDb() }, log);
  opening.add(() => Promise.all(graphs.map((g) => g.graph.close())));
  const space = taskSpace(config);
  const controller = createController(config.curriculum, space.arms);
  const mastery = createMasteryTracker(config.curriculum.mastery);
  const seen = new Set<string>(o.stored?.seen ?? []);
  // The same held-out probes as an autonomous run of this config: drawn first, from their own stream
  // (a PostgreSQL run keeps them: a joining replica reads them, as drawing them again takes seconds).
  const probes = o.stored?.probes ?? (await drawRunProbes(config, sandbox, seen));
  const plan = probePlan(config, probes);
  const cur = new Curriculum(
    controller,
    mastery,
    learnedProposerOf(config),
    new TaskArchive(),
    seen,
    initialState(config.seed),
  );
  const sqlite = records.kind === 'sqlite' ? (records as SqliteRecords).store : null;
  if (sqlite) await openSqlite(records as SqliteRecords, cur, { created: o.created, plan, made, runId, log });
  const run = new ServedRun({
    runId,
    config,
    records,
    sandbox,
    verifier: opts.verifier ?? localVerifier(sandbox),
    graphs,
    gate: createGate({ skills: space.skills, armSkills: space.armSkills, enabled: config.curriculum.gating }),
    space,
    probes,
    cur,
    now: opts.now ?? Date.now,
    log,
    resumeHint: sqlite ? `--resume ${runId}` : 'a replica restart',
    faults: opts.faults,
    onClose: async (status, step) => {
      if (!sqlite) return;
      sqlite.setMeta({ status, endedAt: new Date().toISOString() });
      sqlite.appendOutbox(step, [runEvent(sqlite, status)]);
    },
  });
  // A joining replica's memory starts behind the store (version −1): its first change reloads it.
  if (records.kind === 'postgres') cur.invalidate();
  return run;
}

/** Creates or resumes the run in its SQLite file, as a served run always has. */
async function openSqlite(
  records: SqliteRecords,
  cur: Curriculum,
  o: {
    created: boolean;
    plan: string;
    made: Creation;
    runId: string;
    log: (line: string) => void;
  },
): Promise<void> {
  const store = records.store;
  if (o.created) {
    store.setMeta(o.made.meta(o.plan));
    store.appendOutbox(0, [o.made.events()[0]!, runEvent(store, 'running')]);
    return;
  }
  const state = (JSON.parse(store.getMeta('served') ?? 'null') as ServedState | null) ?? cur.state;
  cur.restore(state);
  for (const row of store.tasks()) cur.addTask(row.task, false);
  store.setMeta({ status: 'running', probePlan: o.plan });
  o.log(`resuming served run ${o.runId} at step ${state.step} (${state.groups} groups, ${cur.archive.size} tasks)`);
}

function probePlan(config: RunConfig, probes: Probe[]): string {
  const mastery = createMasteryTracker(config.curriculum.mastery);
  return JSON.stringify(probeSets(probes, taskSpace(config).skills, mastery.opts));
}
