/** What every command module shares: opening the workspace named by -C, the parsed arguments, output helpers. */
import path from 'node:path';
import type { Command } from 'commander';
import { userPath } from '../lib/model/paths.js';
import { Workspace } from '../lib/workspace.js';
import { CkptError } from '../lib/model/errors.js';
import { HOOK_AGENTS, type AgentName } from '../lib/agents/registry.js';

export interface GlobalArgs {
  C?: string[];
  /** What followed `--` on the command line: paths, or (show) an address that looks like an option. */
  '--'?: string[];
}

let afterDashDash: string[] = [];

/** The arguments after the first `--`, split off before parsing as git does (app.ts sets them). */
export function setAfterDashDash(args: string[]): void {
  afterDashDash = args;
}

/**
 * A command's parsed arguments, from what commander passes its action: the
 * positionals (by their declared names), then the options; the global options
 * (-C) and what followed `--` are added.
 */
export function argsOf<T extends GlobalArgs>(params: unknown[]): T {
  const command = params.at(-1) as Command;
  const positionals = Object.fromEntries(command.registeredArguments.map((a, i) => [a.name(), params[i]]));
  return { ...command.optsWithGlobals(), ...positionals, '--': afterDashDash } as T;
}

/** Collects a repeatable option's values (`--agent a --agent b`, `-C a -C b`). */
export function repeatable(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** The directory named by git-style -C options (each relative to the one before). */
export function startDir(argv: GlobalArgs): string {
  let dir = process.cwd();
  for (const c of argv.C ?? []) dir = path.resolve(dir, c);
  return dir;
}

export function openWorkspace(argv: GlobalArgs): Workspace {
  return Workspace.open(startDir(argv));
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function warn(lines: string[]): void {
  for (const line of lines) process.stderr.write(`git-ckpt: warning: ${line}\n`);
}

/** A positional integer option (turn, step, -n). */
export function nonNegativeInt(name: string, value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new CkptError('usage', `--${name} takes a whole number, not ${JSON.stringify(value)}`);
  return n;
}

/** User paths (relative to the current directory, as git takes them) as workspace paths, through the one path gate. */
export function workspacePaths(ws: Workspace, argv: GlobalArgs, paths: string[]): string[] {
  const base = startDir(argv);
  return [...new Set(paths.map((p) => userPath(ws.root, base, p)))];
}

/** The agents named by --agent (repeatable, comma-separated; none or `all` is every one). */
export function agentsNamed<A extends AgentName = AgentName>(
  named: string[] | undefined,
  known: readonly A[] = HOOK_AGENTS as readonly A[],
): A[] {
  const list = (named ?? []).flatMap((a) => a.split(','));
  if (list.length === 0 || list.includes('all')) return [...known];
  for (const a of list)
    if (!(known as readonly string[]).includes(a))
      throw new CkptError('usage', `unknown agent ${JSON.stringify(a)} (one of ${known.join(', ')}, or all)`);
  return [...new Set(list)] as A[];
}
