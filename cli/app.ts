/**
 * git-ckpt: the CLI. Each subcommand is one module in this folder; this file
 * registers them, sets up pager and colour, and maps errors to exit codes in one place:
 *   0 success, 1 an error (one `git-ckpt: …` line on stderr, or one JSON object
 *   under --json), 2 a usage error, 3 a bug in git-ckpt.
 */
import yargs, { type Argv, type CommandModule } from 'yargs';
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
import type { GlobalArgs } from './common.js';
import { completionCommand } from './completion.js';
import { DESCRIPTION, referenceText } from './reference.js';
import { finishOutput, quietOnClosedPipe, setUpOutput, type ColorMode } from './terminal.js';
import { printVersion, versionCommand } from './version.js';

/** Exit codes: 1 for an error the user can act on, 2 for usage, 3 for a bug in git-ckpt itself. */
const EXIT_INTERNAL = 3;

/** Whether the command line asks for JSON: errors then come as one JSON object too. */
let jsonErrors = false;

function fail(message: string, exitCode: number, code = exitCode === 2 ? 'usage' : 'error'): never {
  const line = message.split('\n')[0]!;
  process.stderr.write(jsonErrors ? `${JSON.stringify({ error: { code, message: line } })}\n` : `git-ckpt: ${line}\n`);
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

/** Commands whose output pages on a terminal, as git's log, show and diff do. */
const PAGED_COMMANDS = new Set(['log', 'show', 'diff']);

const COMMANDS = [
  initCommand,
  snapshotCommand,
  logCommand,
  showCommand,
  diffCommand,
  statusCommand,
  restoreCommand,
  revertCommand,
  undoCommand,
  hookCommand,
  hooksCommand,
  gcCommand,
  fsckCommand,
  storesCommand,
  versionCommand,
  completionCommand,
];

/** Every command's name, in the order --help lists them. */
export const COMMAND_NAMES = COMMANDS.map((c) => String(c.command).split(' ')[0]!);

/** The yargs application for these arguments (the man page and completion build it too). */
export function buildCli(args: string[]): Argv<GlobalArgs> {
  let cli = yargs(args)
    .scriptName('git ckpt')
    // Messages (and so the smuggled-option check below) must not depend on LANG: git-ckpt speaks English.
    .locale('en')
    .usage(`$0 [-C <path>] [-p | --no-pager] [--color[=<when>]] <command> [<args>]\n\n${DESCRIPTION}`)
    .option('C', { type: 'string', describe: 'run as if started in <path> (repeatable, like git -C)', global: true, requiresArg: true })
    .option('color', { type: 'string', describe: 'colour: auto, always or never', global: true }) as unknown as Argv<GlobalArgs>;
  for (const command of COMMANDS) cli = cli.command(command as CommandModule<GlobalArgs, GlobalArgs>);
  return cli
    .strict()
    .parserConfiguration({ 'populate--': true })
    .help('help')
    .alias('help', 'h')
    .version(false)
    .epilogue(referenceText())
    .wrap(Math.min(100, process.stdout.columns || 100));
}

/** git's own options before the command: -C is yargs's; -p/--paginate and --no-pager are taken here. */
export function splitLeadingOptions(args: string[]): { paginate?: boolean; rest: string[] } {
  const rest = [...args];
  let paginate: boolean | undefined;
  for (let i = 0; i < rest.length; ) {
    const a = rest[i]!;
    if (a === '-p' || a === '--paginate') paginate = true;
    else if (a === '--no-pager') paginate = false;
    else if (a === '-C') {
      i += 2;
      continue;
    } else if (a.startsWith('-C') || a.startsWith('--color')) {
      i += 1;
      continue;
    } else break;
    rest.splice(i, 1);
  }
  return { paginate, rest };
}

async function main(): Promise<void> {
  quietOnClosedPipe();
  const { paginate, rest } = splitLeadingOptions(hideBin(process.argv));
  jsonErrors = rest.includes('--json');
  const command = rest.find((a, i) => !a.startsWith('-') && rest[i - 1] !== '-C');
  // A bare `git ckpt` prints the usage on stderr and exits 1, as git does; `help <command>` is `<command> --help`.
  if (command === undefined && !rest.some((a) => ['-h', '--help', '--version'].includes(a))) {
    process.stderr.write(`${await buildCli([]).getHelp()}\n`);
    process.exit(1);
  }
  if (rest.includes('--version') && (command === undefined || command === 'version')) return printVersion(rest.includes('--json'));
  const args = command === 'help' ? [...rest.filter((a) => a !== 'help'), '--help'] : rest;
  const colorArg = rest.find((a) => a.startsWith('--color'));
  const color = colorArg === undefined ? undefined : colorArg === '--color' ? 'always' : colorArg.slice('--color='.length);
  if (color !== undefined && !['auto', 'always', 'never'].includes(color))
    fail(`--color takes auto, always or never, not ${JSON.stringify(color)}`, 2);
  setUpOutput({
    page: paginate ?? (command !== undefined && PAGED_COMMANDS.has(command) && !rest.includes('--json')),
    color: color as ColorMode | undefined,
    cwd: process.cwd(),
  });
  const cli = buildCli(args).fail((message, error) => {
    if (error) throw error;
    const smuggled = smuggledOption(message ?? '');
    if (smuggled) fail(`not a checkpoint address: ${JSON.stringify(smuggled)} (looks like an option)`, 1, 'bad-address');
    fail(message ?? 'bad usage', 2);
  });
  await cli.parseAsync();
  await finishOutput();
}

/** Run the CLI on process.argv (cli/main.ts calls this; importing the module runs nothing). */
export function runCli(): void {
  main().catch(onError);
}

async function onError(caught: unknown): Promise<void> {
  await finishOutput();
  const err = asCkptError(caught);
  if (err.code !== 'internal') fail(err.message, err.code === 'usage' ? 2 : 1, err.code);
  // A bug: say so, and show the stack under GIT_CKPT_TRACE.
  const cause = err.cause instanceof Error ? err.cause : err;
  if (process.env.GIT_CKPT_TRACE && cause.stack) process.stderr.write(`${cause.stack}\n`);
  fail(`internal error: ${err.message}`, EXIT_INTERNAL, 'internal');
}
