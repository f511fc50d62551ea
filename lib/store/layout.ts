/**
 * Where git-ckpt's own files are: the one module that knows the package layout.
 * The library starts the CLI (background gc) and points agents at the hook
 * entry script; both find them here, from the package root (the folder whose
 * package.json names git-ckpt), wherever this module was bundled to.
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let root: string | undefined;

/** The installed package's root folder. */
export function packageRoot(): string {
  if (root) return root;
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'git-ckpt') return (root = dir);
      } catch {
        /* not ours: keep looking */
      }
    }
    if (path.dirname(dir) === dir) throw new Error(`git-ckpt's package root not found above ${fileURLToPath(import.meta.url)}`);
  }
}

/** The installed package's version. */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}

/** The CLI's entry point (`git-ckpt`). */
export function cliEntry(): string {
  return path.join(packageRoot(), 'dist', 'bin', 'main.js');
}

/** The completion table (commands and their options) the build writes. */
export function completionTable(): string {
  return path.join(packageRoot(), 'dist', 'completion.json');
}

/** The MCP server's entry script the agents start. */
export function mcpEntryScript(): string {
  return path.join(packageRoot(), 'hooks', 'git-ckpt-mcp');
}

/** The hook entry script the agents run. */
export function hookEntryScript(): string {
  return path.join(packageRoot(), 'hooks', 'git-ckpt-hook');
}

/**
 * The name the hook entry script is installed under on PATH (package.json's `bin`), when the one PATH
 * finds is this package's own: a command a shared project file can hold for every teammate who
 * installed git-ckpt, where an absolute path would name one person's checkout. Undefined otherwise
 * (run from a checkout that was never installed, or another copy first on PATH).
 */
export function hookCommandOnPath(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return entryCommandOnPath('git-ckpt-hook', hookEntryScript(), env);
}

/** The same for the MCP server's entry script (`git-ckpt-mcp`). */
export function mcpCommandOnPath(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return entryCommandOnPath('git-ckpt-mcp', mcpEntryScript(), env);
}

function entryCommandOnPath(name: string, script: string, env: NodeJS.ProcessEnv): string | undefined {
  const own = realpathOr(script);
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir || !path.isAbsolute(dir)) continue;
    const found = realpathOr(path.join(dir, name));
    if (found !== undefined) return found === own ? name : undefined;
  }
  return undefined;
}

function realpathOr(file: string): string | undefined {
  try {
    return realpathSync(file);
  } catch {
    return undefined;
  }
}
