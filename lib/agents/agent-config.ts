/**
 * The agents' own config files, as the hook and MCP installers read and write
 * them: a file that cannot be parsed is refused (`config`, left untouched); a
 * write is atomic, keeps a symlinked file's link and its mode, and first copies
 * the old content under the store root's backups/.
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { CkptError } from '../model/errors.js';
import { storeRoot, writeFileAtomic } from '../store/store.js';

export type { Scope } from './adapter.js';

/** A parsed JSON config. */
export type Json = Record<string, unknown>;

export function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A config file's text (undefined when absent); a `config` error when it cannot be read. */
export function readConfigText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CkptError('config', `cannot read ${file}: ${(err as Error).message}; left untouched`);
  }
}

/** A JSON config file as an object (undefined when absent); a `config` error when it cannot be used. */
export function readConfig(file: string): Json | undefined {
  const text = readConfigText(file);
  if (text === undefined) return undefined;
  if (text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new CkptError('config', `cannot parse ${file} (${(err as Error).message.split('\n')[0]}); left untouched`);
  }
  if (!isObject(parsed)) throw new CkptError('config', `${file} does not hold a JSON object; left untouched`);
  return parsed;
}

/**
 * Pure: where the backup of a config file goes: under the store root, never
 * next to the file, where it would show in the user's `git status` and in the
 * first checkpoint. One per change, named by time and the file's path.
 */
function backupPath(file: string, root: string, now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  const name = path
    .resolve(file)
    .replace(/^[A-Za-z]:/, '')
    .split(/[\\/]+/)
    .filter(Boolean)
    .join('_')
    .replace(/[^A-Za-z0-9._-]/g, '_');
  return path.join(root, 'backups', `${stamp}-${name.slice(-150)}`);
}

/** A copy of `file` under the store root's backups/, before it is changed. */
export function backUp(file: string, env: NodeJS.ProcessEnv): string {
  let backup = backupPath(file, storeRoot(env));
  mkdirSync(path.dirname(backup), { recursive: true, mode: 0o700 });
  for (let n = 2; existsSync(backup); n++) backup = `${backupPath(file, storeRoot(env))}.${n}`;
  copyFileSync(file, backup);
  return backup;
}

/** Write a JSON config atomically, backing up the old one first; returns the backup. */
export function writeConfig(file: string, config: Json, hadFile: boolean, env: NodeJS.ProcessEnv): string | undefined {
  return writeConfigText(file, `${JSON.stringify(config, null, 2)}\n`, hadFile, env);
}

/**
 * Write an agent's config file atomically, after a backup. A symlinked config
 * (a dotfiles repository) is written where the link points, and the file keeps
 * its mode: the link and the permissions are the user's.
 */
export function writeConfigText(file: string, text: string, hadFile: boolean, env: NodeJS.ProcessEnv): string | undefined {
  const target = hadFile ? realpathSync(file) : file;
  mkdirSync(path.dirname(target), { recursive: true });
  const backup = hadFile ? backUp(file, env) : undefined;
  const mode = hadFile ? statSync(target).mode & 0o777 : undefined;
  writeFileAtomic(target, text);
  if (mode !== undefined) chmodSync(target, mode);
  return backup;
}
