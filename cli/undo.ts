/** git ckpt undo: reverse the last restore, revert or undo; repeating it redoes. */
import type { Argv, CommandModule } from 'yargs';
import { openWorkspace, type GlobalArgs } from './common.js';
import { exitCodeFor, previewOptions, printOperation } from './operation.js';

interface UndoArgs extends GlobalArgs {
  'dry-run'?: boolean;
  json?: boolean;
  force?: boolean;
}

export const undoCommand: CommandModule<GlobalArgs, UndoArgs> = {
  command: 'undo',
  describe: 'reverse the last restore, revert or undo (run it again to redo)',
  builder: (yargs: Argv<GlobalArgs>) =>
    previewOptions(yargs).option('force', { type: 'boolean', describe: 'undo even if files it touches changed since' }) as Argv<UndoArgs>,
  async handler(argv) {
    const report = await openWorkspace(argv).undo({ dryRun: argv['dry-run'], force: argv.force });
    printOperation(report, argv.json ?? false);
    exitCodeFor(report.counts.failed);
  },
};
