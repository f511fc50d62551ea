/** git ckpt undo: reverse the last restore, revert or undo; repeating it redoes. */
import type { Command } from 'commander';
import { argsOf, openWorkspace, type GlobalArgs } from './common.js';
import { exitCodeFor, previewOptions, printOperation } from './operation.js';

interface UndoArgs extends GlobalArgs {
  dryRun?: boolean;
  json?: boolean;
  force?: boolean;
}

export function define(command: Command): Command {
  return previewOptions(command.description('reverse the last restore, revert or undo (run it again to redo)'))
    .option('--force', 'undo even if files it touches changed since')
    .action((...params) => runUndo(argsOf<UndoArgs>(params)));
}

async function runUndo(argv: UndoArgs): Promise<void> {
  const report = await openWorkspace(argv).undo({ dryRun: argv.dryRun, force: argv.force });
  printOperation(report, argv.json ?? false);
  exitCodeFor(report.counts.failed);
}
