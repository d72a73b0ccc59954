// Opening a served run (src/server/served-run.ts): a new one, or one resumed with its curriculum's
// state as it was; the config checks a served run makes, and the parts it is built from.
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createController, createGate, createMasteryTracker, type Controller, type Gate, type MasteryTracker } from '../../curricula/index.js';
import { renderNatural } from '../../generators/index.js';
import type { Sandbox } from '../../sandbox/index.js';
import type { RunConfig } from '../config.js';
import { createRng, type Rng } from '../../core/rng.js';
import { buildProbes, probeSets, type Probe } from '../probes.js';
import { learnedProposerOf, newRunId, openGraphs, runEvent, sandboxOf, tabledArms, taskSpace, type GraphSink, type TaskSpace } from '../run-parts.js';
import type { LearnedProposer } from '../../proposers/index.js';
import { RunStore, StoreError } from '../store.js';
import type { Task } from '../../core/task.js';
import { UserError } from '../../core/errors.js';
import type { ServedRunOptions, ServedState } from './served-state.js';

/** What a served run is made of. */
export interface ServedParts {
  runId: string;
  config: RunConfig;
  store: RunStore;
  sandbox: Sandbox;
  graphs: GraphSink[];
  controller: Controller;
  gate: Gate;
  mastery: MasteryTracker;
  rng: Rng;
  space: TaskSpace;
  probes: Probe[];
  archive: Map<string, Task>;
  seen: Set<string>;
  state: ServedState;
  now: () => number;
  log: (line: string) => void;
  learned: LearnedProposer | null;
}

/** Opens a new served run, or resumes one (`resume`): its parts, with the curriculum's state as it was. */
export async function openServedParts(config: RunConfig, opts: ServedRunOptions): Promise<ServedParts> {
  const log = opts.log ?? (() => {});
  if (config.agents.proposer.share > 0 || config.agents.solver.enabled) {
    throw new UserError('cogen serve takes no LLM agents: the trainer is the solver, and LLM proposals are not served yet (set agents.proposer.share to 0)');
  }
  if (config.environments.length > 0) throw new UserError('cogen serve takes no `environments` in its config: a trainer plays environments through /reset with `env` and /step (OpenEnv), outside the served curriculum');
  if (config.solver.init) throw new UserError('cogen serve takes no `solver.init`: the trainer\'s model answers a served run, not the built-in solver');
  // Self-play proposes with the built-in solver's own network, which a served run does not have.
  if (config.proposer?.selfPlay.enabled) throw new UserError('cogen serve takes no self-play proposer: it proposes with the built-in solver, and the trainer is the solver here (use --proposer learned, or none)');
  const runId = opts.runId ?? newRunId(config, true);
  const dir = join(opts.runsDir, runId);
  if (!opts.resume && existsSync(join(dir, 'run.db'))) {
    throw new StoreError(`run "${runId}" already exists in ${opts.runsDir}: resume it with --resume ${runId}, or pick another --run-id`);
  }
  const store = RunStore.open(dir, { create: !opts.resume });
  if (opts.resume && store.getMeta('kind') !== 'served') {
    store.close();
    throw new UserError(`run "${runId}" is not a served run: resume it with cogen run --resume ${runId}`);
  }
  const opened: (() => unknown)[] = [() => store.close()];
  try {
    const graphs = await openGraphs(config, store, log);
    opened.push(() => Promise.all(graphs.map((g) => g.graph.close())));
    const sandbox = await sandboxOf(config);
    opened.push(() => sandbox.close());
    const space = taskSpace(config);
    const seen = new Set<string>();
    const controller = createController(config.curriculum, space.arms);
    const mastery = createMasteryTracker(config.curriculum.mastery);
    // The same held-out probes as an autonomous run of this config: drawn first, from their own stream.
    const probes = await buildProbes(sandbox, tabledArms(space), space.skills, { perArm: config.probes.perArm, mastery: mastery.opts }, createRng(`${config.seed}/probes`), seen, renderNatural);
    const plan = JSON.stringify(probeSets(probes, space.skills, mastery.opts));
    // The learned proposer learns from the trainer's solve rates (score requests) as from the built-in solver's.
    const learned = learnedProposerOf(config);
    let state: ServedState = { rng: createRng(config.seed).state(), controller: null, mastery: null, step: 0, groups: 0, unfed: 0, completions: 0, solved: 0, issued: 0, probeRound: -1, probeAccuracy: null };
    const archive = new Map<string, Task>();
    if (opts.resume) {
      state = JSON.parse(store.getMeta('served') ?? 'null') as ServedState ?? state;
      if (state.controller !== null) controller.restore(state.controller);
      if (state.mastery !== null) mastery.restore(state.mastery);
      if (learned && state.proposer !== undefined) learned.restore(state.proposer);
      for (const row of store.tasks()) {
        archive.set(row.task.id, row.task);
        seen.add(row.task.id);
        learned?.note(row.task);
      }
      store.setMeta({ status: 'running', probePlan: plan });
      log(`resuming served run ${runId} at step ${state.step} (${state.groups} groups, ${archive.size} tasks)`);
    } else {
      const started = new Date().toISOString();
      store.setMeta({ runId, kind: 'served', preset: opts.preset, config: JSON.stringify(config), status: 'running', startedAt: started, served: JSON.stringify(state), probePlan: plan });
      store.appendOutbox(0, [{ kind: 'skills', skills: space.skills }, runEvent(store, 'running')]);
    }
    const gate = createGate({ skills: space.skills, armSkills: space.armSkills, enabled: config.curriculum.gating });
    return { runId, config, store, sandbox, graphs, controller, gate, mastery, rng: createRng(state.rng), space, probes, archive, seen, state, now: opts.now ?? Date.now, log, learned };
  } catch (e) {
    for (const close of opened.reverse()) await Promise.resolve(close()).catch(() => {});
    if (!opts.resume) rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}
