// Fingerprints 1,000 drafts per family × level × type (draft, reference outputs and AST size, as
// drawReference gives them): two commits whose fingerprints match draw byte-identical tasks.
import { createHash } from 'node:crypto';
import { families, drawReference } from '../../generators/index.js';
import { createRng } from '../../core/rng.js';
import * as taskModel from '../../core/task.js';

// The code task types (problem families have a registry of their own); check.sh copies this file
// into older commits too, which have only TASK_TYPES (then the same three types).
const CODE_TASK_TYPES = ((taskModel as Record<string, unknown>).CODE_TASK_TYPES ?? taskModel.TASK_TYPES) as readonly ('deduction' | 'abduction' | 'induction')[];

const out: Record<string, string> = {};
for (const f of families) {
  for (let level = 0; level < f.levels; level++) {
    for (const type of CODE_TASK_TYPES) {
      const rng = createRng(`digest:${f.id}:${level}:${type}`);
      const h = createHash('sha256');
      for (let i = 0; i < 1000; i++) h.update(JSON.stringify(drawReference(f.id, rng, level, type)) + '\n');
      out[`${f.id}:${level}:${type}`] = h.digest('hex').slice(0, 16);
    }
  }
}
console.log(JSON.stringify(out, null, 1));
