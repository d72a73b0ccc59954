// `cogen plot`: one run's curves, or two side by side, as SVG or PNG (src/dashboard/plot.ts; docs/dashboard.md).
import type { Command } from 'commander';
import { resolve } from 'node:path';
import { runsDirOption } from './shared.js';

export function plotCommand(program: Command): void {
  program
    .command('plot')
    .description('write the curves of one run, or two side by side, as an SVG or PNG picture')
    .requiredOption(
      '--run <id>',
      'run id (twice for two runs side by side)',
      (v: string, prev: string[] | undefined) => [...(prev ?? []), v],
    )
    .requiredOption('-o, --out <file>', 'output file: .svg or .png')
    .addOption(runsDirOption())
    .action(async (o) => {
      const { plotRuns } = await import('../dashboard/plot.js');
      const r = await plotRuns(resolve(o.runsDir), o.run as string[], resolve(o.out));
      process.stderr.write(`wrote ${o.out} (${r.format}, ${r.width}×${r.height})\n`);
    });
}
