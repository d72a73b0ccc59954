// `cogen runs`: the runs in the runs directory, one line each (docs/runs.md).
import type { Command } from 'commander';
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { RunStore } from '../run/index.js';
import { runsDirOption } from './shared.js';

export function runsCommand(program: Command): void {
  program
    .command('runs')
    .description('list the runs in the runs directory')
    .addOption(runsDirOption())
    .option('--json', 'as JSON')
    .action((o) => {
      const runsDir = resolve(o.runsDir);
      const ids = existsSync(runsDir)
        ? readdirSync(runsDir)
            .filter((d) => existsSync(join(runsDir, d, 'run.db')))
            .sort()
        : [];
      const rows = ids.map((id) => {
        const store = RunStore.open(join(runsDir, id), { create: false });
        try {
          return {
            id,
            kind: store.getMeta('kind') ?? 'autonomous',
            preset: store.getMeta('preset'),
            status: store.getMeta('status'),
            lastStep: Number(store.getMeta('lastStep') ?? 0),
            tasks: store.count('tasks'),
          };
        } finally {
          store.close();
        }
      });
      if (o.json) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
      else
        for (const r of rows)
          process.stdout.write(`${r.id}  ${r.kind}  ${r.preset}  ${r.status}  step ${r.lastStep}  ${r.tasks} tasks\n`);
    });
}
