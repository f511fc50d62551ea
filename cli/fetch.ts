/** git ckpt fetch [<remote>]: other stores' sessions of this workspace, into this store; --list shows what the remote holds. */
import type { Command } from 'commander';
import { argsOf, openWorkspace, printJson, type GlobalArgs } from './common.js';
import { dim, shortId } from './format.js';
import { refSessionLabel } from './share-format.js';

interface FetchArgs extends GlobalArgs {
  remote?: string;
  list?: boolean;
  session?: string;
  json?: boolean;
}

export function define(command: Command): Command {
  return command
    .description("fetch other machines' sessions of this workspace from the remote: log, show, restore and revert then reach them")
    .argument('[remote]', 'a remote share init added (default: the last one)')
    .option('--list', 'list the sessions the remote holds; fetch nothing')
    .option('--session <id>', 'only this session')
    .option('--json', 'print one JSON object')
    .action((...params) => runFetch(argsOf<FetchArgs>(params)));
}

async function runFetch(argv: FetchArgs): Promise<void> {
  const report = await openWorkspace(argv).fetchCheckpoints({ remote: argv.remote, list: argv.list, session: argv.session });
  if (argv.json) {
    if (report.rejected.length || report.refused.length) process.exitCode = 1;
    return printJson(report);
  }
  const out: string[] = [];
  if (report.listed) {
    out.push(`${report.remote} (${report.url}) holds ${report.listed.length} session ref(s)`);
    for (const r of report.listed)
      out.push(
        `  ${refSessionLabel(r.session)}  writer ${r.writer}${r.mine ? ' (this store)' : ''}  ${shortId(r.tip)}${r.thisWorkspace ? '' : dim(`  workspace ${r.ws}`)}`,
      );
  } else {
    const added = report.fetched.reduce((n, f) => n + f.added, 0);
    out.push(`fetched ${added} new checkpoint(s) from ${report.remote} (${report.url})`);
    for (const f of report.fetched) out.push(`  ${refSessionLabel(f.session)}  writer ${f.writer}: ${f.added} new, ${f.total} in all`);
    if (added) out.push(dim('  git ckpt log shows them with where they came from; restore and revert take them like any checkpoint'));
  }
  for (const r of report.rejected) out.push(`  not moved (not a fast-forward): ${r}`);
  for (const r of report.refused) out.push(`  ${r}`);
  process.stdout.write(`${out.join('\n')}\n`);
  if (report.rejected.length || report.refused.length) process.exitCode = 1;
}
