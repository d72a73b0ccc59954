// Which backends the solver's tests run on. cpu and wasm always; tensorflow when
// `cogen setup tensorflow` has built @tensorflow/tfjs-node here, and always under CI=true (.ci/run
// sets it up first), so that a CI without it fails rather than skips. Tests that run on tensorflow
// come after those on cpu and wasm in their file: loading tfjs-node registers tfjs's own gradients
// over gradients.ts's for the rest of the process.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { expect, it } from 'vitest';
import { initBackend } from '../src/solver/testing.js';

export type TestBackend = 'cpu' | 'wasm' | 'tensorflow';

function tensorflowMissing(): string | null {
  const req = createRequire(import.meta.url);
  let dir: string;
  try {
    dir = dirname(req.resolve('@tensorflow/tfjs-node/package.json'));
  } catch {
    return '@tensorflow/tfjs-node is not installed (run `cogen setup tensorflow`)';
  }
  return existsSync(join(dir, 'deps', 'cogen-setup.json'))
    ? null
    : '@tensorflow/tfjs-node is not set up (run `cogen setup tensorflow`)';
}

const missing = tensorflowMissing();
/** Locally without the package, tensorflow's tests are skipped with this reason; never under CI. */
export const TENSORFLOW_SKIP: string | null = missing !== null && process.env.CI !== 'true' ? missing : null;

/** `it`, or `it.skip` for tensorflow when it is not set up outside CI. */
export function itOn(backend: TestBackend): ReturnType<typeof it.skipIf> {
  return it.skipIf(backend === 'tensorflow' && TENSORFLOW_SKIP !== null);
}

/** The test's name, with the reason when it is skipped. */
export function named(backend: TestBackend, name: string): string {
  return backend === 'tensorflow' && TENSORFLOW_SKIP
    ? `${backend}: ${name} (skipped: ${TENSORFLOW_SKIP})`
    : `${backend}: ${name}`;
}

/** Starts the backend and checks that it is the one running (initBackend would fall back silently). */
export async function useBackend(backend: TestBackend): Promise<void> {
  const lines: string[] = [];
  const got = await initBackend(backend, { log: (l) => lines.push(l) });
  expect(got, lines.join('\n')).toBe(backend);
}
