/**
 * Pager and colour, as git does them. Output pages only on a terminal, through
 * GIT_PAGER, git's core.pager, PAGER, else `less` with LESS=FRX; never into a
 * pipe or a file. Colour follows --color, git's color.ui and NO_COLOR, and is
 * on only when the output ends on a terminal. A pipe closed early (`| head`)
 * ends the command quietly.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { setColor } from './format.js';

export type ColorMode = 'auto' | 'always' | 'never';

/** git's user configuration value, read-only, or undefined (no git, no value). */
function gitConfig(key: string, cwd: string): string | undefined {
  const r = spawnSync('git', ['config', '--get', key], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_OPTIONAL_LOCKS: '0' },
  });
  const value = r.status === 0 ? r.stdout.trim() : '';
  return value === '' ? undefined : value;
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
export function setUpOutput(options: { page: boolean; color?: ColorMode; cwd: string }): void {
  const terminal = Boolean(process.stdout.isTTY);
  const paging = options.page && terminal;
  const colorUi = options.color === undefined && terminal && !process.env.NO_COLOR ? gitConfig('color.ui', options.cwd) : undefined;
  setColor(colorOn(options.color, colorUi, process.env, terminal));
  if (!paging) return;
  const command = pagerCommand(process.env, process.env.GIT_PAGER ? undefined : gitConfig('core.pager', options.cwd));
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
