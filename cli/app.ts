/**
 * git-ckpt: the CLI. Each subcommand is one module in this folder; this file
 * registers them and maps errors to exit codes in one place:
 *   0 success, 1 an error (one `git-ckpt: …` line on stderr), 2 a usage error.
 */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { asCkptError } from '../lib/errors.js';
import { diffCommand } from './diff.js';
import { initCommand } from './init.js';
import { fsckCommand } from './fsck.js';
import { gcCommand } from './gc.js';
import { hookCommand } from './hook.js';
import { storesCommand } from './stores.js';
import { hooksCommand } from './hooks.js';
import { logCommand } from './log.js';
import { restoreCommand } from './restore.js';
import { revertCommand } from './revert.js';
import { undoCommand } from './undo.js';
import { showCommand } from './show.js';
import { snapshotCommand } from './snapshot.js';
import { statusCommand } from './status.js';

function fail(message: string, exitCode: number): never {
  process.stderr.write(`git-ckpt: ${message.split('\n')[0]}\n`);
  process.exit(exitCode);
}

/** Commands whose positionals are checkpoint addresses. */
const ADDRESS_COMMANDS = new Set(['show', 'diff', 'restore', 'revert']);

/**
 * An unknown option given to a command that takes checkpoint addresses is an
 * option smuggled in where an id belongs (`show --output=/tmp/x`): that is a bad
 * address (exit 1), not a usage slip.
 */
function smuggledOption(message: string): string | undefined {
  const unknown = /^Unknown arguments?: ([^,\s]+)/.exec(message);
  if (!unknown) return undefined;
  const args = hideBin(process.argv);
  const command = args.find((a) => !a.startsWith('-'));
  if (!command || !ADDRESS_COMMANDS.has(command)) return undefined;
  const name = unknown[1]!.replace(/^-+/, '');
  // `-Ooops` reaches yargs as the short flags O, o, p, s.
  return args.find((a) => a.replace(/^-+/, '').split('=')[0] === name || (/^-[^-]/.test(a) && a.slice(1).startsWith(name)));
}

async function main(): Promise<void> {
  const cli = yargs(hideBin(process.argv))
    .scriptName('git ckpt')
    // Messages (and so the smuggled-option check below) must not depend on LANG: git-ckpt speaks English.
    .locale('en')
    .usage('$0 <command> [options]')
    .option('C', { type: 'string', describe: 'run as if started in <path> (repeatable, like git -C)', global: true, requiresArg: true })
    .command(initCommand)
    .command(snapshotCommand)
    .command(logCommand)
    .command(showCommand)
    .command(diffCommand)
    .command(statusCommand)
    .command(restoreCommand)
    .command(revertCommand)
    .command(undoCommand)
    .command(hookCommand)
    .command(hooksCommand)
    .command(gcCommand)
    .command(fsckCommand)
    .command(storesCommand)
    .demandCommand(1, 'name a command (see git ckpt --help)')
    .strict()
    .parserConfiguration({ 'populate--': true })
    .help()
    .version()
    .wrap(Math.min(100, process.stdout.columns || 100))
    .fail((message, error) => {
      if (error) throw error;
      const smuggled = smuggledOption(message ?? '');
      if (smuggled) fail(`not a checkpoint address: ${JSON.stringify(smuggled)} (looks like an option)`, 1);
      fail(message ?? 'bad usage', 2);
    });
  await cli.parseAsync();
}

/** Exit codes: 1 for an error the user can act on, 2 for usage, 3 for a bug in git-ckpt itself. */
export const EXIT_INTERNAL = 3;

main().catch((caught: unknown) => {
  const err = asCkptError(caught);
  if (err.code !== 'internal') fail(err.message, err.code === 'usage' ? 2 : 1);
  // A bug: say so, and show the stack under GIT_CKPT_TRACE.
  const cause = err.cause instanceof Error ? err.cause : err;
  if (process.env.GIT_CKPT_TRACE && cause.stack) process.stderr.write(`${cause.stack}\n`);
  fail(`internal error: ${err.message}`, EXIT_INTERNAL);
});
