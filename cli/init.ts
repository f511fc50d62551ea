/** git ckpt init: take the first snapshot explicitly, with no time budget. */
import type { Argv, CommandModule } from 'yargs';
import { openWorkspace, type GlobalArgs } from './common.js';
import { progressReporter, reportSnapshot, runSnapshot } from './snapshot.js';

interface InitArgs extends GlobalArgs {
  json?: boolean;
  baseline?: boolean;
}

export const initCommand: CommandModule<GlobalArgs, InitArgs> = {
  command: 'init',
  describe: 'take the first snapshot of the workspace, however long it takes',
  builder: (yargs: Argv<GlobalArgs>) =>
    yargs.option('json', { type: 'boolean', describe: 'print one JSON object' }).option('baseline', {
      type: 'boolean',
      describe: 'as hooks start it in the background: hooks skip while it runs, and status shows its progress',
    }) as Argv<InitArgs>,
  handler: async (argv) => {
    if (!argv.baseline) return runSnapshot({ ...argv, message: 'initial snapshot' }, { timeBudgetMs: 0 });
    const result = await openWorkspace(argv).baseline(argv.json ? undefined : progressReporter());
    reportSnapshot(result, argv.json);
  },
};
