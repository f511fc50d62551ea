/**
 * The ignore rules in force at a capture that live outside the workspace's tree: the shadow
 * repository's exclude file (the user's `.git/info/exclude`, `.ckptignore`, the store roots) and
 * git's global excludes file. The `.gitignore` files are in each checkpoint's own tree; these are
 * not, so each checkpoint names them by id (`CheckpointRecord.rules`) and the store keeps each
 * version once (`<store>/ignore-rules/<id>`). A recovery command asks what a checkpoint's scan could
 * see with them (restore/unseen.ts): a path its rules ignored is unknown there, never absent.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { writeFileAtomic, type StorePaths } from '../store/store.js';

/** What one id stands for: the exclude file's text and the global excludes file's. */
export interface IgnoreRules {
  exclude: string;
  global: string;
}

/**
 * git's global excludes file as a capture reads it: the default one (git-ckpt's git calls read no
 * global config, so `core.excludesFile` is never set there): `$XDG_CONFIG_HOME/git/ignore`, or
 * `~/.config/git/ignore`.
 */
export function globalExcludesFile(env: NodeJS.ProcessEnv): string | undefined {
  const xdg = env.XDG_CONFIG_HOME;
  if (xdg && path.isAbsolute(xdg)) return path.join(xdg, 'git', 'ignore');
  return env.HOME ? path.join(env.HOME, '.config', 'git', 'ignore') : undefined;
}

function readOr(file: string | undefined, fallback: string): string {
  if (!file) return fallback;
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return fallback;
  }
}

/** Pure: the id of a set of rules (the store's file name for it). */
function rulesId(rules: IgnoreRules): string {
  return createHash('sha256')
    .update(JSON.stringify([rules.exclude, rules.global]))
    .digest('hex')
    .slice(0, 24);
}

/**
 * The id of the rules a capture runs with (`exclude`: the exclude file's text as synced), their
 * text kept in the store the first time (not by a capture that must leave the store as it is).
 */
export function saveIgnoreRules(paths: StorePaths, exclude: string, env: NodeJS.ProcessEnv, write: boolean): string {
  const rules = { exclude, global: readOr(globalExcludesFile(env), '') };
  const id = rulesId(rules);
  const file = path.join(paths.ignoreRules, id);
  if (write && !existsSync(file)) {
    try {
      mkdirSync(paths.ignoreRules, { recursive: true, mode: 0o700 });
      writeFileAtomic(file, JSON.stringify(rules));
    } catch {
      /* kept next time; meanwhile a recovery to this checkpoint treats its rules as unknown */
    }
  }
  return id;
}

/** The rules an id stands for, or undefined when the store does not have them (then they are unknown). */
export function readIgnoreRules(paths: StorePaths, id: string): IgnoreRules | undefined {
  try {
    const value = JSON.parse(readFileSync(path.join(paths.ignoreRules, id), 'utf8')) as Partial<IgnoreRules>;
    if (typeof value.exclude !== 'string' || typeof value.global !== 'string') return undefined;
    const rules = { exclude: value.exclude, global: value.global };
    return rulesId(rules) === id ? rules : undefined;
  } catch {
    return undefined;
  }
}

/** The rules a capture would run with now (for checkpoints recorded before checkpoints named theirs). */
export function currentIgnoreRules(paths: StorePaths, env: NodeJS.ProcessEnv): IgnoreRules {
  return { exclude: readOr(paths.excludeFile, ''), global: readOr(globalExcludesFile(env), '') };
}
