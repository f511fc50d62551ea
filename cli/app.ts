/**
 * git-ckpt: the CLI. Each subcommand is one module in this folder; this file
 * registers them, sets up pager and colour, and maps errors to exit codes in one place:
 *   0 success, 1 an error (one `git-ckpt: …` line on stderr, or one JSON object
 *   under --json), 2 a usage error, 3 a bug in git-ckpt.
 */
import { Command, CommanderError, Help } from 'commander';
import { asCkptError } from '../lib/model/errors.js';
import { repeatable, setAfterDashDash } from './common.js';
import { ADDRESS_COMMANDS, DESCRIPTION, referenceText } from './reference.js';
import { finishOutput, quietOnClosedPipe, setUpOutput, type ColorMode } from './terminal.js';

/** Exit codes: 1 for an error the user can act on, 2 for usage, 3 for a bug in git-ckpt itself. */
const EXIT_INTERNAL = 3;

/** Whether the command line asks for JSON: errors then come as one JSON object too. */
let jsonErrors = false;

function fail(message: string, exitCode: number, code = exitCode === 2 ? 'usage' : 'error'): never {
  // One line: commander's two-line errors ("unknown command 'lgo'", then "(Did you mean log?)") are joined.
  const line = message
    .split('\n')
    .map((part) => part.trim())
    .filter(Boolean)
    .join(' ')
    .replace('(Did you mean', '(did you mean');
  process.stderr.write(jsonErrors ? `${JSON.stringify({ error: { code, message: line } })}\n` : `git-ckpt: ${line}\n`);
  process.exit(exitCode);
}

/** Commands that take what follows `--` (paths, or for show an address); the others refuse it rather than ignore it. */
const DASH_DASH_COMMANDS = new Set(['diff', 'restore', 'show', 'hook']);

/** --color's values; `--color <when>` (with a space) is read as git reads `--color=<when>`. */
const COLOR_VALUES = new Set(['auto', 'always', 'never']);

/** Commands whose output pages on a terminal, as git's log, show and diff do. */
const PAGED_COMMANDS = new Set(['log', 'show', 'diff']);

/** A command module's definition: it describes its arguments and options on the command it is given, and its action. */
type Define = (command: Command) => Command;

/**
 * Every command, loaded on demand: a run imports and defines only the command
 * it runs; help and the man page load them all. The order is --help's.
 */
const COMMANDS: Record<string, () => Promise<Define>> = {
  init: async () => (await import('./init.js')).define,
  snapshot: async () => (await import('./snapshot.js')).define,
  log: async () => (await import('./log.js')).define,
  show: async () => (await import('./show.js')).define,
  diff: async () => (await import('./diff.js')).define,
  status: async () => (await import('./status.js')).define,
  restore: async () => (await import('./restore.js')).define,
  revert: async () => (await import('./revert.js')).define,
  undo: async () => (await import('./undo.js')).define,
  resume: async () => (await import('./resume.js')).define,
  hook: async () => (await import('./hook.js')).define,
  hooks: async () => (await import('./hooks.js')).define,
  mcp: async () => (await import('./mcp.js')).define,
  ui: async () => (await import('./ui.js')).define,
  gc: async () => (await import('./gc.js')).define,
  forget: async () => (await import('./forget.js')).define,
  share: async () => (await import('./share.js')).define,
  push: async () => (await import('./push.js')).define,
  fetch: async () => (await import('./fetch.js')).define,
  bundle: async () => (await import('./bundle.js')).define,
  unpush: async () => (await import('./unpush.js')).define,
  fsck: async () => (await import('./fsck.js')).define,
  stores: async () => (await import('./stores.js')).define,
  daemon: async () => (await import('./daemon.js')).define,
  watch: async () => (await import('./watch.js')).define,
  version: async () => (await import('./version.js')).define,
  completion: async () => (await import('./completion.js')).define,
};

/** Every command's name, in the order --help lists them. */
export const COMMAND_NAMES = Object.keys(COMMANDS);

/**
 * The command-line application with the commands `wanted` defined (all of them
 * by default). Errors are thrown as CommanderError, never printed or exited on
 * here: main() turns them into git-ckpt's one-line errors and exit codes.
 */
async function buildProgram(wanted: string[] = COMMAND_NAMES, helpWidth = Math.min(100, process.stdout.columns || 100)): Promise<Command> {
  const defines = await Promise.all(wanted.map((name) => COMMANDS[name]!()));
  const program = new Command('git ckpt')
    .usage('[-C <path>] [-p | --no-pager] [--color[=<when>]] <command> [<args>]')
    .description(DESCRIPTION)
    .option('-C <path>', 'run as if started in <path> (repeatable, like git -C)', repeatable)
    .option('--color [when]', 'colour: auto, always or never')
    .helpCommand(false)
    .exitOverride()
    .configureOutput({ writeErr: () => undefined })
    .configureHelp({
      helpWidth,
      // git's form: `usage: git ckpt …` first.
      formatHelp: (command, helper) => Help.prototype.formatHelp.call(helper, command, helper).replace(/^Usage:/, 'usage:'),
    })
    .addHelpText('after', `\n${referenceText()}`);
  for (const [i, define] of defines.entries()) define(program.command(wanted[i]!));
  return program;
}

