/** git ckpt restore: make the workspace (or some paths) match a checkpoint; --continue / --abort an interrupted one. */
import type { Command } from 'commander';
import { CkptError } from '../lib/model/errors.js';
import { argsOf, openWorkspace, workspacePaths, type GlobalArgs } from './common.js';
import { exitCodeFor, previewOptions, printOperation, printRecovery } from './operation.js';

interface RestoreArgs extends GlobalArgs {
  ckpt?: string;
  dryRun?: boolean;
  json?: boolean;
  deleteNew?: boolean;
  continue?: boolean;
  abort?: boolean;
}

export function define(command: Command): Command {
  return previewOptions(
    command
      .description('make the workspace match a checkpoint (never deletes unless --delete-new)')
      .argument('[ckpt]', 'checkpoint address (id prefix, latest, latest~N, turn:N)'),
  )
    .option('--delete-new', 'also delete captured files that are not in the checkpoint')
    .option('--continue', 'finish an interrupted restore')
    .option('--abort', 'roll an interrupted restore back exactly')
    .usage('<ckpt> [--dry-run] [--json] [--delete-new] [-- <path>...]\n       git ckpt restore --continue | --abort [--dry-run] [--json]')
    .action((...params) => runRestore(argsOf<RestoreArgs>(params)));
}

async function runRestore(argv: RestoreArgs): Promise<void> {
  const ws = openWorkspace(argv);
  if (argv.continue || argv.abort) {
    if (argv.continue && argv.abort) throw new CkptError('usage', '--continue and --abort exclude each other');
    if (argv.ckpt !== undefined || argv['--']?.length || argv.deleteNew)
      throw new CkptError(
        'usage',
        `--${argv.continue ? 'continue' : 'abort'} takes no checkpoint, paths or options but --dry-run and --json`,
      );
    const report = await ws.recover(argv.continue ? 'continue' : 'abort', { dryRun: argv.dryRun });
    printRecovery(report, argv.json ?? false);
    exitCodeFor(report.failures.length);
    return;
  }
  if (argv.ckpt === undefined) throw new CkptError('usage', 'name the checkpoint to restore (see git ckpt log), or --continue / --abort');
  const raw = (argv['--'] ?? []).map(String);
  const paths = raw.length ? workspacePaths(ws, argv, raw) : undefined;
  const report = await ws.restore(String(argv.ckpt), { dryRun: argv.dryRun, deleteNew: argv.deleteNew, paths });
  printOperation(report, argv.json ?? false);
  exitCodeFor(report.counts.failed);
}
