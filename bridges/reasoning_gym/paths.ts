// Where the Reasoning Gym bridge lives on this machine: the virtual environment `cogen setup
// reasoning-gym` makes, the catalogue of bridged families it writes next to it, and the worker.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The Reasoning Gym release the bridge is tested against (pip pins it). */
export const REASONING_GYM_VERSION = '0.1.25';

export interface RgPaths {
  /** The virtual environment (COGEN_RG_VENV, else <cache>/rg-venv; cache = COGEN_CACHE_DIR or ~/.cache/cogen). */
  venv: string;
  python: string;
  /** The bridged families and the excluded ones, written by setup; read synchronously by the taxonomy. */
  catalogue: string;
  /** bridges/reasoning_gym/worker.py */
  worker: string;
}

export function rgPaths(env: NodeJS.ProcessEnv = process.env): RgPaths {
  const cache = env.COGEN_CACHE_DIR ?? join(homedir(), '.cache', 'cogen');
  const venv = env.COGEN_RG_VENV ?? join(cache, 'rg-venv');
  return {
    venv,
    python: join(venv, 'bin', 'python'),
    catalogue: join(venv, 'cogen-reasoning-gym.json'),
    worker: fileURLToPath(new URL('./worker.py', import.meta.url)),
  };
}

/** The one line a user sees when the bridge is wanted but not set up. */
export function notSetUpLine(paths: RgPaths = rgPaths()): string {
  const what = existsSync(paths.python)
    ? `no catalogue at ${paths.catalogue}`
    : `no Python environment at ${paths.venv}`;
  return `Reasoning Gym bridge is not set up (${what}); run \`cogen setup reasoning-gym\``;
}
