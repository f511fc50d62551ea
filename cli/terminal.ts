/**
 * Pager and colour, as git does them. Output pages only on a terminal, through
 * GIT_PAGER, git's core.pager, PAGER, else `less` with LESS=FRX; never into a
 * pipe or a file. Colour follows --color, git's color.ui and NO_COLOR, and is
 * on only when the output ends on a terminal. So is cutting lines to the
 * terminal's width (`log`): COLUMNS when set, as git's term_columns reads it,
 * else the terminal's own width; into a pipe or a file, lines are never cut,
 * whatever COLUMNS says. A pipe closed early (`| head`) ends the command quietly.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { git } from '../lib/git/runner.js';
import { setColor, setWidth } from './format.js';

export type ColorMode = 'auto' | 'always' | 'never';

/**
 * A git config value for the pager and colour, or undefined (no value, no git,
 * a config git cannot read). Read through the runner like every git call: the
 * user's config, `git -c` settings and the repository at `cwd` (git's own
 * discovery, as git's pager reads them); never the system config, and never a
 * repository an inherited GIT_DIR names (we may run inside someone's git hook).
 * @public (tests use it)
 */
export async function outputConfig(key: 'color.ui' | 'core.pager', cwd: string): Promise<string | undefined> {
  try {
    const r = await git({
      verb: 'config',
      args: ['--get', { literal: key }],
      cwd,
      userConfig: true,
      commandLineConfig: true,
      okCodes: [1],
    });
    const value = r.code === 0 ? r.stdout.toString('utf8').trim() : '';
    return value === '' ? undefined : value;
  } catch {
    return undefined;
  }
}

/** Pure: git's order for the pager command; undefined or 'cat' means no pager. @public (tests use it) */
export function pagerCommand(env: NodeJS.ProcessEnv, corePager: string | undefined): string | undefined {
  const chosen = env.GIT_PAGER ?? corePager ?? env.PAGER ?? 'less';
  return chosen === '' || chosen === 'cat' ? undefined : chosen;
}

/** Pure: whether to colour, from the flag, git's color.ui, NO_COLOR and where the output goes. @public (tests use it) */
export function colorOn(mode: ColorMode | undefined, colorUi: string | undefined, env: NodeJS.ProcessEnv, toTerminal: boolean): boolean {
  if (mode === 'always') return true;
  if (mode === 'never') return false;
  if (env.NO_COLOR) return false;
  const ui = colorUi?.toLowerCase();
  if (ui === 'never' || ui === 'false' || ui === 'off' || ui === 'no') return false;
  if (ui === 'always') return true;
  return toTerminal;
}

/**
 * Pure: the width to cut lines to, or undefined (never cut): only when the output ends on a terminal, where
 * COLUMNS (a positive whole number) wins over the terminal's own width, as in git; 80 when neither says. @public (tests use it)
 */
export function terminalWidth(env: NodeJS.ProcessEnv, ttyColumns: number | undefined, toTerminal: boolean): number | undefined {
  if (!toTerminal) return undefined;
  const columns = /^[1-9][0-9]{0,5}$/.test(env.COLUMNS ?? '') ? Number(env.COLUMNS) : ttyColumns;
  return columns && columns > 0 ? columns : 80;
}

let pager: ChildProcess | undefined;

/** End quietly when whoever reads our output stops reading (a pipe to head, a pager quit early). */
export function quietOnClosedPipe(): void {
  const quit = (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') process.exit(0);
    throw err;
  };
  process.stdout.on('error', quit);
}

/**
 * Set colour, and start the pager when asked to page (`page`: the command pages
 * by default or -p was given; never with --no-pager or off a terminal). Our
 * stdout then goes to the pager's stdin; `finishOutput` waits for it.
 */
export async function setUpOutput(options: { page: boolean; color?: ColorMode; cwd: string }): Promise<void> {
  const terminal = Boolean(process.stdout.isTTY);
  const paging = options.page && terminal;
  const wantsColorUi = options.color === undefined && terminal && !process.env.NO_COLOR;
  const wantsCorePager = paging && !process.env.GIT_PAGER;
  const [colorUi, corePager] = await Promise.all([
    wantsColorUi ? outputConfig('color.ui', options.cwd) : undefined,
    wantsCorePager ? outputConfig('core.pager', options.cwd) : undefined,
  ]);
  setColor(colorOn(options.color, colorUi, process.env, terminal));
  // Read before the pager takes our stdout: the pager shows lines on this same terminal.
  setWidth(terminalWidth(process.env, process.stdout.columns, terminal));
  if (!paging) return;
  const command = pagerCommand(process.env, corePager);
  if (!command) return;
  const env = { ...process.env, LESS: process.env.LESS ?? 'FRX', LV: process.env.LV ?? '-c' };
  const child = spawn('sh', ['-c', command], { stdio: ['pipe', 'inherit', 'inherit'], env });
  child.on('error', () => undefined);
  child.stdin!.on('error', () => process.exit(0));
  const write = child.stdin!.write.bind(child.stdin!) as typeof process.stdout.write;
  process.stdout.write = write;
  pager = child;
}

/** Wait for the pager (if any) to finish showing what was written. */
export async function finishOutput(): Promise<void> {
  const child = pager;
  if (!child) return;
  pager = undefined;
  await new Promise<void>((resolve) => {
    child.on('close', () => resolve());
    child.stdin!.end();
  });
}
