/** git ckpt restore: make the workspace (or some paths) match a checkpoint; --continue / --abort an interrupted one. */
import type { Argv, CommandModule } from 'yargs';
import { CkptError } from '../lib/errors.js';
import { openWorkspace, workspacePaths, type GlobalArgs } from './common.js';
import { exitCodeFor, previewOptions, printOperation, printRecovery } from './operation.js';

interface RestoreArgs extends GlobalArgs {
  ckpt?: string;
  'dry-run'?: boolean;
  json?: boolean;
  'delete-new'?: boolean;
  continue?: boolean;
  abort?: boolean;
  '--'?: string[];
}

export const restoreCommand: CommandModule<GlobalArgs, RestoreArgs> = {
  command: 'restore [ckpt]',
  describe: 'make the workspace match a checkpoint (never deletes unless --delete-new)',
  builder: (yargs: Argv<GlobalArgs>) =>
    previewOptions(yargs.positional('ckpt', { type: 'string', describe: 'checkpoint address (id prefix, latest, latest~N, turn:N)' }))
      .option('delete-new', { type: 'boolean', describe: 'also delete captured files that are not in the checkpoint' })
      .option('continue', { type: 'boolean', describe: 'finish an interrupted restore' })
      .option('abort', { type: 'boolean', describe: 'roll an interrupted restore back exactly' })
      .usage('$0 restore <ckpt> [--dry-run] [--json] [--delete-new] [-- <path>...]\n$0 restore --continue | --abort') as Argv<RestoreArgs>,
  async handler(argv) {
    const ws = openWorkspace(argv);
    if (argv.continue || argv.abort) {
      if (argv.continue && argv.abort) throw new CkptError('usage', '--continue and --abort exclude each other');
      if (argv.ckpt !== undefined || argv['--']?.length || argv['dry-run'] || argv['delete-new'])
        throw new CkptError('usage', `--${argv.continue ? 'continue' : 'abort'} takes no checkpoint, paths or other options`);
      const report = await ws.recover(argv.continue ? 'continue' : 'abort');
      printRecovery(report, argv.json ?? false);
      exitCodeFor(report.failures.length);
      return;
    }
    if (argv.ckpt === undefined) throw new CkptError('usage', 'name the checkpoint to restore (see git ckpt log), or --continue / --abort');
    const raw = (argv['--'] ?? []).map(String);
    const paths = raw.length ? workspacePaths(ws, argv, raw) : undefined;
    const report = await ws.restore(String(argv.ckpt), { dryRun: argv['dry-run'], deleteNew: argv['delete-new'], paths });
    printOperation(report, argv.json ?? false);
    exitCodeFor(report.counts.failed);
  },
};
