// `cogen setup`: the optional parts, tensorflow and reasoning-gym (src/setup/; docs/backends.md, docs/reasoning-gym.md).
import { Argument, type Command } from 'commander';

export function setupCommand(program: Command): void {
  program
    .command('setup')
    .description(
      "set up an optional part: tensorflow builds @tensorflow/tfjs-node(-gpu) against the TensorFlow C libraries from PyPI; reasoning-gym installs PyPI's reasoning-gym into a local virtual environment and bridges its datasets in as families rg.<dataset>",
    )
    .addArgument(new Argument('<what>', 'what to set up').choices(['tensorflow', 'reasoning-gym']))
    .option(
      '--gpu',
      'tensorflow: the CUDA build (@tensorflow/tfjs-node-gpu, the tensorflow wheel and nvidia-*-cu12 wheels)',
    )
    .option('--list', 'reasoning-gym: print the bridged families and the excluded datasets with the reason')
    .option('--rebuild', "reasoning-gym: check every dataset's levels again and rewrite the catalogue")
    .action(async (what: string, o: { gpu?: boolean; list?: boolean; rebuild?: boolean }) => {
      const log = (l: string): void => void process.stderr.write(`${l}\n`);
      if (what === 'reasoning-gym') {
        const { listReasoningGym, setupReasoningGym } = await import('../setup/index.js');
        if (o.list) process.stdout.write(`${await listReasoningGym()}\n`);
        else await setupReasoningGym({ log, rebuild: !!o.rebuild });
        return;
      }
      const { setupTensorflow } = await import('../setup/index.js');
      setupTensorflow({ gpu: !!o.gpu, log });
    });
}
