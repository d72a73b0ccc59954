// `cogen dashboard`: a local read-only web page over the run store (src/dashboard/; docs/dashboard.md).
import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { UserError } from '../../core/errors.js';
import { parseIntArg, runsDirOption } from './shared.js';

export function dashboardCommand(program: Command): void {
  program
    .command('dashboard')
    .description(
      'serve a local web page over the run store (read-only, live while a run goes): curves, the curriculum, the skill graph over time, tasks, proposals',
    )
    .option('--run <id>', 'the run the page opens (default: the newest)')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--port <n>', 'port (0: any free one)', parseIntArg, 8790)
    .addOption(runsDirOption())
    .action(async (o) => {
      const { startDashboard } = await import('../dashboard/server.js');
      const runsDir = resolve(o.runsDir);
      if (o.run !== undefined && !existsSync(join(runsDir, o.run)))
        throw new UserError(`unknown run "${o.run}" (no ${join(runsDir, o.run)}; see cogen runs)`);
      const d = await startDashboard({ runsDir, runId: o.run, host: o.host, port: o.port });
      process.stderr.write(`dashboard at ${d.url}/${o.run ? `run/${o.run}` : ''} (runs in ${runsDir}; Ctrl-C stops)\n`);
      await new Promise<void>((done) => {
        const stop = () => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          void d.close().then(done);
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
    });
}
