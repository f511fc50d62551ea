/** git ckpt revert: undo exactly one checkpoint's own change; paths changed since are conflicts, left alone. */
import type { Argv, CommandModule } from 'yargs';
import { CkptError } from '../lib/errors.js';
import { openWorkspace, type GlobalArgs } from './common.js';
import { exitCodeFor, previewOptions, printOperation } from './operation.js';

interface RevertArgs extends GlobalArgs {
  ckpt?: string;
  'dry-run'?: boolean;
  json?: boolean;
}

export const revertCommand: CommandModule<GlobalArgs, RevertArgs> = {
  command: 'revert [ckpt]',
  describe: "undo one checkpoint's change (its parent → it); conflicts are listed and skipped",
  builder: (yargs: Argv<GlobalArgs>) =>
    previewOptions(yargs.positional('ckpt', { type: 'string', describe: 'checkpoint address' })) as Argv<RevertArgs>,
  async handler(argv) {
    // Optional in the grammar so that an option smuggled in its place is reported as a bad address.
    if (argv.ckpt === undefined) throw new CkptError('usage', 'name the checkpoint to revert (see git ckpt log)');
    const report = await openWorkspace(argv).revert(String(argv.ckpt), { dryRun: argv['dry-run'] });
    printOperation(report, argv.json ?? false);
    // Like git revert, a partial revert (conflicts) exits 1.
    exitCodeFor(report.counts.failed + report.plan.files.filter((f) => f.reason?.startsWith('conflict')).length);
  },
};
