/** git ckpt push [<remote>]: sessions' export copies to the remote, fast-forward only; --dry-run says what would go. */
import { Option, type Command } from 'commander';
import type { PushReport } from '../lib/share/share.js';
import { argsOf, openWorkspace, printJson, type GlobalArgs } from './common.js';
import { exportLines } from './share-format.js';
import { dim, red } from './format.js';

interface PushArgs extends GlobalArgs {
  remote?: string;
  session?: string;
  all?: boolean;
  dryRun?: boolean;
  includeIgnored?: boolean;
  json?: boolean;
  auto?: boolean;
}

export function define(command: Command): Command {
  return command
    .description("push sessions' checkpoints to the remote share init named (fast-forward only, never forced)")
    .argument('[remote]', 'a remote share init added (default: the last one)')
    .option('--session <id>', 'this session (default: the latest one)')
    .option('--all', 'every session')
    .option('-n, --dry-run', 'say what would go, what is withheld and why; send nothing')
    .option('--include-ignored', 'also carry what your .gitignore ignores')
    .option('--json', 'print one JSON object')
    .addOption(new Option('--auto', 'started at a turn end by ckpt.share.auto=turn: quiet, problems to the hook log').hideHelp())
    .action((...params) => runPush(argsOf<PushArgs>(params)));
}

async function runPush(argv: PushArgs): Promise<void> {
  if (argv.auto && argv.session !== undefined) return openWorkspace(argv).autoPush(argv.session);
  const report = await openWorkspace(argv).push({
    remote: argv.remote,
    session: argv.session,
    all: argv.all,
    dryRun: argv.dryRun,
    includeIgnored: argv.includeIgnored,
  });
  if (argv.json) printJson(report);
  else process.stdout.write(`${pushLines(report).join('\n')}\n`);
  if (report.sessions.some((s) => s.status === 'rejected')) process.exitCode = 1;
}

function pushLines(report: PushReport): string[] {
  const out = [`${report.dryRun ? 'would push to' : 'pushed to'} ${report.remote} (${report.url})`];
  for (const s of report.sessions) {
    const status =
      s.status === 'rejected'
        ? red(`rejected: ${s.reason}`)
        : s.status === 'up-to-date'
          ? 'up to date'
          : s.status === 'nothing'
            ? 'nothing to send'
            : s.status === 'would-push'
              ? `${s.fresh} new`
              : `${s.fresh} new, now ${s.checkpoints}`;
    out.push(...exportLines(s, status));
  }
  if (report.chunks > 1) out.push(dim(`in ${report.chunks} pushes (the remote caps refs a push)`));
  return out;
}
