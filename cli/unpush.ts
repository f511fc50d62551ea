/** git ckpt unpush --session S: delete this store's ref of a session on the remote, with a lease. */
import type { Command } from 'commander';
import { argsOf, openWorkspace, printJson, type GlobalArgs } from './common.js';
import { yellow } from './format.js';
import { optionWords } from '../lib/model/text.js';

interface UnpushArgs extends GlobalArgs {
  remote?: string;
  session: string;
  json?: boolean;
}

export const NOT_PURGED =
  'deleting is not purging: the commits stay on the host, reachable by id, in forks and in caches, until the host purges them';

export function define(command: Command): Command {
  return command
    .description("delete this store's ref of a session on the remote (the host may keep its objects)")
    .argument('[remote]', 'a remote share init added (default: the last one)')
    .requiredOption('--session <id>', 'the session')
    .option('--json', 'print one JSON object')
    .action((...params) => runUnpush(argsOf<UnpushArgs>(params)));
}

async function runUnpush(argv: UnpushArgs): Promise<void> {
  const report = await openWorkspace(argv).unpush({ remote: argv.remote, session: argv.session });
  if (argv.json) return printJson({ ...report, purged: false, note: NOT_PURGED });
  process.stdout.write(
    `deleted ${report.ref} on ${report.remote} (${report.url})\n${yellow(NOT_PURGED)}\npush --all and the turn-end push leave it deleted; git ckpt push ${optionWords('--session', argv.session)} sends it again\n`,
  );
}
