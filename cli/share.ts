/** git ckpt share [init]: say where checkpoints go (nothing travels before this), or show it. */
import type { Command } from 'commander';
import { CkptError } from '../lib/model/errors.js';
import { argsOf, openWorkspace, printJson, type GlobalArgs } from './common.js';
import { dim, yellow } from './format.js';

interface ShareArgs extends GlobalArgs {
  action?: string;
  remote?: string;
  ws?: string;
  yes?: boolean;
  json?: boolean;
}

export function define(command: Command): Command {
  return command
    .description('say where checkpoints go (share init), or show where they go')
    .argument('[action]', 'init, or nothing to show the settings')
    .option('--remote <name|url>', 'a remote of your repository, or a URL (a private repository of its own is best)')
    .option('--ws <id>', 'join this shared workspace id (12 hex digits, as the remote names it)')
    .option('--yes', "share to your origin's URL anyway")
    .option('--json', 'print one JSON object')
    .action((...params) => runShare(argsOf<ShareArgs>(params)));
}

async function runShare(argv: ShareArgs): Promise<void> {
  const ws = openWorkspace(argv);
  if (argv.action === undefined) {
    const settings = await ws.shareSettings();
    if (argv.json) return printJson(settings ?? { shared: false });
    if (!settings) {
      process.stdout.write('sharing is off: git ckpt share init --remote <name|url> says where checkpoints go\n');
      return;
    }
    const out = [`workspace ${settings.ws}, writer ${settings.writer} (made on ${settings.host})`];
    for (const [name, remote] of Object.entries(settings.remotes))
      out.push(`${name === settings.default ? '*' : ' '} ${name}  ${remote.url}${remote.sameAsOrigin ? dim('  (your origin)') : ''}`);
    for (const [name, refs] of Object.entries(settings.pushed))
      out.push(dim(`  ${Object.keys(refs).length} session ref(s) pushed to ${name}`));
    process.stdout.write(`${out.join('\n')}\n`);
    return;
  }
  if (argv.action !== 'init')
    throw new CkptError('usage', `unknown share action ${JSON.stringify(argv.action).slice(0, 40)} (expected init)`);
  const report = await ws.shareInit({ remote: argv.remote, ws: argv.ws, yes: argv.yes });
  if (argv.json) return printJson(report);
  const out = [
    `checkpoints go to ${report.url} (git-ckpt's remote ${report.remote}, not one of your repository's) when you run git ckpt push; nothing is pushed before that`,
    `workspace ${report.ws}${report.joined ? ' (already on the remote: its sessions are what git ckpt fetch brings)' : ' (new)'}, writer ${report.writer}`,
  ];
  if (report.others.length)
    out.push(dim(`the remote also holds workspace${report.others.length === 1 ? '' : 's'} ${report.others.join(', ')}`));
  if (report.sameAsOrigin)
    out.push(
      yellow('warning: this is your origin: everyone who can read it can fetch the checkpoints, and deleting a ref does not purge it'),
    );
  process.stdout.write(`${out.join('\n')}\n`);
}
