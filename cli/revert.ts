/**
 * git ckpt revert: undo what checkpoints changed, three-way, keeping every
 * later edit that does not overlap: one checkpoint, a turn range
 * (`turn:3..turn:5[@session]`), a turn or a whole agent session.
 */
import { Option, type Command } from 'commander';
import { CkptError } from '../lib/model/errors.js';
import { argsOf, nonNegativeInt, openWorkspace, type GlobalArgs } from './common.js';
import { exitCodeFor, previewOptions, printOperation } from './operation.js';

interface RevertArgs extends GlobalArgs {
  ckpt?: string;
  session?: string;
  turn?: string;
  conflict?: 'keep' | 'markers';
  dryRun?: boolean;
  json?: boolean;
}

export function define(command: Command): Command {
  return previewOptions(
    command
      .description("undo a checkpoint's change, a turn range's or a session's tool calls, keeping later edits that do not overlap")
      .argument('[ckpt]', 'checkpoint address, or a turn range turn:N..turn:M[@SESSION]')
      .option('--session <id>', "revert every tool call of this agent session (a unique prefix); with --turn, one turn's")
      .option('--turn <n>', "revert one turn's tool calls (of the most recent session unless --session)")
      .addOption(
        new Option('--conflict <mode>', 'a conflicting text file: keep it as it is (default), or write conflict markers').choices([
          'keep',
          'markers',
        ]),
      )
      .usage('<ckpt> | turn:N..turn:M[@SESSION] | --session <id> [--turn N] [--conflict=keep|markers] [--dry-run] [--json]'),
  ).action((...params) => runRevert(argsOf<RevertArgs>(params)));
}

async function runRevert(argv: RevertArgs): Promise<void> {
  const turn = nonNegativeInt('turn', argv.turn);
  const bySession = argv.session !== undefined || turn !== undefined;
  // Optional in the grammar so that an option smuggled in its place is reported as a bad address.
  if (argv.ckpt === undefined && !bySession)
    throw new CkptError('usage', 'name what to revert: a checkpoint (see git ckpt log), turn:N..turn:M, --session or --turn');
  if (argv.ckpt !== undefined && bySession) throw new CkptError('usage', 'name a checkpoint or a range, or use --session/--turn, not both');
  const what = argv.ckpt !== undefined ? String(argv.ckpt) : { session: argv.session, turn };
  const report = await openWorkspace(argv).revert(what, { dryRun: argv.dryRun, conflict: argv.conflict });
  printOperation(report, argv.json ?? false);
  // Like git revert, a partial revert (conflicts) exits 1.
  exitCodeFor(report.counts.failed + report.plan.files.filter((f) => f.reason?.startsWith('conflict')).length);
}
