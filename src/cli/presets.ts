// `cogen presets`: the presets in curricula/ (docs/config.md).
import type { Command } from 'commander';
import { listPresets } from '../run/index.js';

export function presetsCommand(program: Command): void {
  program
    .command('presets')
    .description('list the presets in curricula/')
    .option('--json', 'as JSON')
    .action((o) => {
      const presets = listPresets();
      if (o.json)
        process.stdout.write(
          `${JSON.stringify(
            presets.map(({ name, description }) => ({ name, description })),
            null,
            2,
          )}\n`,
        );
      else for (const p of presets) process.stdout.write(`${p.name.padEnd(16)} ${p.description}\n`);
    });
}
