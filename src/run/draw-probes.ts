// A run's held-out mastery probes from its config alone: they are drawn first, from their own stream
// (`<seed>/probes`), over the config's tabled arms (src/run/probes.ts), so the same config draws the same
// probes again. An autonomous run (src/run/loop.ts) and a served run (src/server/served-open.ts) draw
// them here; `cogen export --exclude-probes` draws a run's again to leave them out of training data.
// The rendering (compact for the built-in solver) does not change which tasks are drawn.
import { createMasteryTracker } from '../../curricula/index.js';
import { renderNatural } from '../../generators/index.js';
import { createSandbox, type Sandbox } from '../../sandbox/index.js';
import { createRng } from '../../core/rng.js';
import type { Task } from '../../core/task.js';
import { parseConfig, type RunConfig } from './config.js';
import { buildProbes, type Probe } from './probes.js';
import { tabledArms, taskSpace } from './parts.js';
import type { RunStore } from './records/store.js';

/** The probes of a run of `config`; their ids join `seen`. */
export function drawRunProbes(
  config: RunConfig,
  sandbox: Sandbox,
  seen: Set<string>,
  render: (t: Task) => string = renderNatural,
): Promise<Probe[]> {
  const space = taskSpace(config);
  const mastery = createMasteryTracker(config.curriculum.mastery);
  return buildProbes(
    sandbox,
    tabledArms(space),
    space.skills,
    { perArm: config.probes.perArm, mastery: mastery.opts },
    createRng(`${config.seed}/probes`),
    seen,
    render,
  );
}

/** The ids of a stored run's probes, drawn again from the config it recorded (seconds: a sandbox verifies them). */
export async function storedRunProbeIds(store: RunStore, runId: string): Promise<Set<string>> {
  const config = parseConfig(JSON.parse(store.getMeta('config') ?? '{}'), `of run ${runId}`, {
    stored: true,
    note: () => {},
  });
  const sandbox = await createSandbox();
  try {
    return new Set((await drawRunProbes(config, sandbox, new Set())).map((p) => p.task.id));
  } finally {
    await sandbox.close();
  }
}
