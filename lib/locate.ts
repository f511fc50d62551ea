/**
 * Workspace discovery: the git toplevel when the directory is inside a work tree,
 * otherwise the directory itself. Discovery walks up looking for `.git` the way
 * git does, in-process, so that every command saves a process start.
 */
import { existsSync, lstatSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { CkptError } from './errors.js';

export interface WorkspaceLocation {
  /** Real (symlink-resolved) absolute path of the workspace root. */
  root: string;
  /** The user's git directory when the workspace is a git work tree (never written to). */
  userGitDir?: string;
  /** The user's common git directory (differs from userGitDir in linked worktrees). */
  userCommonDir?: string;
}

function readGitFile(dotGit: string): string | undefined {
  try {
    const text = readFileSync(dotGit, 'utf8');
    const match = /^gitdir:\s*(.+?)\s*$/m.exec(text);
    if (!match) return undefined;
    return path.resolve(path.dirname(dotGit), match[1]!);
  } catch {
    return undefined;
  }
}

/** Returns the git dir that `<dir>/.git` designates, if it is a repository marker. */
function gitDirAt(dir: string): string | undefined {
  const dotGit = path.join(dir, '.git');
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(dotGit);
  } catch {
    return undefined;
  }
  if (st.isDirectory()) return existsSync(path.join(dotGit, 'HEAD')) ? dotGit : undefined;
  if (st.isFile()) return readGitFile(dotGit);
  return undefined;
}

function commonDirOf(gitDir: string): string {
  try {
    const rel = readFileSync(path.join(gitDir, 'commondir'), 'utf8').trim();
    if (rel) return path.resolve(gitDir, rel);
  } catch {
    /* not a linked worktree */
  }
  return gitDir;
}

export function locateWorkspace(startDir: string): WorkspaceLocation {
  let real: string;
  try {
    real = realpathSync(path.resolve(startDir));
  } catch {
    throw new CkptError('bad-workspace', `cannot open workspace: ${startDir}: no such directory`);
  }
  if (!statSync(real).isDirectory()) {
    throw new CkptError('bad-workspace', `not a directory: ${startDir}`);
  }
  if (real.split(path.sep).includes('.git')) {
    throw new CkptError('bad-workspace', `refusing to run inside a git directory: ${real}`);
  }
  let root = real;
  let userGitDir: string | undefined;
  for (let dir = real; ; ) {
    const found = gitDirAt(dir);
    if (found) {
      root = dir;
      userGitDir = found;
      break;
    }
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  // A dotfiles repository in $HOME must not swallow every project below it.
  if (userGitDir && root === homeDir() && real !== root) {
    root = real;
    userGitDir = undefined;
  }
  refuseUnsafeRoot(root);
  return userGitDir ? { root, userGitDir, userCommonDir: commonDirOf(userGitDir) } : { root };
}

function homeDir(): string {
  try {
    return realpathSync(homedir());
  } catch {
    return homedir();
  }
}

function refuseUnsafeRoot(root: string): void {
  if (path.dirname(root) === root) {
    throw new CkptError('bad-workspace', `refusing to use the filesystem root as a workspace: ${root}`);
  }
  if (root === homeDir()) {
    throw new CkptError(
      'bad-workspace',
      `refusing to use your home directory as a workspace: ${root} (run git ckpt inside a project directory)`,
    );
  }
}
