// `cogen export`: the command line of src/export.ts (kinds and formats), src/export-eval.ts (an
// evaluation set without a run) and src/export-view.ts (tasks in the solver's view, a run's probes
// left out). Bad combinations are refused in one line before anything is read or written.
import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { EXPORT_FORMATS, exportRun, type ExportFormat, type ExportKind } from '../export.js';
import { EXPORT_WHAT, exportEvalCommand, exportedRun } from '../export-eval.js';
import { EXPORT_VIEWS, checkViewOptions, exportTaskRows, type ExportView } from '../export-view.js';
import { storedRunProbeIds } from '../run/index.js';
import { openRun, parseIntArg, runsDirOption } from './shared.js';

export function exportCommand(program: Command): void {
  program
    .command('export')
    .description(
      'write what a run made (its validated tasks, or its played environment episodes), or an evaluation set of one family at one level, for other training stacks',
    )
    .option('--run <id>', 'run id (every kind but eval)')
    .requiredOption('-o, --out <file>', 'output file')
    .addOption(
      new Option(
        '-w, --what <kind>',
        'which records (tasks: the validated tasks with their verifiers; trajectories: played environment episodes as OpenAI chats with tool calls; proposals: what the LLM and learned proposers wrote, with their learnability; eval: a fixed evaluation set of --family at --level, no run: docs/levels.md)',
      )
        .choices(EXPORT_WHAT)
        .default('tasks'),
    )
    .option('--family <id>', 'eval: the family')
    .option('--level <n>', "eval: the level (any d up to the family's last)", parseIntArg)
    .option('--n <n>', 'eval: how many tasks', parseIntArg, 64)
    .option('--seed <n>', 'eval: the seed (a run of this seed makes the same set above level 4)', parseIntArg, 0)
    .option(
      '--types <list>',
      'eval: the task types to cycle through (default: every type the family makes)',
      (v: string) => v.split(','),
    )
    .addOption(
      new Option(
        '-f, --format <format>',
        'jsonl | trl (TRL GRPOTrainer prompts) | parquet (veRL: chat prompt, reward_model and extra_info as structs)',
      )
        .choices(EXPORT_FORMATS)
        .default('jsonl'),
    )
    .addOption(
      new Option(
        '--view <view>',
        "tasks and eval: chat (the natural-language prompt, as always) | compact (the built-in solver's tokens joined by one space, the space written ␣: <sep> before the prompt's last token, completion ending <eos>, for SFT of your own model; jsonl or trl; docs/train-your-own-model.md)",
      )
        .choices(EXPORT_VIEWS)
        .default('chat'),
    )
    .option(
      '--exclude-probes <run>',
      'tasks and eval: leave out the held-out probes of this run (in --runs-dir; drawn again from its config), so a model trained on the export is measured on tasks it never saw',
    )
    .addOption(runsDirOption())
    .action(async (o) => {
      checkViewOptions(o);
      const view = o.view as ExportView;
      const exclude = o.excludeProbes === undefined ? undefined : await probeIdsOf(resolve(o.runsDir), o.excludeProbes);
      const leftOut = exclude ? `; the ${exclude.size} probes of run ${o.excludeProbes} left out` : '';
      const inView = view === 'compact' ? ", in the solver's view" : '';
      if (o.what === 'eval') return exportEvalCommand({ ...o, view, exclude, out: resolve(o.out), shown: o.out });
      const store = openRun(resolve(o.runsDir), exportedRun(o));
      try {
        const format = o.format as ExportFormat;
        const n =
          o.what === 'tasks'
            ? await exportTaskRows(store.tasks(), resolve(o.out), format, { view, exclude })
            : await exportRun(store, o.what as ExportKind, resolve(o.out), format);
        process.stderr.write(`wrote ${n} ${o.what} to ${o.out} (${o.format}${inView}${leftOut})\n`);
      } finally {
        store.close();
      }
    });
}

/** The probe ids of a stored run. */
async function probeIdsOf(runsDir: string, runId: string): Promise<Set<string>> {
  const store = openRun(runsDir, runId);
  try {
    return await storedRunProbeIds(store, runId);
  } finally {
    store.close();
  }
}
