// The generated reference pages (docs/cli.md from src/cli.ts's commander definitions,
// docs/config.md from the run config's zod schemas) must match what the code says today:
// scripts/docs.ts writes them, and this test fails with the command to run when one is stale.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderCliDoc } from '../scripts/docs-cli.js';
import { renderConfigDoc } from '../scripts/docs-config.js';

const ROOT = join(import.meta.dirname, '..');
const read = (page: string): string => {
  try {
    return readFileSync(join(ROOT, page), 'utf8');
  } catch {
    return '';
  }
};

describe('generated docs', () => {
  for (const [page, render] of [
    ['docs/cli.md', renderCliDoc],
    ['docs/config.md', renderConfigDoc],
  ] as const) {
    it(`${page} is current`, () => {
      // One line, not a diff of the page: the fix is always the same command.
      if (read(page) !== render()) expect.fail(`${page} is not current: run npm run docs`);
    });
  }
});
