/** git ckpt init: take the first snapshot explicitly, with no time budget. */
import type { Command } from 'commander';
import { argsOf, openWorkspace, type GlobalArgs } from './common.js';
import { progressReporter, reportSnapshot, runSnapshot } from './snapshot.js';

interface InitArgs extends GlobalArgs {
  json?: boolean;
  baseline?: boolean;
}

export function define(command: Command): Command {
  return command
    .description('take the first snapshot of the workspace, however long it takes')
    .option('--json', 'print one JSON object')
    .option('--baseline', 'as hooks start it in the background: hooks skip while it runs, and status shows its progress')
    .action(async (...params) => {
      const argv = argsOf<InitArgs>(params);
      if (!argv.baseline) return runSnapshot({ ...argv, message: 'initial snapshot' }, { timeBudgetMs: 0 });
      const result = await openWorkspace(argv).baseline(argv.json ? undefined : progressReporter());
      reportSnapshot(result, argv.json);
    });
}
