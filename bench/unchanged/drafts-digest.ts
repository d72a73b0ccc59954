// Fingerprints 1,000 drafts per family × level × type (draft, reference outputs and AST size, as
// drawReference gives them), and 200 drafts per problem family × level: two commits whose
// fingerprints match draw byte-identical tasks. Levels 0-4, the tabled ones (docs/levels.md):
// families grown above them draw new tasks there by design.
import { createHash } from 'node:crypto';
import * as generators from '../../generators/index.js';
import { createRng } from '../../core/rng.js';
import * as taskModel from '../../core/task.js';

// The code task types (problem families have a registry of their own); check.sh copies this file
// into older commits too, which have only TASK_TYPES (then the same three types) and may have no
// problem families.
const CODE_TASK_TYPES = ((taskModel as Record<string, unknown>).CODE_TASK_TYPES ?? taskModel.TASK_TYPES) as readonly (
  'deduction' | 'abduction' | 'induction'
)[];
const problemFamilies = ((generators as Record<string, unknown>).problemFamilies ?? []) as readonly {
  id: string;
  generate(rng: ReturnType<typeof createRng>, level: number): unknown;
}[];
const TABLED = 5;

const out: Record<string, string> = {};
for (const f of generators.families) {
  for (let level = 0; level < TABLED; level++) {
    for (const type of CODE_TASK_TYPES) {
      const rng = createRng(`digest:${f.id}:${level}:${type}`);
      const h = createHash('sha256');
      for (let i = 0; i < 1000; i++) h.update(JSON.stringify(generators.drawReference(f.id, rng, level, type)) + '\n');
      out[`${f.id}:${level}:${type}`] = h.digest('hex').slice(0, 16);
    }
  }
}
for (const f of problemFamilies) {
  for (let level = 0; level < TABLED; level++) {
    const rng = createRng(`digest:${f.id}:${level}:problem`);
    const h = createHash('sha256');
    for (let i = 0; i < 200; i++) h.update(JSON.stringify(f.generate(rng, level)) + '\n');
    out[`${f.id}:${level}:problem`] = h.digest('hex').slice(0, 16);
  }
}
console.log(JSON.stringify(out, null, 1));
