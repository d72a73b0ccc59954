import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TaskArchive } from '../src/run/index.js';
import type { Task } from '../core/task.js';

// A task as far as the archive reads one: its id and its arm (and a version, so that a replaced
// entry is told from the one it replaced).
const task = (id: string, family: string, level: number, version: number): Task =>
  ({ id, family, level, type: 'deduction', version }) as unknown as Task;
const arms = [
  { family: 'arith', level: 0, type: 'deduction' as const },
  { family: 'arith', level: 1, type: 'deduction' as const },
  { family: 'logic', level: 0, type: 'deduction' as const },
];
const op = fc.oneof(
  fc.record({
    kind: fc.constant('set' as const),
    id: fc.integer({ min: 0, max: 12 }),
    arm: fc.integer({ min: 0, max: 2 }),
  }),
  fc.record({ kind: fc.constant('delete' as const), id: fc.integer({ min: 0, max: 12 }) }),
  fc.record({ kind: fc.constant('clear' as const) }),
);

describe('TaskArchive', () => {
  it("lists each arm's tasks as a scan of a plain Map in the same order would", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const archive = new TaskArchive();
        const map = new Map<string, Task>();
        for (const [i, o] of ops.entries()) {
          if (o.kind === 'set') {
            // An id names one task, so a repeated id comes back with its own arm.
            const a = map.get(String(o.id)) ?? arms[o.arm]!;
            const t = task(String(o.id), a.family, a.level, i);
            archive.set(t.id, t);
            map.set(t.id, t);
          } else if (o.kind === 'delete') expect(archive.delete(String(o.id))).toBe(map.delete(String(o.id)));
          else {
            archive.clear();
            map.clear();
          }
          expect([...archive.keys()]).toEqual([...map.keys()]);
          for (const a of arms)
            expect(archive.ofArm(a)).toEqual(
              [...map.values()].filter((t) => t.family === a.family && t.level === a.level && t.type === a.type),
            );
        }
      }),
    );
  });
});