/** What `git ckpt <args>` prints for help (the man page generator uses it); `args` names a command or none. */
export async function helpText(command: string | undefined, width: number): Promise<string> {
  const program = await buildProgram(command ? [command] : COMMAND_NAMES, width);
  return (command ? program.commands[0]! : program).helpInformation();
}

/**
 * An unknown option given to a command that takes checkpoint addresses is an
 * option smuggled in where an id belongs (`show --output=/tmp/x`): that is a bad
 * address (exit 1), not a usage slip. Which argument it was comes from the
 * command's own option table, not from the parser's message.
 */
function smuggledOption(program: Command, command: string | undefined, args: string[]): string | undefined {
  const defined = program.commands.find((c) => c.name() === command);
  if (!defined || !ADDRESS_COMMANDS.has(command!)) return undefined;
  const known = new Set(['--help', '-h']);
  for (const o of [...program.options, ...defined.options]) for (const flag of [o.long, o.short]) if (flag) known.add(flag);
  return args.find((a) => a.startsWith('-') && a !== '-' && !known.has(a.split('=')[0]!));
}

/** git's own options before the command: -p/--paginate and --no-pager are taken here; -C and --color are left in place (-C is each command's option, --color is read in main). */
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
  const all = process.argv.slice(2);
  // What follows `--` is never an option (paths, or an address that looks like one); it is split off before parsing.
  const dashDash = all.indexOf('--');
  const { paginate, rest } = splitLeadingOptions(dashDash < 0 ? all : all.slice(0, dashDash));
  setAfterDashDash(dashDash < 0 ? [] : all.slice(dashDash + 1));
  jsonErrors = rest.includes('--json');
  const isValue = (a: string, i: number) => rest[i - 1] === '-C' || (rest[i - 1] === '--color' && COLOR_VALUES.has(a));
  const command = rest.find((a, i) => !a.startsWith('-') && !isValue(a, i));
  // A bare `git ckpt` prints the usage on stderr and exits 1, as git does; `help <command>` is `<command> --help`.
  if (command === undefined && !rest.some((a) => ['-h', '--help', '--version'].includes(a))) {
    process.stderr.write((await buildProgram()).helpInformation());
    process.exit(1);
  }
  if (rest.includes('--version') && (command === undefined || command === 'version'))
    return (await import('./version.js')).printVersion(rest.includes('--json'));
  const args = command === 'help' ? [...rest.filter((a) => a !== 'help'), '--help'] : rest;
  const named = args.find((a, i) => !a.startsWith('-') && args[i - 1] !== '-C' && !(args[i - 1] === '--color' && COLOR_VALUES.has(a)));
  if (dashDash >= 0 && all.length > dashDash + 1 && named !== undefined && !DASH_DASH_COMMANDS.has(named))
    fail(`${named} takes no paths after --: ${JSON.stringify(all.slice(dashDash + 1).join(' ')).slice(0, 80)}`, 2);
  const colorAt = rest.findIndex((a) => a.startsWith('--color'));
  const colorArg = colorAt < 0 ? undefined : rest[colorAt]!;
  const spaced = colorArg === '--color' && COLOR_VALUES.has(rest[colorAt + 1] ?? '') ? rest[colorAt + 1] : undefined;
  const color = colorArg === undefined ? undefined : colorArg === '--color' ? (spaced ?? 'always') : colorArg.slice('--color='.length);
  if (color !== undefined && !['auto', 'always', 'never'].includes(color))
    fail(`--color takes auto, always or never, not ${JSON.stringify(color)}`, 2);
  await setUpOutput({
    page: paginate ?? (command !== undefined && PAGED_COMMANDS.has(command) && !rest.includes('--json')),
    color: color as ColorMode | undefined,
    cwd: process.cwd(),
  });
  const wantsHelp = args.includes('--help') || args.includes('-h');
  const program = await buildProgram(named !== undefined && named in COMMANDS && !wantsHelp ? [named] : COMMAND_NAMES);
  try {
    // --color is read above, as git reads it; commander would take the next word (a command) as its value.
    // Help about a command that does not exist is that command's error, not the overview with exit 0.
    const unknown = named !== undefined && !(named in COMMANDS);
    const forParser = args.filter(
      (a, i) =>
        !a.startsWith('--color') && !(args[i - 1] === '--color' && COLOR_VALUES.has(a)) && !(unknown && (a === '--help' || a === '-h')),
    );
    await program.parseAsync(forParser, { from: 'user' });
  } catch (caught) {
    if (!(caught instanceof CommanderError)) throw caught;
    if (caught.exitCode === 0) return finishOutput(); // help was printed
    const smuggled = caught.code === 'commander.unknownOption' ? smuggledOption(program, named, args) : undefined;
    if (smuggled) fail(`not a checkpoint address: ${JSON.stringify(smuggled)} (looks like an option)`, 1, 'bad-address');
    fail(caught.message.replace(/^error: /, ''), 2);
  }
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
