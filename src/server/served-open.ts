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
} from '../run/index.js';
import type { Task } from '../../core/task.js';
import { UserError } from '../../core/errors.js';
import { ServedRun } from './served-run.js';
import { Curriculum, initialState, type ServedState } from './served-state.js';
import { localVerifier, type Verifier } from './verifier.js';

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

/** Opens a new served run, resumes one (`resume`), or joins the PostgreSQL run of its replicas (`store`). */
export async function openServedRun(configIn: RunConfig, opts: ServedRunOptions): Promise<ServedRun> {
  const log = opts.log ?? (() => {});
  refuseConfig(configIn);
  if (opts.store && !opts.runId)
    throw new UserError('--store postgres://… needs --run-id: every replica of a run names the same run');
  const runId = opts.runId ?? newRunId(configIn, true);
  const dir = join(opts.runsDir, runId);
  const opening = new RunOpening(dir);
  let created = false;
  try {
    let records: ServedRecords;
    let config = configIn;
    let stored: StoredProbes | null = null;
    let sandbox = await sandboxOf(config);
    opening.add(() => sandbox.close());
    const startedAt = new Date().toISOString();
    const createMeta = (plan: string, extra: Record<string, string> = {}) => ({
      runId,
      kind: 'served',
      preset: opts.preset,
      config: JSON.stringify(config),
      status: 'running',
      startedAt,
      served: JSON.stringify(initialState(config.seed)),
      probePlan: plan,
      ...extra,
    });
    const createEvents = (): GraphEvent[] => [
      { kind: 'skills', skills: taskSpace(config).skills },
      {
        kind: 'run',
        runId,
        preset: opts.preset,
        config: JSON.stringify(config),
        startedAt,
        endedAt: null,
        status: 'running',
      },
    ];
    if (opts.store) {
      const pg = await PgRecords.open(opts.store, runId, dir, log);
      records = pg;
      opening.add(() => pg.close());
      created = await pg.initialise(async () => {
        const seen = new Set<string>();
        const probes = await drawRunProbes(config, sandbox, seen);
        stored = { probes, seen: [...seen] };
        return {
          meta: createMeta(probePlan(config, probes), { probes: JSON.stringify(stored) }),
          events: createEvents(),
        };
      });
      if (!created) {
        if ((await pg.getMeta('kind')) !== 'served')
          throw new UserError(`run "${runId}" in ${pg.where} is not a served run`);
        const own = JSON.stringify(config.sandbox);
        config = parseConfig(JSON.parse((await pg.getMeta('config')) ?? '{}'), `of run ${runId}`, {
          stored: true,
          note: log,
        });
        refuseConfig(config);
        if (JSON.stringify(config.sandbox) !== own) {
          await sandbox.close();
          sandbox = await sandboxOf(config);
        }
        stored = JSON.parse((await pg.getMeta('probes')) ?? 'null') as StoredProbes | null;
        log(`joining served run ${runId} in ${pg.where} (its config is the store's)`);
      }
    } else {
      if (!opts.resume) refuseExisting(opts.runsDir, runId, `--resume ${runId}`);
      const store = RunStore.open(dir, { create: !opts.resume });
      records = new SqliteRecords(store);
      opening.add(() => store.close());
      if (opts.resume && store.getMeta('kind') !== 'served')
        throw new UserError(`run "${runId}" is not a served run: resume it with cogen run --resume ${runId}`);
      created = !opts.resume;
      if (created) opening.created();
    }
    const graphs = await openGraphs(config, { db: records.graphDb() }, log);
    opening.add(() => Promise.all(graphs.map((g) => g.graph.close())));
    const space = taskSpace(config);
    const controller = createController(config.curriculum, space.arms);
    const mastery = createMasteryTracker(config.curriculum.mastery);
    const learned = learnedProposerOf(config);
    const kept = stored as StoredProbes | null;
    const seen = new Set<string>(kept?.seen ?? []);
    // The same held-out probes as an autonomous run of this config: drawn first, from their own stream
    // (a PostgreSQL run keeps them: a joining replica reads them, as drawing them again takes seconds).
    const probes = kept?.probes ?? (await drawRunProbes(config, sandbox, seen));
    const plan = probePlan(config, probes);
    const archive = new Map<string, Task>();
    const cur = new Curriculum(controller, mastery, learned, archive, seen, initialState(config.seed));
    if (records.kind === 'sqlite')
      await openSqlite(records as SqliteRecords, cur, { created, plan, createMeta, createEvents, runId, log });
    const sqlite = records.kind === 'sqlite' ? (records as SqliteRecords).store : null;
    const verifier = opts.verifier ?? localVerifier(sandbox);
    const run = new ServedRun({
      runId,
      config,
      records,
      sandbox,
      verifier,
      graphs,
      gate: createGate({ skills: space.skills, armSkills: space.armSkills, enabled: config.curriculum.gating }),
      space,
      probes,
      cur,
      now: opts.now ?? Date.now,
      log,
      resumeHint: sqlite ? `--resume ${runId}` : 'a replica restart',
      onClose: async (status, step) => {
        if (!sqlite) return;
        sqlite.setMeta({ status, endedAt: new Date().toISOString() });
        sqlite.appendOutbox(step, [runEvent(sqlite, status)]);
      },
    });
    // A joining replica's memory starts behind the store (version −1): its first change reloads it.
    if (records.kind === 'postgres') cur.invalidate();
    return run;
  } catch (e) {
    await opening.abandon();
    throw e;
  }
}

/** Creates or resumes the run in its SQLite file, as a served run always has. */
async function openSqlite(
  records: SqliteRecords,
  cur: Curriculum,
  o: {
    created: boolean;
    plan: string;
    createMeta: (plan: string) => Record<string, string>;
    createEvents: () => GraphEvent[];
    runId: string;
    log: (line: string) => void;
  },
): Promise<void> {
  const store = records.store;
  if (o.created) {
    store.setMeta(o.createMeta(o.plan));
    store.appendOutbox(0, [o.createEvents()[0]!, runEvent(store, 'running')]);
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
