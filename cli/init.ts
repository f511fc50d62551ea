/** git ckpt init: take the first snapshot explicitly, with no time budget. */
import type { Argv, CommandModule } from 'yargs';
import type { GlobalArgs } from './common.js';
import { runSnapshot } from './snapshot.js';

interface InitArgs extends GlobalArgs {
  json?: boolean;
}

export const initCommand: CommandModule<GlobalArgs, InitArgs> = {
  command: 'init',
  describe: 'take the first snapshot of the workspace, however long it takes',
  builder: (yargs: Argv<GlobalArgs>) => yargs.option('json', { type: 'boolean', describe: 'print one JSON object' }) as Argv<InitArgs>,
  handler: (argv) => runSnapshot({ ...argv, message: 'initial snapshot' }, { timeBudgetMs: 0 }),
};
