/** git ckpt revert: undo exactly one checkpoint's own change; paths changed since are conflicts, left alone. */
import type { Command } from 'commander';
import { CkptError } from '../lib/errors.js';
import { argsOf, openWorkspace, type GlobalArgs } from './common.js';
import { exitCodeFor, previewOptions, printOperation } from './operation.js';

interface RevertArgs extends GlobalArgs {
  ckpt?: string;
  dryRun?: boolean;
  json?: boolean;
}

export function define(command: Command): Command {
  return previewOptions(
    command
      .description("undo one checkpoint's change (its parent → it); conflicts are listed and skipped")
      .argument('[ckpt]', 'checkpoint address'),
  ).action((...params) => runRevert(argsOf<RevertArgs>(params)));
}

async function runRevert(argv: RevertArgs): Promise<void> {
  // Optional in the grammar so that an option smuggled in its place is reported as a bad address.
  if (argv.ckpt === undefined) throw new CkptError('usage', 'name the checkpoint to revert (see git ckpt log)');
  const report = await openWorkspace(argv).revert(String(argv.ckpt), { dryRun: argv.dryRun });
  printOperation(report, argv.json ?? false);
  // Like git revert, a partial revert (conflicts) exits 1.
  exitCodeFor(report.counts.failed + report.plan.files.filter((f) => f.reason?.startsWith('conflict')).length);
}
