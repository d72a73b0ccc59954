// The bridges room: other task sources under cogen's curricula, skill graph and server. Today one,
// Reasoning Gym (docs/DESIGN.md, "Tasks"): its datasets as families `rg.<dataset>`, generated and
// scored by its own code in a Python worker (bridges/reasoning_gym/worker.py) that `cogen setup
// reasoning-gym` installs. This file is the room's door.
import { existsSync } from 'node:fs';
import { loadCatalogue } from './reasoning_gym/catalogue.js';
import { rgPaths } from './reasoning_gym/paths.js';
import { RgWorker } from './reasoning_gym/process.js';

export { REASONING_GYM_VERSION, notSetUpLine, rgPaths, type RgPaths } from './reasoning_gym/paths.js';
export { RgWorker, WorkerFailure, type WorkerFailureReason, type WorkerOptions } from './reasoning_gym/process.js';
export {
  RG_FAMILY_PREFIX,
  bridgedFamilies,
  buildCatalogue,
  findBridgedFamily,
  formatBridgedTable,
  isBridgedFamily,
  itemVerifies,
  loadCatalogue,
  reloadCatalogue,
  writeCatalogue,
  type BridgedFamily,
  type BuildOptions,
  type GeneratedItem,
  type RgCatalogue,
  type RgFamilyEntry,
} from './reasoning_gym/catalogue.js';
export {
  drawBridged,
  materialiseBridged,
  scoreBridged,
  type BridgedData,
  type BridgedMaterialised,
  type DrawOptions,
} from './reasoning_gym/tasks.js';
export {
  benchBridged,
  benchReasoningGym,
  runReasoningGymBench,
  type BridgedBenchReport,
  type BridgedBenchRow,
} from './reasoning_gym/bench.js';

/** Whether the bridge is set up: the virtual environment's Python and the catalogue setup wrote. */
export function bridgeReady(): boolean {
  return existsSync(rgPaths().python) && loadCatalogue() !== null;
}

let shared: RgWorker | null = null;

/** The process's Reasoning Gym worker, started on its first request (and restarted after any failure). */
export function sharedWorker(): RgWorker {
  shared ??= new RgWorker({ log: (line) => process.stderr.write(`cogen: ${line}\n`) });
  return shared;
}

/** Stops the shared worker (a later sharedWorker() makes a new one). */
export function closeSharedWorker(): void {
  shared?.close();
  shared = null;
}
