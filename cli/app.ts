/**
 * git-ckpt: the CLI. Each subcommand is one module in this folder; this file
 * registers them, sets up pager and colour, and maps errors to exit codes in one place:
 *   0 success, 1 an error (one `git-ckpt: …` line on stderr, or one JSON object
 *   under --json), 2 a usage error, 3 a bug in git-ckpt.
 */
import yargs, { type Argv, type CommandModule } from 'yargs';
import { hideBin } from 'yargs/helpers';
import { asCkptError } from '../lib/errors.js';
import type { GlobalArgs } from './common.js';
import { ADDRESS_COMMANDS, DESCRIPTION, referenceText } from './reference.js';
import { finishOutput, quietOnClosedPipe, setUpOutput, type ColorMode } from './terminal.js';

/** Exit codes: 1 for an error the user can act on, 2 for usage, 3 for a bug in git-ckpt itself. */
const EXIT_INTERNAL = 3;

/** Whether the command line asks for JSON: errors then come as one JSON object too. */
let jsonErrors = false;

function fail(message: string, exitCode: number, code = exitCode === 2 ? 'usage' : 'error'): never {
  const line = message.split('\n')[0]!;
  process.stderr.write(jsonErrors ? `${JSON.stringify({ error: { code, message: line } })}\n` : `git-ckpt: ${line}\n`);
  process.exit(exitCode);
}

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

type AnyCommand = CommandModule<GlobalArgs, GlobalArgs>;

/**
 * Every command, loaded on demand: a run imports and configures only the
 * command it runs (yargs's set-up of all of them cost more than the command
 * itself); help and the man page load them all. The order is --help's.
 */
const COMMANDS: Record<string, () => Promise<AnyCommand>> = {
  init: async () => (await import('./init.js')).initCommand as AnyCommand,
  snapshot: async () => (await import('./snapshot.js')).snapshotCommand as AnyCommand,
  log: async () => (await import('./log.js')).logCommand as AnyCommand,
  show: async () => (await import('./show.js')).showCommand as AnyCommand,
  diff: async () => (await import('./diff.js')).diffCommand as AnyCommand,
  status: async () => (await import('./status.js')).statusCommand as AnyCommand,
  restore: async () => (await import('./restore.js')).restoreCommand as AnyCommand,
  revert: async () => (await import('./revert.js')).revertCommand as AnyCommand,
  undo: async () => (await import('./undo.js')).undoCommand as AnyCommand,
  hook: async () => (await import('./hook.js')).hookCommand as AnyCommand,
  hooks: async () => (await import('./hooks.js')).hooksCommand as AnyCommand,
  gc: async () => (await import('./gc.js')).gcCommand as AnyCommand,
  fsck: async () => (await import('./fsck.js')).fsckCommand as AnyCommand,
  stores: async () => (await import('./stores.js')).storesCommand as AnyCommand,
  version: async () => (await import('./version.js')).versionCommand as AnyCommand,
  completion: async () => (await import('./completion.js')).completionCommand as AnyCommand,
};

/** Every command's name, in the order --help lists them. */
export const COMMAND_NAMES = Object.keys(COMMANDS);

/** The yargs application for these arguments (the man page and completion build it too). */
export async function buildCli(args: string[]): Promise<Argv<GlobalArgs>> {
  const named = args.find((a, i) => !a.startsWith('-') && args[i - 1] !== '-C');
  const wanted = named !== undefined && named in COMMANDS && !args.includes('--help') && !args.includes('-h') ? [named] : COMMAND_NAMES;
  const modules = await Promise.all(wanted.map((name) => COMMANDS[name]!()));
  let cli = yargs(args)
    .scriptName('git ckpt')
    // Messages (and so the smuggled-option check below) must not depend on LANG: git-ckpt speaks English.
    .locale('en')
    .usage(`$0 [-C <path>] [-p | --no-pager] [--color[=<when>]] <command> [<args>]\n\n${DESCRIPTION}`)
    .option('C', { type: 'string', describe: 'run as if started in <path> (repeatable, like git -C)', global: true, requiresArg: true })
    .option('color', { type: 'string', describe: 'colour: auto, always or never', global: true }) as unknown as Argv<GlobalArgs>;
  for (const command of modules) cli = cli.command(command);
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
    process.stderr.write(`${await (await buildCli([])).getHelp()}\n`);
    process.exit(1);
  }
  if (rest.includes('--version') && (command === undefined || command === 'version'))
    return (await import('./version.js')).printVersion(rest.includes('--json'));
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
  const cli = (await buildCli(args)).fail((message, error) => {
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
