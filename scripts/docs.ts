// `npm run docs`: rewrites the generated reference pages (docs/cli.md, docs/config.md) from the
// code. `npm run docs -- --check` writes nothing and exits 1 naming each page that is not current
// (test/docs-current.test.ts checks the same in the test suite).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderCliDoc } from './docs-cli.js';
import { renderConfigDoc } from './docs-config.js';

const GENERATED: Record<string, () => string> = {
  'docs/cli.md': renderCliDoc,
  'docs/config.md': renderConfigDoc,
};

const ROOT = join(import.meta.dirname, '..');
const check = process.argv.includes('--check');
let stale = 0;
for (const [page, render] of Object.entries(GENERATED)) {
  const path = join(ROOT, page);
  const text = render();
  let current = '';
  try {
    current = readFileSync(path, 'utf8');
  } catch {
    // missing: written below, or stale under --check
  }
  if (current === text) continue;
  if (check) {
    stale++;
    process.stderr.write(`${page} is not current: run npm run docs\n`);
  } else {
    writeFileSync(path, text);
    process.stderr.write(`wrote ${page}\n`);
  }
}
process.exit(stale > 0 ? 1 : 0);
